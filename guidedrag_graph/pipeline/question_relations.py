"""The relation types a bare question asks about, on this graph: the edge of relation linking.
It reads and keeps the facts the decision (``pipeline/relations_asked.py``, pure) asks for:
the graph's relation vocabulary (kept per counts read), whether that vocabulary is typed, the
scope's types, the type phrases' vectors (kept per vocabulary and embedder) and the question's
span vectors. Split from ``pipeline/linked.py``, which decides what ``auto`` ranks with.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter

import numpy as np

from guidedrag_graph.context import GraphContext
from guidedrag_graph.db.reads import off_loop
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.linking.relations import (
    RelationLink,
    links_relations,
    similarity_bars,
    type_phrase,
)
from guidedrag_graph.pipeline.relations_asked import (
    MissingRelationFact,
    RelationFacts,
    relations_asked,
)
from guidedrag_graph.selection import fact_rounds
from guidedrag_graph.selection.scope_names import ScopeNames
from guidedrag_graph.templates import queries as templates


def relation_type_counts(graph: GraphContext, scope: ScopeNames | None = None) -> dict[str, int]:
    """Entity relations per relation type (``cypher/kb_stats_relations.cypher``), kept for
    the resolution cache's time and refreshed in the background when it expires (309 ms on
    MuSiQue: no call on a warm process waits for it, ``ExpiringCache.refreshed``). Scoped: only
    the types with a relation in scope (the counts stay the KB's: they only decide whether the
    vocabulary reads as typed)."""

    def load() -> dict[str, int]:
        rows = graph.read(
            templates.fragment("kb_stats_relations", graph.schema.relation_mode, graph.schema),
            {},
            name="kb_stats_relations",
        )
        return {str(r["type"]): int(r["n"]) for r in rows if r["type"] is not None}

    counts = graph.data.refreshed("relation_type_counts", load)
    return counts if scope is None else _scoped_counts(counts, scope)


def _scoped_counts(counts: dict[str, int], scope: ScopeNames) -> dict[str, int]:
    return {t: counts[t] for t in scope.keep_types(sorted(counts))}


def relation_vocabulary(graph: GraphContext) -> tuple[list[str], bool]:
    """The graph's relation types, sorted, and whether a bare question's are linked on it
    (``links_relations``): judged once per counts read (kept beside them), since judging the
    vocabulary walks every type (0.5-1 ms of a call's CPU on MuSiQue's 5,034 types)."""
    counts = relation_type_counts(graph)
    kept: tuple[dict[str, int], tuple[list[str], bool]] | None = graph.data.get(
        "relation_vocabulary"
    )
    if kept is not None and kept[0] is counts:
        return kept[1]
    vocabulary = (sorted(counts), bool(counts) and links_relations(counts))
    graph.data.put("relation_vocabulary", (counts, vocabulary))
    return vocabulary


def question_relations(
    graph: GraphContext,
    question: str,
    excluded: Sequence[tuple[int, int]],
    embedder: Embedder | None,
    *,
    force: bool = False,
    scope: ScopeNames | None = None,
) -> list[RelationLink]:
    """The graph's relation types ``question`` asks about, outside the ``excluded`` (linked
    entity) ranges; none where the vocabulary is free text, unless ``force`` (judged on the
    whole graph: the kind of vocabulary it has). Scoped: only the types with a relation in
    ``scope``. Decided by ``pipeline/relations_asked.py`` (pure); each fact it asks for is
    read here: the vocabulary, the scope's types, the type vectors, the span vectors."""
    facts = RelationFacts(
        question, excluded, force=force, scoped=scope is not None, embeds=embedder is not None
    )

    def read(facts: RelationFacts, missing: MissingRelationFact) -> RelationFacts:
        ask = list(missing.ask)
        if missing.kind == "vocabulary":
            facts.vocabulary = relation_vocabulary(graph)
        elif missing.kind == "in_scope" and scope is not None:
            facts.in_scope = scope.keep_types(ask)
        elif missing.kind == "type_vectors" and embedder is not None:
            facts.type_vectors = relation_type_vectors(graph, embedder, ask)
        elif missing.kind == "span_vectors" and embedder is not None:
            # CPU work: off the event loop when an async caller waits (reader.off_loop)
            vectors = off_loop(embedder.embed_queries, ask)
            facts.span_vectors = np.asarray(vectors, dtype=np.float32)
        else:  # a fact the decision asks only of a scope or an embedder handed in
            raise missing
        return facts

    # each of the four facts at most once
    return fact_rounds.decided(
        relations_asked, facts, read, MissingRelationFact, attrgetter("kind"), rounds=4
    )


@dataclass(frozen=True)
class TypeVectors:
    """The graph's relation type phrases embedded (``type_phrase``), a row per type of the
    vocabulary, and their similarity bars: what relation linking compares a question's spans
    with. They belong to the vocabulary and the embedder, not to the question, so they are kept
    beside the vocabulary (``relation_type_vectors``); embedding the 20 phrases again on every
    call (20 look-ups in the on-disk embedding cache) was most of the synthetic KB's relation
    linking."""

    vocabulary: list[str]
    embedder: Embedder
    rows: dict[str, int]
    vectors: np.ndarray
    bar: np.ndarray


def relation_type_vectors(
    graph: GraphContext, embedder: Embedder, types: Sequence[str]
) -> tuple[np.ndarray, np.ndarray | None]:
    """``types``' phrase vectors and, when ``types`` is the whole vocabulary, their bars (a
    scope's subset gets ``None``: its bars are its own types' and are computed by the caller,
    ``similarity_spans``). Kept for the vocabulary read (``relation_vocabulary``: a new counts
    read, a ``clear()`` or a write seen makes a new one) and the embedder; never for a
    question."""
    vocabulary, _ = relation_vocabulary(graph)
    kept: TypeVectors | None = graph.data.get("relation_type_vectors")
    if kept is None or kept.vocabulary is not vocabulary or kept.embedder is not embedder:
        vectors = np.asarray(
            off_loop(embedder.embed_queries, [type_phrase(t) for t in vocabulary]),
            dtype=np.float32,
        )
        rows = {t: i for i, t in enumerate(vocabulary)}
        kept = TypeVectors(vocabulary, embedder, rows, vectors, similarity_bars(vectors))
        graph.data.put("relation_type_vectors", kept)
    if list(types) == vocabulary:
        return kept.vectors, kept.bar
    return kept.vectors[[kept.rows[t] for t in types]], None
