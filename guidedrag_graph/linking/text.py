"""The entity linker's text side: a question's spans, the keys they match, and the key index.

Pure Python, no database (``linking/entities.py`` asks Neo4j, ``linking/index.py`` keeps the KB's
keys).
A span matches an entity when one of its keys equals one of the entity's keys: ``name_key``
forms (exact name, alias), :func:`fold` forms (accent/punctuation variants), and the base of a
disambiguated name ("mercury" of "mercury (planet)"). :class:`KeyIndex` holds those keys, so a
span is matched by dictionary lookups; :func:`indexed_spans` builds the :class:`Span` of only
the n-grams the index knows, which is most of why linking with the in-process index is cheap.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from guidedrag_graph.schema.presets import name_key

# English function words and question words: spans made only of these are never entity names.
STOP_WORDS: frozenset[str] = frozenset(
    {
        "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any",
        "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both",
        "but", "by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "else",
        "ever", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her",
        "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is",
        "it", "its", "itself", "just", "last", "let", "like", "many", "me", "might", "more", "most",
        "much", "must", "my", "myself", "near", "next", "no", "nor", "not", "now", "of", "off",
        "on", "once", "one", "only", "or", "other", "our", "ours", "out", "over", "own", "part",
        "same", "she", "should", "since", "so", "some", "such", "than", "that", "the", "their",
        "theirs", "them", "then", "there", "these", "they", "this", "those", "through", "to", "too",
        "under", "until", "up", "upon", "us", "very", "was", "we", "were", "what", "when", "where",
        "whether", "which", "while", "who", "whom", "whose", "why", "will", "with", "within",
        "without", "would", "yet", "you", "your", "yours"
    }
)  # fmt: skip

TOKEN = re.compile(r"\w+(?:['’]\w+)*", re.UNICODE)
POSSESSIVE = re.compile(r"['’]s?$")
_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)
_PAREN = re.compile(r"^(.+?) \(([^()]+)\)$")
# Where a key may go on past a word: a word character, then one that is not ("new| york").
_WORD_END = re.compile(r"(?<=\w)\W")

KIND_RANK = {"exact": 0, "alias": 1, "variant": 2, "qualified": 3}


def fold(text: str) -> str:
    """Accent-, case- and punctuation-insensitive key: "Aschenbrödel" == "aschenbrodel"."""
    key = name_key(text)
    if key.isascii():
        return _fold_ascii(key)
    letters = unicodedata.normalize("NFKD", key).translate(_NO_MARKS)
    return " ".join(_NON_WORD.sub(" ", letters).split())


class _Marks(dict[int, int | None]):
    """``str.translate`` table dropping combining marks, filled as code points are met (a
    per-character generator cost ~10 us per question in the linker's ``fold``); at most
    ``KEPT`` of them, so questions cannot grow it without bound."""

    KEPT = 65_536

    def __missing__(self, point: int) -> int | None:
        kept = None if unicodedata.combining(chr(point)) else point
        if len(self) < self.KEPT:
            self[point] = kept
        return kept


_NO_MARKS = _Marks()


def fold_key(key: str) -> str:
    """:func:`fold` of a ``name_key`` (equal to ``fold(key)``): an ASCII key is its own
    ``name_key``, so only the punctuation step is left to do (the linker's hot path)."""
    return _fold_ascii(key) if key.isascii() else fold(key)


def _fold_ascii(key: str) -> str:
    """``fold`` of an ASCII ``name_key``: NFKD leaves ASCII as it is and it has no combining
    marks, so only punctuation is left to drop."""
    if key.replace(" ", "").isalnum():
        return key  # already single-spaced by name_key
    return " ".join(_NON_WORD.sub(" ", key).split())


@dataclass(frozen=True)
class Span:
    """Words ``start``..``end`` (exclusive) of the question, with the keys it may match."""

    start: int
    end: int
    text: str
    keys: frozenset[str]  # name_key forms (as written, and without a possessive)
    folded: frozenset[str]  # fold() forms
    proper: bool  # written like a proper name (a capitalised word that is not a stop word)
    partial: bool  # part of a longer run of capitalised words ("State" in "Golden State")
    content_words: int  # words that are not stop words

    @property
    def words(self) -> int:
        return self.end - self.start


@dataclass(frozen=True, slots=True)
class Sense:
    """What a match says about its entity (all a link needs; the keys stay in the index)."""

    name: str
    mentions: int
    document_subject: bool
    qualifiers: frozenset[str]  # the disambiguators' folded words, stop words left out


@dataclass(frozen=True)
class Candidate:
    """An entity with every key a span may match it by."""

    name: str
    keys: frozenset[str]
    folded: frozenset[str]
    base_keys: frozenset[str]  # disambiguator stripped: "mercury" for "mercury (planet)"
    base_folded: frozenset[str]
    sense: Sense


Match = tuple[str, Sense]  # (kind, entity)


def qualified(key: str) -> list[tuple[str, str]]:
    """(base, disambiguator) readings of a name: "mercury (planet)" -> ("mercury", "planet"),
    "black hawk township, jefferson county, iowa" -> ("black hawk township", "jefferson ...")."""
    out: list[tuple[str, str]] = []
    paren = _PAREN.match(key)
    if paren:
        out.append((paren.group(1), paren.group(2)))
    head, sep, rest = key.partition(", ")
    if sep and head and rest:
        out.append((head, rest))
    return out


def candidate(row: dict[str, Any]) -> Candidate:
    """A candidate from a row of ``link_entities`` (or ``link_index``): name, name_key,
    alias_keys, mentions, document_subject."""
    name = str(row["name"])
    keys = {str(row.get("name_key") or name_key(name)), *(str(k) for k in row["alias_keys"] or [])}
    bases: set[str] = set()
    qualifiers: set[str] = set()
    for key in keys:
        for base, qualifier in qualified(key):
            bases.add(base)
            qualifiers.update(fold(qualifier).split())
    return Candidate(
        name=name,
        keys=frozenset(keys),
        folded=frozenset(fold(k) for k in keys),
        base_keys=frozenset(bases),
        base_folded=frozenset(fold(b) for b in bases),
        sense=Sense(
            name=name,
            mentions=int(row["mentions"]),
            document_subject=bool(row["document_subject"]),
            qualifiers=frozenset(qualifiers - STOP_WORDS),
        ),
    )


def is_stop(word: str) -> bool:
    """A function word, unless written as an acronym ("US" is not "us")."""
    return word.casefold() in STOP_WORDS and not (len(word) > 1 and word.isupper())


def capitalised(word: str) -> bool:
    return word[0].isupper() and not is_stop(word)


def question_spans(question: str, max_words: int = 12) -> list[Span]:
    """Every span of up to ``max_words`` words that could be a name (not only stop words)."""
    tokens = list(TOKEN.finditer(question))
    words = [t.group(0) for t in tokens]
    stop = [is_stop(w) for w in words]
    # Words joined to the next by nothing but a space or a hyphen ("Golden State", "Pan-African").
    joined = [
        question[tokens[k].end() : tokens[k + 1].start()] in (" ", "-")
        for k in range(len(tokens) - 1)
    ]
    spans: list[Span] = []
    for i, first in enumerate(tokens):
        for j in range(i + 1, min(len(tokens), i + max_words) + 1):
            content = stop[i:j].count(False)
            if not content:
                continue
            text = question[first.start() : tokens[j - 1].end()]
            forms = {text}
            if POSSESSIVE.search(words[j - 1]):
                forms.add(POSSESSIVE.sub("", text))
            keys = frozenset(k for k in (name_key(f) for f in forms) if k)
            partial = (i > 0 and joined[i - 1] and capitalised(words[i - 1])) or (
                j < len(tokens) and joined[j - 1] and capitalised(words[j])
            )
            spans.append(
                Span(
                    start=i,
                    end=j,
                    text=text,
                    keys=keys,
                    folded=frozenset(fold(k) for k in keys),
                    proper=any(capitalised(w) for w in words[i:j]),
                    partial=bool(partial),
                    content_words=content,
                )
            )
    return spans


def long_enough(span: Span) -> bool:
    """Names under three characters only when written as an acronym ("US", "EU")."""
    if min(len(k) for k in span.keys) >= 3:
        return True
    letters = [ch for ch in span.text if ch.isalpha()]
    return len(letters) >= 2 and all(ch.isupper() for ch in letters)


class KeyIndex:
    """The candidates by each key a span may match, so matching is lookups, not a product.

    Built per question from the candidates Neo4j returned, or once from every entity of the KB
    (``linking/index.py``); ``known`` and ``heads`` let :func:`indexed_spans` skip the n-grams no
    key equals, and stop lengthening a span no key goes on from."""

    def __init__(self, candidates: Iterable[Candidate]) -> None:
        self.by_kind: dict[str, dict[str, list[Sense]]] = {k: {} for k in KIND_RANK}
        self.size = 0
        for cand in candidates:
            self.size += 1
            own = name_key(cand.name)
            for kind, keys in (
                ("exact", {k for k in cand.keys if k == own}),
                ("alias", {k for k in cand.keys if k != own}),
                ("variant", cand.folded),
                ("qualified", cand.base_keys | cand.base_folded),
            ):
                for key in keys:
                    self.by_kind[kind].setdefault(key, []).append(cand.sense)
        self.known: frozenset[str] = frozenset().union(*self.by_kind.values())
        # Every key cut where a word ends: a span whose key is not here can only grow into keys
        # no entity has (hash look-ups; a sorted list's prefix search cost a bisect per n-gram).
        self.heads: frozenset[str] = frozenset(
            key[: m.start()] for key in self.known for m in _WORD_END.finditer(key)
        )

    def matches(self, keys: Iterable[str], folded: Iterable[str]) -> list[Match]:
        """(kind, entity) pairs, each entity once, with its strongest kind."""
        keys, folded = list(keys), list(folded)
        out: dict[str, Match] = {}
        for kind, forms in (
            ("exact", keys),
            ("alias", keys),
            ("variant", folded),
            ("qualified", [*keys, *folded]),
        ):
            table = self.by_kind[kind]
            for key in forms:
                for sense in table.get(key, ()):
                    out.setdefault(sense.name, (kind, sense))
        return list(out.values())

    def continues(self, key: str) -> bool:
        """Whether some key goes on from ``key`` (a span key, which ends in a word character)
        past a word end: ``key`` followed by a character that is not a word character."""
        return key in self.heads


def matched_spans(spans: Sequence[Span], index: KeyIndex) -> list[tuple[Span, list[Match]]]:
    """Each span long enough to be a name, with what it matches (spans matching nothing left
    out), in the spans' order."""
    out: list[tuple[Span, list[Match]]] = []
    for span in spans:
        if long_enough(span):
            found = index.matches(span.keys, span.folded)
            if found:
                out.append((span, found))
    return out


def indexed_spans(question: str, max_words: int, index: KeyIndex) -> list[tuple[Span, list[Match]]]:
    """``matched_spans(question_spans(question, max_words), index)``, without building a Span
    for the n-grams the index does not know.

    Each n-gram's keys are computed as :func:`question_spans` computes them and looked up
    first; only a hit becomes a :class:`Span`. Lengthening a span stops once no key of the index
    goes on from its ``name_key`` or its ``fold`` past a word end (``KeyIndex.continues``) —
    exact for ASCII text, where both keys of a longer span are the shorter one's, then a
    character that is not a word character, then more (casefold, punctuation and whitespace act
    on each character alone); text with other characters (NFKC and NFKD may combine across
    words) is never cut short."""
    tokens = list(TOKEN.finditer(question))
    count = len(tokens)
    starts = [t.start() for t in tokens]
    ends = [t.end() for t in tokens]
    words = [t.group(0) for t in tokens]
    stop = [is_stop(w) for w in words]
    caps = [w[0].isupper() and not s for w, s in zip(words, stop, strict=True)]
    possessive = [bool(POSSESSIVE.search(w)) for w in words]
    joined = [question[ends[k] : starts[k + 1]] in (" ", "-") for k in range(count - 1)]
    # Spans starting at or after token ``ascii_from`` are ASCII to the question's end.
    # For ASCII text NFKC changes nothing and casefold maps each character to one, so a span's
    # ``name_key`` is the casefolded question's same slice, single-spaced (no normalisation per
    # n-gram: the linker's hot path).
    all_ascii = question.isascii()
    casefolded = question.casefold() if all_ascii else question
    if all_ascii:
        ascii_from = 0
    else:
        last = max(at for at, ch in enumerate(question) if not ch.isascii())
        ascii_from = next((k for k in range(count) if starts[k] > last), count)
    known = index.known
    out: list[tuple[Span, list[Match]]] = []
    for i in range(count):
        content = 0
        proper = False
        cut = i >= ascii_from
        left = i > 0 and joined[i - 1] and caps[i - 1]
        for j in range(i + 1, min(count, i + max_words) + 1):
            if not stop[j - 1]:
                content += 1
            proper = proper or caps[j - 1]
            if not content:
                continue
            text = question[starts[i] : ends[j - 1]]
            if all_ascii:
                key = " ".join(casefolded[starts[i] : ends[j - 1]].split())
            else:
                key = name_key(text)
            folded_key = fold_key(key)
            same = folded_key is key  # fold_key hands back ``key`` when folding changes nothing
            if possessive[j - 1]:
                keys = frozenset(k for k in (key, name_key(POSSESSIVE.sub("", text))) if k)
                folded = frozenset(fold_key(k) for k in keys)
                hit = not known.isdisjoint(keys) or not known.isdisjoint(folded)
            else:
                hit = bool(key) and (key in known or (not same and folded_key in known))
                if hit:
                    keys, folded = frozenset((key,)), frozenset((folded_key,))
            if hit:
                span = Span(
                    start=i,
                    end=j,
                    text=text,
                    keys=keys,
                    folded=folded,
                    proper=proper,
                    partial=bool(left or (j < count and joined[j - 1] and caps[j])),
                    content_words=content,
                )
                if long_enough(span):
                    found = index.matches(keys, folded)
                    if found:
                        out.append((span, found))
            if cut and not index.continues(key) and (same or not index.continues(folded_key)):
                break
    return out
