"""One ``retrieve`` call's inputs: the options a caller may pass, and the question once checked.

Kept apart from ``GuidedRAG`` so the ways a question is answered (``auto``, hard/soft
selections) share one record of what was decided about it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

import numpy as np

from guidedrag_graph.retrieval import CompiledSelectionLike
from guidedrag_graph.retrieval.filters import ChunkFilter
from guidedrag_graph.selection import Expr
from guidedrag_graph.semantics import Semantics
from guidedrag_graph.steering.mapping import PAPER_GUIDED, plan_selection

Selection = Expr | str | CompiledSelectionLike | None


def default_selection(semantics: Semantics | None) -> Expr | None:
    """The paper's GuidedRAG selection (Table 2, GraphRAG* column) for stated semantics."""
    if semantics is None or semantics.is_empty or not semantics.entities:
        return None
    plan = plan_selection(PAPER_GUIDED, semantics)
    return None if plan.is_all else plan.expr


class RetrieveOptions(TypedDict, total=False):
    """``retrieve``'s keyword options, which ``ask`` passes on unchanged."""

    semantics: Semantics | None
    k: int | None
    ranker: str | None
    steering: str | None
    path: str | None
    threshold: float | None
    query_vector: Sequence[float] | None
    filters: Mapping[str, Any] | None
    link: bool | None


@dataclass(frozen=True)
class Question:
    """One ``retrieve`` call after validation: the question and everything decided about it."""

    text: str
    semantics: Semantics | None
    ranker: str
    k: int
    template: str
    path: str | None
    threshold: float | None
    # the caller's embedding of the question, checked (float32), if it has one
    vector: np.ndarray | None
    chunk_filter: ChunkFilter | None = None  # filters: the candidates (U) the ranking is over
    linked: tuple[dict[str, str], ...] = ()
    unknown_names: tuple[str, ...] = ()  # name-like spans of a bare question the KB lacks
    notes: tuple[str, ...] = field(default_factory=tuple)
