"""Rule-based *synthetic* paraphrases, for turbulence when a data set has none (MuSiQue).

The paper's formulations come from ARLtR (novice / intermediate / expert users, written by an
LLM). No LLM is reachable here, so we make two cheap, deterministic rewrites that keep the intent:
a polite wrapper (a wordier user) and a keyword query (a terse user who types search terms).
They are milder than ARLtR's, so turbulence measured on them is a lower bound, and every report
that uses them says they are synthetic.
"""

from __future__ import annotations

import re

_STOP = frozenset(
    {
        "a", "an", "the", "of", "in", "on", "at", "to", "for", "by", "with", "from", "and", "or",
        "is", "was", "were", "be", "been", "who", "what", "which", "when", "where", "whom", "whose",
        "how", "did", "does", "do", "has", "had", "have", "that", "this", "it", "its", "as", "are",
    }
)  # fmt: skip
_TOKEN = re.compile(r"[\w'’.-]+", re.UNICODE)


def _lower_first(text: str) -> str:
    # Keep proper nouns and acronyms ("NASA", "Rome") as they are; only lower a question word.
    first, _, rest = text.partition(" ")
    if first.istitle() and first.lower() in _STOP:
        first = first.lower()
    return f"{first} {rest}".strip()


def polite(question: str) -> str:
    """ "Who founded Rome?" -> "Could you tell me who founded Rome?"."""
    core = question.strip().rstrip("?").strip()
    return f"Could you tell me {_lower_first(core)}?"


def keywords(question: str) -> str:
    """ "Who founded Rome?" -> "founded Rome": the content words, in order."""
    words = [w.strip(".") for w in _TOKEN.findall(question)]
    kept = [w for w in words if w and w.lower() not in _STOP]
    return " ".join(kept) or question.strip()


def synthetic_paraphrases(question: str) -> list[str]:
    """Two rewrites of ``question``, distinct from it and from each other."""
    out: list[str] = []
    for candidate in (polite(question), keywords(question)):
        if candidate != question and candidate not in out:
            out.append(candidate)
    return out
