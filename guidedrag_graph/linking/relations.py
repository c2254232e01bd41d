"""Relation linking: which relation types of the graph a bare question asks about.

Pure functions of data (the question, the graph's relation type names and counts, vectors): the
pipeline reads the counts and embeds the spans (``pipeline/linked.py``), this module decides.

When to link (:func:`links_relations`, docs/entity-linking.md): only where the graph's relation
vocabulary is *typed* — closed, each type reused — and not free text. In free text (OpenIE
predicates) most predicates are coined once: as with the words of any text, where about half
the distinct words occur once (the hapax legomena of Zipf's law), a vocabulary in which more
than half the relation types hold a single relation is read as free text and never linked. A
typed vocabulary (Wikidata-like ``director``, ``spouse``) has few types, each used again and
again, and a question's word for one of them is worth a tier.

How a type matches (:func:`link_relations`), best first; each type and each question word is
used once, and never a piece of a hyphenated compound ("mother" in "mother-in-law"):

1. ``name``: the type's words, as the question writes them ("director", "place of birth");
2. ``inflection``: each content word of the type shares its stem with a question word
   ("published" -> ``PUBLISHER``, "directed" -> ``DIRECTOR``);
3. ``similarity``: a span of one to three question words whose embedding (the KB's own
   embedder) is nearer a type than that type is to any other type of the graph, and nearer
   than the vocabulary's median nearest-neighbour similarity ("husband" -> ``SPOUSE``); the
   span and the type must be each other's best match. Both bars are the graph's own
   statistics: no threshold is a constant.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from guidedrag_graph.linking.text import TOKEN, is_stop

__all__ = [
    "RelationLink",
    "link_relations",
    "links_relations",
    "relation_words",
    "similarity_bars",
    "similarity_spans",
    "type_phrase",
    "vocabulary_kind",
]

# Longest question span compared with relation names by similarity, in words ("place of birth").
SPAN_WORDS = 3
# Type names' words and words' stems kept (pure functions of a string): a question is linked
# against every type of the vocabulary, so without them each call re-split and re-stemmed the
# same names (~1 ms of a call on the synthetic KB's 20 types, most of its relation linking).
WORDS_KEPT = 65536


@dataclass(frozen=True)
class RelationLink:
    """One relation type the question asks about: the words, the type, how it matched."""

    span: str
    relation: str
    match: str  # name | inflection | similarity

    def to_dict(self) -> dict[str, str]:
        return {"span": self.span, "relation": self.relation, "match": self.match}


def vocabulary_kind(counts: Mapping[str, int]) -> str:
    """``typed`` (link relations), ``free-text`` (do not), or ``none`` (no relation at all).

    Free text: more than half of the relation types hold a single relation (hapax)."""
    used = [n for n in counts.values() if n > 0]
    if not used:
        return "none"
    hapax = sum(1 for n in used if n == 1)
    return "free-text" if 2 * hapax > len(used) else "typed"


def links_relations(counts: Mapping[str, int]) -> bool:
    """Whether a bare question's relation types are linked on this graph (see the module)."""
    return vocabulary_kind(counts) == "typed"


@lru_cache(maxsize=WORDS_KEPT)
def relation_words(type_name: str) -> tuple[str, ...]:
    """A type's words, lower case: ``PLACE_OF_BIRTH`` -> ``("place", "of", "birth")``."""
    return tuple(w.casefold() for w in TOKEN.findall(type_name.replace("_", " ")))


@lru_cache(maxsize=WORDS_KEPT)
def _stem(word: str) -> str:
    """Plural, verb and agent endings off: directed, director, directs -> direct."""
    word = word.casefold()
    for ending in ("ings", "ing", "ers", "ors", "er", "or", "ed", "es", "s"):
        if word.endswith(ending) and len(word) - len(ending) >= 4:
            return word[: -len(ending)]
    return word


def _tokens(question: str) -> list[tuple[str, int, int]]:
    return [(m.group(0), m.start(), m.end()) for m in TOKEN.finditer(question)]


def _free(taken: list[bool], start: int, end: int) -> bool:
    return not any(taken[start:end])


def _cuts_compound(question: str, tokens: list[tuple[str, int, int]], i: int, j: int) -> bool:
    """Whether words ``i``..``j`` (exclusive) are only part of a hyphenated compound: "mother"
    in "mother-in-law" names another relation than ``MOTHER``."""
    before = i > 0 and question[tokens[i - 1][2] : tokens[i][1]] == "-"
    after = j < len(tokens) and question[tokens[j - 1][2] : tokens[j][1]] == "-"
    return before or after


@dataclass(frozen=True)
class _Vocabulary:
    """A vocabulary's type names in the two orders ``link_relations`` tries them, with what each
    match compares: a property of the names alone, so it is prepared once per vocabulary
    (``_prepared``), not once per question."""

    # name: (type, its words), longest types first ("place of birth" before "place"); types
    # whose words are all stop words never match by name
    by_length: tuple[tuple[str, tuple[str, ...]], ...]
    # inflection: (type, its content words' stems), types in order; types with none left out
    by_name: tuple[tuple[str, tuple[str, ...]], ...]


@lru_cache(maxsize=16)
def _prepared(types: tuple[str, ...]) -> _Vocabulary:
    by_length = tuple(
        (t, relation_words(t))
        for t in sorted(types, key=lambda t: (-len(relation_words(t)), t))
        if relation_words(t) and not all(is_stop(w) for w in relation_words(t))
    )
    content = {t: tuple(_stem(w) for w in relation_words(t) if not is_stop(w)) for t in types}
    by_name = tuple((t, content[t]) for t in sorted(types) if content[t])
    return _Vocabulary(by_length, by_name)


def link_relations(
    question: str,
    types: Sequence[str],
    *,
    excluded: Sequence[tuple[int, int]] = (),
    similar: Sequence[RelationLink] = (),
) -> list[RelationLink]:
    """The relation types ``question`` asks about, by name, then inflection, then ``similar``
    (:func:`similarity_spans`' answer); words inside ``excluded`` character ranges (the
    linked entities' spans) never match."""
    vocabulary = _prepared(tuple(types))
    tokens = _tokens(question)
    words = [t[0].casefold() for t in tokens]
    taken = [any(s < e2 and s2 < e for s2, e2 in excluded) for _, s, e in tokens]
    # where each word and each stem occurs, in order: a type is compared only where its first
    # word (name) or a stem of its (inflection) is written, in the order a scan would meet them
    at_word: dict[str, list[int]] = {}
    at_stem: dict[str, list[int]] = {}
    for i, w in enumerate(words):
        at_word.setdefault(w, []).append(i)
        at_stem.setdefault(_stem(w), []).append(i)
    out: list[RelationLink] = []
    linked: set[str] = set()
    # name: the type's words in a row, longest types first ("place of birth" before "place").
    for type_name, target in vocabulary.by_length:
        for i in at_word.get(target[0], ()):
            if i > len(words) - len(target):
                break
            if (
                tuple(words[i : i + len(target)]) == target
                and _free(taken, i, i + len(target))
                and not _cuts_compound(question, tokens, i, i + len(target))
            ):
                out.append(
                    RelationLink(_text(question, tokens, i, i + len(target)), type_name, "name")
                )
                linked.add(type_name)
                taken[i : i + len(target)] = [True] * len(target)
                break
    # inflection: every content word of the type stems like a free question word.
    for type_name, stems in vocabulary.by_name:
        if type_name in linked:
            continue
        hits: list[int] = []
        for stem in stems:
            hit = next(
                (
                    i
                    for i in at_stem.get(stem, ())
                    if not taken[i]
                    and i not in hits
                    and not _cuts_compound(question, tokens, i, i + 1)
                ),
                None,
            )
            if hit is None:
                break
            hits.append(hit)
        else:
            span = " ".join(tokens[i][0] for i in sorted(hits))
            out.append(RelationLink(span, type_name, "inflection"))
            linked.add(type_name)
            for i in hits:
                taken[i] = True
    # similarity: only on words no earlier match took.
    if similar:
        free_spans = {s for s, _, _ in _span_bounds(question, tokens, taken)}
        for link in similar:
            if link.relation not in linked and link.span in free_spans:
                out.append(link)
                linked.add(link.relation)
    return out


def _text(question: str, tokens: list[tuple[str, int, int]], i: int, j: int) -> str:
    return question[tokens[i][1] : tokens[j - 1][2]]


def _span_bounds(
    question: str, tokens: list[tuple[str, int, int]], taken: list[bool]
) -> list[tuple[str, int, int]]:
    out: list[tuple[str, int, int]] = []
    for i in range(len(tokens)):
        for j in range(i + 1, min(len(tokens), i + SPAN_WORDS) + 1):
            if not _free(taken, i, j):
                break
            if is_stop(tokens[i][0]) or is_stop(tokens[j - 1][0]):
                continue
            if _cuts_compound(question, tokens, i, j):
                continue
            out.append((_text(question, tokens, i, j), i, j))
    return out


def candidate_spans(question: str, excluded: Sequence[tuple[int, int]] = ()) -> list[str]:
    """The spans :func:`similarity_spans` compares: one to ``SPAN_WORDS`` words, starting and
    ending on a content word, outside ``excluded`` character ranges."""
    tokens = _tokens(question)
    taken = [any(s < e2 and s2 < e for s2, e2 in excluded) for _, s, e in tokens]
    return list(dict.fromkeys(s for s, _, _ in _span_bounds(question, tokens, taken)))


def type_phrase(type_name: str) -> str:
    """What a type's name says, embedded to compare question spans with: ``PLACE_OF_BIRTH`` ->
    ``"place of birth"``."""
    return " ".join(relation_words(type_name))


def similarity_bars(type_vectors: np.ndarray) -> np.ndarray:
    """Each type's bar for a similarity link: its similarity to the nearest other type, or the
    vocabulary's median nearest-neighbour similarity if higher. A statistic of the vocabulary
    alone (no question in it), so callers may keep it beside the type vectors."""
    between = type_vectors @ type_vectors.T
    np.fill_diagonal(between, -np.inf)
    nearest = between.max(axis=1)
    bar: np.ndarray = np.maximum(nearest, float(np.median(nearest)))
    return bar


def similarity_spans(
    spans: Sequence[str],
    span_vectors: np.ndarray,
    types: Sequence[str],
    type_vectors: np.ndarray,
    bar: np.ndarray | None = None,
) -> list[RelationLink]:
    """Span -> type links by embedding similarity (unit vectors), strongest first: a span and a
    type that are each other's best match, nearer than the type is to any other type and
    nearer than the vocabulary's median nearest-neighbour similarity (``bar``: the types'
    :func:`similarity_bars`, computed here when not given)."""
    if len(types) < 2 or not spans:
        return []
    if bar is None:
        bar = similarity_bars(type_vectors)
    scores = span_vectors @ type_vectors.T
    best_type = scores.argmax(axis=1)
    best_span = scores.argmax(axis=0)
    found: list[tuple[float, RelationLink]] = []
    for s, t in enumerate(best_type):
        score = float(scores[s, t])
        if best_span[t] == s and score > bar[t]:
            found.append((score, RelationLink(spans[s], types[t], "similarity")))
    found.sort(key=lambda pair: -pair[0])
    return [link for _, link in found]
