"""One ``retrieve`` call's request: every argument checked, and every default that does not
depend on the KB settled, once, at the door.

A door (``GuidedRAG.retrieve``/``aretrieve``, the CLI, every adapter through them) builds one
``RetrieveRequest`` with ``RetrieveRequest.build`` and hands it down; nothing below validates an
argument or fills a default in again. What does depend on the KB — the linked semantics, and
the policy's ``k`` and ranker for them — is settled once too, where it is used
(``GuidedRAG``'s ``Question``). A new ``retrieve()`` option is a field here and the code that
uses it.

>>> request = RetrieveRequest.build("Who founded Rome?", settings=Settings(), k=3)
>>> request.k, request.steering, request.auto
(3, 'auto', True)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from guidedrag_graph.config import Settings
from guidedrag_graph.pipeline.question import Selection
from guidedrag_graph.retrieval.filters import ChunkFilter, compile_filter
from guidedrag_graph.retrieve_args import validate
from guidedrag_graph.selection.scope import Scope
from guidedrag_graph.semantics import Semantics


@dataclass(frozen=True)
class RetrieveRequest:
    """A validated ``retrieve`` call (build it with ``build``)."""

    question: str
    selection: Selection
    semantics: Semantics | None
    k: int | None  # None: the steering policy's for the (linked) semantics, else settings'
    ranker: str | None  # None: the steering policy's
    steering: str  # auto | hard | soft (settings' when not given)
    path: str | None  # None: the planner's
    threshold: float | None  # raw cosine (settings' when not given; None: no threshold)
    vector: np.ndarray | None  # the caller's embedding, checked (float32); None: embed
    chunk_filter: ChunkFilter | None  # filters compiled (their keys are checked on the KB)
    link: bool  # auto: link entities from the question when none are stated
    # The trusted scope (issue 35): the GuidedRAG's own, set at the door from the rag that
    # builds the request, never from the question, semantics, filters or selection.
    scope: Scope | None = None

    @classmethod
    def build(
        cls,
        question: str,
        selection: Selection = None,
        *,
        settings: Settings,
        semantics: Semantics | None = None,
        k: int | None = None,
        ranker: str | None = None,
        steering: str | None = None,
        path: str | None = None,
        threshold: float | None = None,
        query_vector: Sequence[float] | None = None,
        filters: Mapping[str, Any] | None = None,
        link: bool | None = None,
        dimensions: Callable[[], int | None] = lambda: None,
        scope: Scope | None = None,
    ) -> RetrieveRequest:
        """Check every argument (one-line ``ConfigurationError``s, ``retrieve_args.validate``)
        and settle the defaults that come from settings. ``dimensions`` is asked for the vector
        index's dimensions only when a ``query_vector`` is given. ``scope``: the door's trusted
        scope (``GuidedRAG.scope``), a parsed ``Scope`` and nothing a caller wrote."""
        args, vector = validate(
            question,
            k=k,
            ranker=ranker,
            steering=steering,
            path=path,
            threshold=threshold,
            query_vector=query_vector,
            settings=settings,
            dimensions=dimensions,
        )
        return cls(
            question=question,
            selection=selection,
            semantics=semantics,
            k=args.k,
            ranker=args.ranker,
            steering=args.steering or settings.steering,
            path=args.path,
            threshold=settings.similarity_threshold if args.threshold is None else args.threshold,
            vector=vector,
            chunk_filter=None if filters is None else compile_filter(filters),
            link=settings.link if link is None else link,
            scope=scope,
        )

    @property
    def auto(self) -> bool:
        """Whether ``auto`` ranks graded tiers (an explicit selection runs hard under it)."""
        return self.steering == "auto" and self.selection is None

    @property
    def mode(self) -> str:
        """The steering that runs: ``auto``, or ``hard``/``soft`` over one selection."""
        if self.auto:
            return "auto"
        return "hard" if self.steering == "auto" else self.steering
