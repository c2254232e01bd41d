"""Hard or soft steering over one selection, run: the caller's selection, else the paper's
default for the stated semantics, else every chunk (U).

A name the selection needs and the KB does not know abstains before the question is embedded (no
vector search, no LLM call: the paper's precision result). ``GuidedRAG.retrieve`` decides when
this runs (an explicit selection, or ``steering`` hard/soft); ``auto.py`` is the other way.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from guidedrag_graph.pipeline.auto import no_chunk_passes
from guidedrag_graph.pipeline.question import Question, Selection, default_selection
from guidedrag_graph.pipeline.request_plan import narrowed
from guidedrag_graph.pipeline.results import RetrievalResult
from guidedrag_graph.retrieval import AllChunks, CompiledSelectionLike, Retriever
from guidedrag_graph.schema.presets import SchemaMapping
from guidedrag_graph.selection import (
    Boost,
    EmptySelection,
    Expr,
    PreparedSelection,
    Selector,
    parse,
)
from guidedrag_graph.semantics import Semantics


def retrieve_selection(
    asked: Question,
    selection: Selection,
    steering: str,
    *,
    selector: Selector,
    retriever: Retriever,
    schema: SchemaMapping,
    question_vector: Callable[[Question, dict[str, float]], np.ndarray],
) -> RetrievalResult:
    """Rank ``asked`` under hard or soft ``steering`` (``question_vector`` embeds it, timed,
    only if it ranks)."""
    timings: dict[str, float] = {}
    started = time.perf_counter()
    expr = selection_expr(selector, selection, asked.semantics)
    prepared: PreparedSelection | None = None
    compiled: CompiledSelectionLike
    if expr is not None:
        prepared = selector.prepare(expr)
        timings["selection"] = time.perf_counter() - started
        unknown = _unknown_name(prepared)
        if unknown is not None:  # abstain: nothing embedded, no vector search, no LLM call
            return asked.abstain(expr.to_text(), unknown, steering=steering, timings=timings)
        compiled = prepared.compiled
    elif selection is not None and not isinstance(selection, (str, Expr)):
        compiled = selection
    else:
        compiled = AllChunks(schema)
    text = None if compiled.is_all else (expr.to_text() if expr else "(compiled)")
    # the scope (and the filter) narrow it, inside the query
    compiled = narrowed(compiled, asked.scope, asked.chunk_filter, schema)
    vector = question_vector(asked, timings)
    order = retriever.order(vector, k=asked.k, ranker=asked.ranker, threshold=asked.threshold)
    ranking = retriever.run(order, compiled, steering=steering, path=asked.path)
    empty: EmptySelection | None = None
    after: dict[str, float] = {}
    if ranking.selection_size == 0 and steering == "hard":
        if asked.scope is not None:  # never explained on the whole KB: that would tell of it
            empty = EmptySelection(
                "empty_scope", text or "all()", "the selection holds no chunk in the scope"
            )
        elif asked.chunk_filter is not None:
            empty = no_chunk_passes(asked.chunk_filter)
        elif prepared is not None:
            started = time.perf_counter()
            empty = selector.explain_empty(prepared)
            after["explain_empty"] = time.perf_counter() - started
    return asked.ranked(
        text, ranking, timings=timings, notes=list(asked.notes), empty=empty, after=after
    )


def selection_expr(
    selector: Selector, selection: Selection, semantics: Semantics | None
) -> Expr | None:
    """The expression to prepare: the caller's (parsed with the settings' limits), else the
    semantics' default selection; None for a compiled selection or U."""
    if isinstance(selection, str):
        return parse(selection, selector.limits)
    if isinstance(selection, Expr):
        return selection
    if selection is None:
        return default_selection(semantics)
    return None


def _unknown_name(prepared: PreparedSelection) -> EmptySelection | None:
    """Why a prepared selection must abstain before any embedding: it is empty by resolution
    alone, or it is a boost naming something the KB does not know."""
    if prepared.empty is not None:
        return prepared.empty
    if isinstance(prepared.expr, Boost):
        return next((w for w in prepared.warnings if w.kind.startswith("unknown")), None)
    return None
