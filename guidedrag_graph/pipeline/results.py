"""What the pipeline returns: a retrieval (with its provenance) and an answer built on it.

Both carry everything a caller needs to trust or debug them — the selection and its size, the
Cypher that ran, per-stage timings, the steering notes — and serialise to plain JSON for the
CLI and the evaluation harness. The constructors below are the only ways results are built, so
an abstention always looks the same whichever stage decided it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from guidedrag_graph.generation import Citation, Generation, Usage
from guidedrag_graph.retrieval import RankedChunk, Ranking
from guidedrag_graph.selection import EmptySelection
from guidedrag_graph.semantics import Semantics

if TYPE_CHECKING:
    from guidedrag_graph.augmentation import AugmentedPrompt


@dataclass
class RetrievalResult:
    """What retrieval found, how, and at what cost (timings in seconds, per stage)."""

    question: str
    selection_text: str | None  # None = all chunks (base RAG)
    selection_size: int | None  # None when the selection is U (not counted)
    empty: EmptySelection | None  # set when we abstained before any vector search
    ranker: str
    chunks: list[RankedChunk]
    cypher: str
    params: dict[str, Any]
    timings: dict[str, float]
    path: str | None = None  # exact / index / search_in (None when we abstained)
    steering: str = "hard"
    template: str = "factoid"
    semantics: Semantics | None = None
    notes: list[str] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    tier_sizes: dict[str, int] = field(default_factory=dict)  # auto: chunks in each tier
    # auto: entities ({span, entity, match}) and relation types ({span, relation, match}) linked
    linked: list[dict[str, str]] = field(default_factory=list)
    # auto, bare question: spans that look like names and match no entity of the KB
    unknown_names: list[str] = field(default_factory=list)

    @classmethod
    def abstention(
        cls,
        question: str,
        selection_text: str,
        empty: EmptySelection,
        *,
        ranker: str,
        steering: str,
        template: str,
        semantics: Semantics | None,
        timings: dict[str, float],
        notes: list[str] | None = None,
        linked: list[dict[str, str]] | None = None,
        unknown_names: list[str] | None = None,
    ) -> RetrievalResult:
        """The KB does not know: nothing was embedded, searched or ranked."""
        return cls(
            question=question,
            selection_text=selection_text,
            selection_size=0,
            empty=empty,
            ranker=ranker,
            chunks=[],
            cypher="",
            params={},
            timings=timings,
            steering=steering,
            template=template,
            semantics=semantics,
            notes=list(notes or []),
            linked=list(linked or []),
            unknown_names=list(unknown_names or []),
        )

    @classmethod
    def ranked(
        cls,
        question: str,
        selection_text: str | None,
        ranking: Ranking,
        *,
        template: str,
        semantics: Semantics | None,
        timings: dict[str, float],
        empty: EmptySelection | None = None,
        notes: list[str] | None = None,
        after: dict[str, float] | None = None,
        steering: str | None = None,
        linked: list[dict[str, str]] | None = None,
        unknown_names: list[str] | None = None,
    ) -> RetrievalResult:
        """A ranking's chunks and provenance. ``timings`` are the stages before the ranking and
        ``after`` those after it (explaining an empty selection); ``steering`` overrides the
        ranking's own (auto ranks U plainly when no entity is named, and is still auto)."""
        merged = dict(timings)
        for stage, seconds in {**ranking.timings, **(after or {})}.items():
            merged[stage] = merged.get(stage, 0.0) + seconds
        return cls(
            question=question,
            selection_text=selection_text,
            selection_size=ranking.selection_size,
            empty=empty,
            ranker=ranking.ranker,
            chunks=ranking.chunks,
            cypher=ranking.cypher,
            params=ranking.params,
            timings=merged,
            path=ranking.path,
            steering=steering or ranking.steering,
            template=template,
            semantics=semantics,
            notes=(notes or []) + ranking.notes,
            queries=ranking.queries,
            tier_sizes=ranking.tier_sizes,
            linked=list(linked or []),
            unknown_names=list(unknown_names or []),
        )

    @property
    def abstained(self) -> bool:
        return self.empty is not None

    def to_dict(self, *, with_query_vector: bool = False) -> dict[str, Any]:
        params = {k: v for k, v in self.params.items() if with_query_vector or k != "query_vector"}
        return {
            "question": self.question,
            "selection": self.selection_text,
            "selection_size": self.selection_size,
            "abstained": self.abstained,
            "empty": None if self.empty is None else self.empty.to_json(),
            "ranker": self.ranker,
            "path": self.path,
            "steering": self.steering,
            "template": self.template,
            "chunks": [c.to_dict() for c in self.chunks],
            "cypher": self.cypher,
            "params": params,
            "timings": self.timings,
            "notes": self.notes,
            "tier_sizes": self.tier_sizes,
            "linked": self.linked,
            "unknown_names": self.unknown_names,
            "semantics": None
            if self.semantics is None
            else self.semantics.model_dump(mode="json", exclude_defaults=True),
        }


@dataclass
class Answer:
    """The answer (``text`` None when we abstained or no LLM is configured) and its provenance."""

    text: str | None
    abstained: bool
    reason: str | None
    citations: list[Citation]
    prompt: AugmentedPrompt | None
    usage: Usage | None
    retrieval: RetrievalResult
    timings: dict[str, float]
    invalid_citations: list[str] = field(default_factory=list)
    llm_called: bool = False

    @classmethod
    def abstention(cls, retrieval: RetrievalResult, reason: str) -> Answer:
        """No answer, because retrieval says the KB does not know (no LLM call)."""
        return cls(None, True, reason, [], None, None, retrieval, dict(retrieval.timings))

    @classmethod
    def prompt_only(
        cls, retrieval: RetrievalResult, prompt: AugmentedPrompt, timings: dict[str, float]
    ) -> Answer:
        """No LLM is configured: the context and the prompt, for the caller to show."""
        reason = (
            "no LLM is configured (set OPENAI_BASE_URL and/or OPENAI_API_KEY); "
            "showing the retrieved context and the augmented prompt"
        )
        return cls(None, False, reason, [], prompt, None, retrieval, timings)

    @classmethod
    def generated(
        cls,
        retrieval: RetrievalResult,
        prompt: AugmentedPrompt,
        generation: Generation,
        timings: dict[str, float],
    ) -> Answer:
        return cls(
            text=generation.text,
            abstained=False,
            reason=None,
            citations=generation.citations,
            prompt=prompt,
            usage=generation.usage,
            retrieval=retrieval,
            timings={**timings, "generation": generation.latency_s},
            invalid_citations=generation.invalid_citations,
            llm_called=True,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "abstained": self.abstained,
            "reason": self.reason,
            "citations": [c.__dict__ for c in self.citations],
            "invalid_citations": self.invalid_citations,
            "usage": None if self.usage is None else self.usage.__dict__,
            "llm_called": self.llm_called,
            "prompt": None if self.prompt is None else self.prompt.text,
            "prompt_tokens_estimate": None if self.prompt is None else self.prompt.token_estimate,
            "retrieval": self.retrieval.to_dict(),
            "timings": self.timings,
        }
