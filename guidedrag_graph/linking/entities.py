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

The choosing is pure and lives in ``linking/entity_links.py`` (re-exported here); this module is
its edge: the held indexes, and the query path's reads (``link_by_query``: the rows, then a
scope too large to hold asked about the names linked), each sent through
``selection/fact_rounds.py`` when the decision ``linked_by_query`` asks for it.
"""

from __future__ import annotations

from operator import attrgetter
from typing import TYPE_CHECKING, Any

from guidedrag_graph.context import GraphContext
from guidedrag_graph.linking.entity_links import (
    Link,
    MissingLinkFact,
    QueryLinks,
    choose,
    choose_matches,
    fulltext_query,
    linked_by_query,
)
from guidedrag_graph.linking.index import MAX_ENTITIES, held_index
from guidedrag_graph.linking.text import (
    STOP_WORDS,
    KeyIndex,
    Span,
    candidate,
    fold,
    indexed_spans,
    question_spans,
)
from guidedrag_graph.selection import fact_rounds
from guidedrag_graph.templates import queries as templates

if TYPE_CHECKING:
    from guidedrag_graph.selection.scope_names import ScopeNames

# The key index of a scope's entities, kept beside its names (per KB version and scope key).
SCOPE_INDEX_KIND = "scope_link_index"

__all__ = ["STOP_WORDS", "EntityLinker", "Link", "Span", "choose", "fold", "fulltext_query"]
__all__ += ["question_spans"]

_KIND = attrgetter("kind")  # a missing link fact's name


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
            return self.link_by_query(question, scope)
        return choose_matches(indexed_spans(question, self.max_words, scope_index(scope)), question)

    def link_by_query(self, question: str, scope: ScopeNames | None = None) -> list[Link]:
        """``link`` by one query (``cypher/link_entities.cypher``): the entities whose name key
        equals a span or a span plus a disambiguator (index seeks), and the full-text index's
        first ``fulltext_limit`` for aliases and variants. What the in-process index finds too,
        except a match beyond that limit. With ``scope`` (one too large to hold), only the names
        it keeps (``ScopeNames.keep_names``). Decided by ``linked_by_query``
        (``linking/entity_links.py``, pure); each fact it asks for is read here."""
        facts = QueryLinks(question, self.max_words, scoped=scope is not None)

        def read(facts: QueryLinks, missing: MissingLinkFact) -> QueryLinks:
            if missing.kind == "rows":
                facts.rows = self._rows(missing.grams, missing.text)
            elif scope is not None:
                facts.in_scope = scope.keep_names(missing.ask)
            else:  # only a scoped decision asks the scope
                raise missing
            return facts

        # at most two facts: the query's rows and, scoped, the scope's answer for their names
        return fact_rounds.decided(linked_by_query, facts, read, MissingLinkFact, _KIND, rounds=2)

    def _rows(self, grams: list[str], text: str) -> list[dict[str, Any]]:
        """The ``link_entities`` read for the spans' ``grams`` and full-text ``text``."""
        return self.graph.read(
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
