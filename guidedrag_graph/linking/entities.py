"""Entity linking: which KB entities a question names, by matching its spans to entity names.

Why not Lucene scores or embeddings (the other taggers)? A question names an entity by writing
its name, so the most reliable signal is *the whole name occurs in the question*. The linker:

1. cuts the question into word n-grams (up to ``max_words`` words), each normalised with
   :func:`~guidedrag_graph.schema.presets.name_key`, with a trailing possessive dropped ("Ada
   Lovelace's" -> "ada lovelace");
2. looks each n-gram up among the KB's entity keys, held in-process (``linking/index.py``: read
   by one query per ``GUIDEDRAG_RESOLUTION_CACHE_S``, so a question asks Neo4j nothing): an
   entity's ``name_key`` and alias keys, their accent/punctuation-free ``fold`` forms, and the
   base of a disambiguated name ("mercury (planet)", "paris, texas"). Only equal keys match, so
   nothing fuzzy is ever accepted. With the cache off, or a KB too large to hold, it asks Neo4j
   once per question instead (``cypher/link_entities.cypher``): index seeks on ``name_key`` for
   names and disambiguated names, the full-text index for aliases and variants, verified here
   against the same keys;
3. resolves overlapping spans longest first (so "New York City" hides "York"), and orders what
   is left (:func:`_link_order`): names the question writes like proper names (capitalised)
   before lower-case words, entities a document is about, names written in full, then rarer
   entities (fewer mentions) first, then longer spans.

Within one span, an entity a document is titled after (the entity the document is about) is
preferred over a bare homonym, the exact name over an alias over an accent/punctuation variant
over a disambiguated name, a disambiguator the question's own words repeat ("rugby" in "David
Jones (rugby)") before one they do not, and then the more-mentioned sense (the usual prior of
entity linking). Other entities of a chosen span follow all the chosen ones, as alternates.

Spans made only of stop words, and names shorter than three characters (unless the question
writes them as an acronym, "US"), are never linked. Every value reaches Neo4j as a parameter.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from guidedrag_graph.context import GraphContext
from guidedrag_graph.linking.index import MAX_ENTITIES, held_index
from guidedrag_graph.linking.text import (
    KIND_RANK,
    STOP_WORDS,
    Candidate,
    KeyIndex,
    Match,
    Span,
    candidate,
    fold,
    indexed_spans,
    is_stop,
    matched_spans,
    question_spans,
)
from guidedrag_graph.templates import queries as templates

if TYPE_CHECKING:
    from guidedrag_graph.selection.scope_names import ScopeNames

# The key index of a scope's entities, kept beside its names (per KB version and scope key).
SCOPE_INDEX_KIND = "scope_link_index"

__all__ = ["STOP_WORDS", "EntityLinker", "Link", "Span", "choose", "fold", "fulltext_query"]
__all__ += ["question_spans"]

_LUCENE_SPECIAL = re.compile(r'[+\-&|!(){}\[\]^"~*?:\\/]')


@dataclass(frozen=True)
class Link:
    """One entity the question names: where, how it matched, and how common it is."""

    name: str
    span: Span
    kind: str  # exact | alias | variant | qualified
    mentions: int
    document_subject: bool
    context: bool  # a disambiguator word ("rugby") also occurs in the question
    alternate: bool = False  # another entity of a span already linked


def fulltext_query(question: str, spans: Sequence[Span]) -> str:
    """Lucene query over the question's content words; capitalised words fuzzy (~1), so names
    written without their accents ("Tekeze") still find their entity ("Tekezé")."""
    words: dict[str, bool] = {}
    for span in spans:
        if span.words != 1:
            continue
        word = _LUCENE_SPECIAL.sub(" ", span.text).strip()
        if not word or is_stop(word) or " " in word:
            continue
        key = word.casefold()
        words[key] = words.get(key, False) or (span.proper and len(word) >= 4)
    return " ".join(f"{w}~1" if fuzzy else w for w, fuzzy in words.items())


def choose(spans: Sequence[Span], candidates: Sequence[Candidate], question: str) -> list[Link]:
    """Match candidates to spans, resolve overlaps longest first, order the links best first."""
    return choose_matches(matched_spans(spans, KeyIndex(candidates)), question)


def choose_matches(matched: Sequence[tuple[Span, list[Match]]], question: str) -> list[Link]:
    """Resolve overlaps longest first and order the links best first, from each span that is
    long enough and what it matched (``matched_spans``, ``indexed_spans``)."""
    question_words: set[str] | None = None  # folded once, for the first sense qualified
    by_span: dict[tuple[int, int], list[Link]] = {}
    span_of: dict[tuple[int, int], Span] = {}
    for span, found in matched:
        for kind, sense in found:
            if sense.qualifiers and question_words is None:
                question_words = set(fold(question).split())
            link = Link(
                name=sense.name,
                span=span,
                kind=kind,
                mentions=sense.mentions,
                document_subject=sense.document_subject,
                context=bool(question_words and sense.qualifiers & question_words),
            )
            key = (span.start, span.end)
            span_of[key] = span
            by_span.setdefault(key, []).append(link)
    for links in by_span.values():
        links.sort(key=_sense_order)
    # Longest span first; at equal length the proper-name-like, then the earlier one.
    order = sorted(span_of.values(), key=lambda s: (-s.words, not s.proper, s.start))
    taken: list[Span] = []
    chosen: list[Link] = []
    alternates: list[Link] = []
    seen: set[str] = set()
    for span in order:
        if any(span.start < t.end and t.start < span.end for t in taken):
            continue
        links = [lk for lk in by_span[(span.start, span.end)] if lk.name not in seen]
        if not links:
            continue
        taken.append(span)
        chosen.append(links[0])
        seen.add(links[0].name)
        alternates.extend(Link(**{**lk.__dict__, "alternate": True}) for lk in links[1:])
    if any(link.span.proper for link in chosen):
        # A lone lower-case word ("country", "wife") is a common noun when the question also
        # writes a proper name; it is kept only as the fallback of an all-lower-case question.
        chosen = [lk for lk in chosen if lk.span.proper or lk.span.content_words > 1]
    chosen.sort(key=_link_order)
    alternates.sort(key=_link_order)
    out: list[Link] = []
    named: set[str] = set()
    for link in [*chosen, *alternates]:
        if link.name not in named:
            named.add(link.name)
            out.append(link)
    return out


def _sense_order(link: Link) -> tuple[bool, bool, int, int, str]:
    """Which entity a span means: document subject, match kind, context, popularity."""
    return (
        not link.document_subject,
        not link.context,
        KIND_RANK[link.kind],
        -link.mentions,
        link.name,
    )


def _link_order(link: Link) -> tuple[bool, bool, bool, bool, int, int, int, str]:
    """Which linked entity comes first: names written as proper names (and not as a piece of a
    longer capitalised run), entities a document is about, names the question writes in full
    (a disambiguator it does not repeat leaves the sense open: "Consulate General of the United
    States" is the Frankfurt one or the Shanghai one), rarer entities, longer spans, then the
    question's reading order."""
    return (
        not link.span.proper,
        link.span.partial,
        not link.document_subject,
        link.kind == "qualified" and not link.context,
        link.mentions,
        -link.span.content_words,
        link.span.start,
        link.name,
    )


class EntityLinker:
    """The ``linker`` tagger: names and aliases of KB entities found as spans of the question."""

    name = "linker"

    def __init__(
        self,
        graph: GraphContext,
        *,
        max_words: int = 12,
        fulltext_limit: int = 50,
        mention_cap: int = 1000,
        max_held_entities: int = MAX_ENTITIES,
        scope: ScopeNames | None = None,
    ) -> None:
        self.graph = graph
        # A trusted scope's names: only entities an in-scope chunk mentions can be linked.
        self.scope = scope
        self.max_words = max_words
        self.fulltext_limit = fulltext_limit
        self.mention_cap = mention_cap
        self.max_held_entities = max_held_entities

    def link(self, question: str) -> list[Link]:
        """Every entity the question names, best first, with how each one matched.

        Against the KB's keys held in-process (``linking/index.py``: no round trip) when the cache
        is on and the KB has at most ``max_held_entities`` entities, else by one query.
        Scoped: against the scope's own entities (``scope_index``), or, for a scope too large
        to hold, by query with every candidate checked against the scope."""
        if self.scope is not None:
            return self._link_scoped(question, self.scope)
        index = held_index(self.graph, self.mention_cap, self.max_held_entities)
        if index is None:
            return self.link_by_query(question)
        return choose_matches(indexed_spans(question, self.max_words, index), question)

    def _link_scoped(self, question: str, scope: ScopeNames) -> list[Link]:
        if not scope.held:
            found = self.link_by_query(question)
            kept = set(scope.keep_names(lk.name for lk in found))
            return [lk for lk in found if lk.name in kept]
        return choose_matches(indexed_spans(question, self.max_words, scope_index(scope)), question)

    def link_by_query(self, question: str) -> list[Link]:
        """``link`` by one query (``cypher/link_entities.cypher``): the entities whose name key
        equals a span or a span plus a disambiguator (index seeks), and the full-text index's
        first ``fulltext_limit`` for aliases and variants. What the in-process index finds too,
        except a match beyond that limit."""
        spans = question_spans(question, self.max_words)
        if not spans:
            return []
        grams = sorted({k for s in spans for k in s.keys})
        text = fulltext_query(question, spans)
        rows = self.graph.read(
            templates.query("link_entities", self.graph.schema),
            {
                "grams": grams,
                "index_name": self.graph.settings.entity_fulltext_index_name,
                # Lucene rejects an empty query; a word no name contains finds nothing.
                "query_text": text or "guidedrag_no_word",
                "fulltext_limit": self.fulltext_limit,
                "mention_cap": self.mention_cap,
            },
            name="link_entities",
        )
        return choose(spans, [candidate(r) for r in rows], question)

    def tag(self, question: str) -> list[str]:
        """One entity per linked span, best first (other senses of a span are left out)."""
        return [link.name for link in self.link(question) if not link.alternate]


def scope_index(scope: ScopeNames) -> KeyIndex:
    """The key index of the entities ``scope`` may show (its names' rows: the link index's
    columns), built once per scope and KB version and kept beside them (``graph.data``)."""
    key = (SCOPE_INDEX_KIND, id(scope))  # this ScopeNames: a new version reads a new one
    kept: tuple[ScopeNames, KeyIndex] | None = scope.graph.data.get(key)
    if kept is not None and kept[0] is scope:
        return kept[1]
    index = KeyIndex(
        candidate(
            {
                "name": name,
                "name_key": name_key,
                "alias_keys": aliases,
                "mentions": mentions,
                "document_subject": subject,
            }
        )
        for _id, name, name_key, aliases, mentions, subject in scope.entities
    )
    scope.graph.data.put(key, (scope, index))  # holding it: its id stays its own
    return index
