"""One ``retrieve`` call's inputs: the options a caller may pass, and the question once decided
(its request, ``request.py``, with the semantics linked and the policy's ``k`` and ranker).

Kept apart from ``GuidedRAG`` so the ways a question is answered (``auto``, hard/soft
selections) share one record of what was decided about it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

import numpy as np

from guidedrag_graph.pipeline.results import RetrievalResult
from guidedrag_graph.retrieval import CompiledSelectionLike, Ranking
from guidedrag_graph.retrieval.filters import ChunkFilter
from guidedrag_graph.selection import EmptySelection, Expr
from guidedrag_graph.selection.scope import CompiledScope
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
    # The trusted scope compiled (None: none, or it holds the whole KB): every selection, tier,
    # universe and filter of the call is intersected with it (retrieval/in_scope.py).
    scope: CompiledScope | None = None

    def abstain(
        self,
        selection_text: str,
        empty: EmptySelection,
        *,
        steering: str,
        timings: dict[str, float],
    ) -> RetrievalResult:
        """THE abstention of a call: the KB does not know (nothing embedded, searched or
        ranked), with everything decided about the question (its notes and linked names)."""
        return RetrievalResult.abstention(
            self.text,
            selection_text,
            empty,
            ranker=self.ranker,
            steering=steering,
            template=self.template,
            semantics=self.semantics,
            timings=timings,
            notes=list(self.notes),
            linked=list(self.linked),
            unknown_names=list(self.unknown_names),
        )

    def ranked(
        self,
        selection_text: str | None,
        ranking: Ranking,
        *,
        timings: dict[str, float],
        notes: list[str],
        empty: EmptySelection | None = None,
        after: dict[str, float] | None = None,
        steering: str | None = None,
    ) -> RetrievalResult:
        """A ranking of this question as the call's result (``notes``: the question's and
        what its steering added)."""
        return RetrievalResult.ranked(
            self.text,
            selection_text,
            ranking,
            template=self.template,
            semantics=self.semantics,
            timings=timings,
            empty=empty,
            notes=notes,
            after=after,
            steering=steering,
            linked=list(self.linked),
            unknown_names=list(self.unknown_names),
        )
