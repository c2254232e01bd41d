"""The ``auto`` default, run: graded tiers from the semantics, ranked over every chunk (U).

A name the *user* stated and the KB does not know abstains before the question is embedded (no
vector search, no LLM call: the paper's precision result); everything else ranks, with notes
saying what was relaxed. ``GuidedRAG.retrieve`` decides when this runs; this module is how.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from guidedrag_graph.pipeline.guarantee import guarantee_entities
from guidedrag_graph.pipeline.request_plan import narrowed, narrowed_tiers
from guidedrag_graph.pipeline.results import RetrievalResult
from guidedrag_graph.retrieval import (
    AllChunks,
    RankedChunk,
    Ranking,
    Retriever,
)
from guidedrag_graph.retrieval.filters import ChunkFilter
from guidedrag_graph.schema.presets import SchemaMapping
from guidedrag_graph.selection import EmptySelection, Selector, entity
from guidedrag_graph.steering.policy import SteeringPolicy
from guidedrag_graph.steering.tier_prep import prepare_tiers
from guidedrag_graph.steering.tiers import plan_auto

if TYPE_CHECKING:
    from guidedrag_graph.pipeline.question import Question


def retrieve_auto(
    asked: Question,
    *,
    policy: SteeringPolicy,
    selector: Selector,
    retriever: Retriever,
    schema: SchemaMapping,
    question_vector: Callable[[Question, dict[str, float]], np.ndarray],
    guarantee: bool = False,
) -> RetrievalResult:
    """Rank ``asked`` under ``auto`` (``question_vector`` embeds it, timed, only if it ranks);
    ``guarantee``: every named entity keeps its best chunk in the top k
    (``pipeline/guarantee.py``)."""
    timings: dict[str, float] = {}
    started = time.perf_counter()
    plan = plan_auto(asked.semantics, policy.tier_weights(asked.semantics))
    prepared = prepare_tiers(selector, plan, retriever.paths.variant)
    timings["selection"] = time.perf_counter() - started
    if prepared.empty is not None:  # nothing embedded, no vector search, no LLM call
        return asked.abstain(plan.text(), prepared.empty, steering="auto", timings=timings)
    vector = question_vector(asked, timings)
    order = retriever.order(vector, k=asked.k, ranker=asked.ranker, threshold=asked.threshold)
    notes: list[str] = list(asked.notes)
    ranking: Ranking
    empty: EmptySelection | None = None
    if prepared.compiled is None:
        notes.append("auto: the semantics name no entity, so every chunk ranks by cosine")
        # U is the scope's chunks (and those the filter passes)
        universe = narrowed(AllChunks(schema), asked.scope, asked.chunk_filter, schema)
        ranking = retriever.run(order, universe, path=asked.path)
        if asked.chunk_filter is not None and ranking.selection_size == 0:
            empty = no_chunk_passes(asked.chunk_filter)
    else:
        # U = the scope (narrowed by the filter), or the chunks that pass; every tier inside it
        tiers = narrowed_tiers(prepared.compiled, asked.scope, asked.chunk_filter, schema)
        ranking = retriever.run(order, tiers)
        if ranking.tier_sizes.get("∩") == 0:
            notes.append(
                "auto: the named entities share no chunk (empty ∩); relaxed to their "
                "union (tier E) instead of abstaining"
            )
        if asked.chunk_filter is not None and ranking.tier_sizes.get("U") == 0:
            empty = no_chunk_passes(asked.chunk_filter)
        if guarantee and plan.entities and ranking.chunks:
            ranking = _with_every_entity(asked, plan.entities, ranking, vector, selector, retriever)
    return asked.ranked(
        prepared.text, ranking, timings=timings, notes=notes, steering="auto", empty=empty
    )


def _with_every_entity(
    asked: Question,
    entities: tuple[str, ...],
    ranking: Ranking,
    vector: np.ndarray,
    selector: Selector,
    retriever: Retriever,
) -> Ranking:
    """``ranking`` with each entity's best chunk put back where none of its chunks made it."""
    k = len(ranking.chunks)
    per_entity: list[list[RankedChunk]] = []
    for name in dict.fromkeys(entities):
        prepared = selector.prepare(entity(name))
        if prepared.empty is not None:
            per_entity.append([])
            continue
        own = narrowed(prepared.compiled, asked.scope, asked.chunk_filter, selector.schema)
        order = retriever.order(vector, k=k, ranker="cosine", threshold=None)
        per_entity.append(retriever.run(order, own).chunks)
    chunks = guarantee_entities(ranking.chunks, per_entity, k)
    if [c.id for c in chunks] == [c.id for c in ranking.chunks]:
        return ranking
    note = "auto: a named entity's best chunk put back into the top k (multi-passage recall)"
    return replace(ranking, chunks=chunks, notes=[*ranking.notes, note])


def no_chunk_passes(chunk_filter: ChunkFilter) -> EmptySelection:
    """The answer when no chunk passes the filters: the KB has nothing to rank."""
    return EmptySelection(
        "empty_term",
        "filters",
        f"no chunk matches the filters {dict(chunk_filter.source)!r}",
    )
