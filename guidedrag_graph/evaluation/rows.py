"""One retrieval, one row of ``results.json``: what ran, what it found, where the gold landed.

:func:`retrieval_row` measures a :class:`RetrievalResult` the same way for every approach (hit
position, all-gold recall, rounded cosines); :func:`planned_row` runs an approach whose
selection the paper's mapping plans (hard or soft steering). The ``auto`` approaches have their
own runner in :mod:`~guidedrag_graph.evaluation.auto_rows`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from guidedrag_graph.evaluation.kb_queries import gold_in_selection
from guidedrag_graph.evaluation.metrics import all_gold_recall_at_k, hit_position
from guidedrag_graph.evaluation.records import Row
from guidedrag_graph.kb import Question
from guidedrag_graph.pipeline import GuidedRAG, RetrievalResult
from guidedrag_graph.selection import Expr, Selector
from guidedrag_graph.steering.mapping import Plan


@dataclass(frozen=True)
class Formulation:
    """One way of asking one question of a set: as written (variant 0) or a paraphrase."""

    set_name: str  # "answerable" | "unanswerable"
    question: Question
    text: str
    variant: int

    @property
    def answerable(self) -> bool:
        return self.set_name == "answerable"


class SelectionSizer:
    """Chunk counts of selections, memoised: the relaxed policy asks for the same ∩ repeatedly."""

    def __init__(self, selector: Selector) -> None:
        self._selector = selector
        self._cache: dict[str, int] = {}

    def __call__(self, expr: Expr) -> int:
        key = expr.to_text()
        if key not in self._cache:
            prep = self._selector.prepare(expr)
            self._cache[key] = 0 if prep.empty is not None else self._selector.sizes(prep).size
        return self._cache[key]


def retrieval_row(
    result: RetrievalResult,
    latency: float,
    asked: Formulation,
    k: int,
    *,
    approach: str,
    configuration: str,
    cell: str,
    selection: str,
    steering: str,
    entities: list[str],
    selection_size: int | None,
    note: str | None,
    gold_in_selection: bool | None,
) -> Row:
    """The row for ``result``; hit position and recall only where the question is answerable."""
    ranked = [c.id for c in result.chunks]
    answerable, question = asked.answerable, asked.question
    gold = question.all_gold_chunk_ids or question.gold_chunk_ids
    return Row(
        set=asked.set_name,
        question_id=question.id,
        variant=asked.variant,
        approach=approach,
        configuration=configuration,
        cell=cell,
        selection=selection,
        steering=steering,
        entities=entities,
        selection_size=selection_size,
        empty=None if result.empty is None else f"{result.empty.kind}: {result.empty.term}",
        ranked=ranked,
        cosines=[round(float(c.cosine), 5) for c in result.chunks],
        in_selection=[bool(c.in_selection) for c in result.chunks],
        hit_position=hit_position(ranked, question.gold_chunk_ids, k) if answerable else None,
        all_gold_recall=all_gold_recall_at_k(ranked, gold, k) if answerable else None,
        latency_s=round(latency, 6),
        timings={name: round(float(v), 6) for name, v in result.timings.items()},
        note=note,
        gold_in_selection=gold_in_selection,
        linked_relations=[
            f"{n['span']} -> {n['relation']} ({n['match']})"
            for n in result.linked
            if "relation" in n
        ],
        unknown_names=list(result.unknown_names),
        path=result.path,
    )


def planned_row(
    rag: GuidedRAG,
    asked: Formulation,
    *,
    plan: Plan,
    k: int,
    total_chunks: int,
    path: str | None = None,
) -> Row:
    """Retrieve ``asked`` inside the planned selection, ranked by cosine as in the paper."""
    question = asked.question
    start = time.perf_counter()
    result = rag.retrieve(
        asked.text,
        plan.expr,  # always explicit: None would let the pipeline pick its default selection
        semantics=question.semantics,
        k=k,
        ranker="cosine",  # the paper ranks every approach by cosine (§4.2)
        steering=plan.steering,
        path=path,
    )
    latency = time.perf_counter() - start
    size = result.selection_size
    if size is None and plan.is_all:
        size = total_chunks
    if result.empty is not None:
        size = 0
    gold_inside: bool | None = None
    if asked.answerable:
        # Measured after the clock stopped: one more read query, not part of the retrieval.
        gold_inside = (
            bool(question.gold_chunk_ids)
            if plan.is_all
            else gold_in_selection(rag.selector, rag.settings, plan.expr, question.gold_chunk_ids)
        )
    return retrieval_row(
        result,
        latency,
        asked,
        k,
        approach=plan.approach,
        configuration=str(plan.configuration),
        cell=plan.cell,
        selection=plan.expr.to_text(),
        steering=plan.steering,
        entities=list(plan.entities),
        selection_size=size,
        note=plan.note,
        gold_in_selection=gold_inside,
    )
