"""Spans of a question that look like names: what a bare question names that the KB may lack.

A pure function of the question and the character ranges the entity linker matched. A stated
name the KB does not know abstains (the paper's precision result); a bare question never does,
so the pipeline reports these spans instead (``RetrievalResult.unknown_names``), and the
``abstain_unknown`` setting may abstain on them (docs/entity-linking.md).

A name-like span is a run of capitalised words (``Tajlu Khanum``), joined by spaces, hyphens
or name particles inside the run (``Duchess of Blekinge``), leaving out the question's
first word when it stands alone (a sentence starts with a capital) and numbers. It is unknown
when no entity link overlaps it.
"""

from __future__ import annotations

from collections.abc import Sequence

from guidedrag_graph.linking.text import POSSESSIVE, TOKEN, capitalised

__all__ = ["name_like_spans", "unknown_names"]

# Lower-case words that join the parts of one name ("Duchess of Blekinge", "Ludwig van
# Beethoven"); "and"/"or" join two names, so they end a run.
NAME_PARTICLES = frozenset(
    {"of", "the", "de", "da", "del", "della", "di", "du", "la", "le", "van", "von", "der", "den"}
)


def name_like_spans(question: str) -> list[tuple[str, int, int]]:
    """``(text, start, end)`` (characters) of each run of capitalised words."""
    tokens = [(m.group(0), m.start(), m.end()) for m in TOKEN.finditer(question)]
    runs: list[tuple[int, int]] = []
    i = 0
    while i < len(tokens):
        if not _proper(tokens[i][0]):
            i += 1
            continue
        j = i + 1
        while j < len(tokens):
            gap = question[tokens[j - 1][2] : tokens[j][1]]
            if gap not in (" ", "-"):
                break
            if _proper(tokens[j][0]):
                j += 1
                continue
            # a lower-case connector ("of", "the", "de") counts only between capitalised words
            k = j
            while k < len(tokens) and tokens[k][0] in NAME_PARTICLES:
                k += 1
            if k > j and k < len(tokens) and _proper(tokens[k][0]):
                j = k + 1
                continue
            break
        runs.append((i, j))
        i = j
    out: list[tuple[str, int, int]] = []
    for i, j in runs:
        if i == 0 and j == 1:
            continue  # the question's first word alone: capitalised as a sentence start
        start, end = tokens[i][1], tokens[j - 1][2]
        text = POSSESSIVE.sub("", question[start:end])
        out.append((text, start, start + len(text)))
    return out


def _proper(word: str) -> bool:
    return capitalised(word) and not word.isdigit()


def unknown_names(question: str, linked: Sequence[tuple[int, int]]) -> list[str]:
    """Name-like spans that no linked character range ``linked`` overlaps, in question order."""
    return [
        text
        for text, start, end in name_like_spans(question)
        if not any(start < e and s < end for s, e in linked)
    ]
