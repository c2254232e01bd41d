"""GuidedRAG end to end: semantics → selection → ranking in Neo4j → prompt → LLM (paper §3).

>>> from guidedrag_graph.pipeline import GuidedRAG
>>> from guidedrag_graph.semantics import Semantics
>>> with GuidedRAG(Settings()) as rag:
...     semantics = Semantics(entities=("Ada Lovelace",))
...     answer = rag.ask("Where was Ada Lovelace born?", semantics=semantics)
...     answer.retrieval.selection_size, [c.id for c in answer.retrieval.chunks], answer.text

The selection decides *where* to look; an empty selection means the KB does not know, and we
abstain before embedding the question, before any vector search and before any LLM call (the
paper's precision result). Every stage is timed; the result carries the Cypher that ran.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from neo4j import Driver

from guidedrag_graph.augmentation import AugmentedPrompt, Augmenter
from guidedrag_graph.boosting import prepare_tiers
from guidedrag_graph.config import Settings
from guidedrag_graph.db import connect
from guidedrag_graph.embeddings import Embedder, embedder_for
from guidedrag_graph.generation import Citation, Generator, Usage
from guidedrag_graph.planning import PAPER_GUIDED, plan_selection
from guidedrag_graph.retrieval import (
    AllChunks,
    CompiledSelectionLike,
    RankedChunk,
    Ranking,
    Retriever,
)
from guidedrag_graph.retrieve_args import RetrieveArgs
from guidedrag_graph.schema import SchemaMapping, schema_from_settings
from guidedrag_graph.selection import Boost, EmptySelection, Expr, Selector, parse
from guidedrag_graph.semantics import Semantics
from guidedrag_graph.steering import SteeringDecision, SteeringPolicy
from guidedrag_graph.tiers import plan_auto

if TYPE_CHECKING:
    from openai import OpenAI


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
            "empty": _empty_dict(self.empty),
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


def _empty_dict(empty: EmptySelection | None) -> dict[str, Any] | None:
    if empty is None:
        return None
    return {
        "kind": empty.kind,
        "term": empty.term,
        "message": empty.message,
        "suggestions": list(empty.suggestions),
    }


def default_selection(semantics: Semantics | None) -> Expr | None:
    """The paper's GuidedRAG selection (Table 2, GraphRAG* column) for stated semantics."""
    if semantics is None or semantics.is_empty or not semantics.entities:
        return None
    plan = plan_selection(PAPER_GUIDED, semantics)
    return None if plan.is_all else plan.expr


class GuidedRAG:
    """The pipeline. Opens (and then owns and closes) a driver unless one is given."""

    def __init__(
        self,
        settings: Settings | None = None,
        driver: Driver | None = None,
        *,
        schema: SchemaMapping | None = None,
        embedder: Embedder | None = None,
        policy: SteeringPolicy | None = None,
        llm_client: OpenAI | None = None,
    ) -> None:
        self.settings = settings or Settings()
        self._owns_driver = driver is None
        self.driver = driver if driver is not None else connect(self.settings)
        self.schema = schema or schema_from_settings(self.settings)
        self._embedder = embedder
        if policy is None and self.settings.steering_policy is not None:
            policy = SteeringPolicy.from_file(self.settings.steering_policy)
        self.policy = policy or SteeringPolicy.default()
        self.retriever = Retriever(self.driver, self.settings, self.schema)
        self.selector = Selector(self.driver, self.settings, self.schema)
        self.augmenter = Augmenter(self.driver, self.settings, self.schema)
        self._llm_client = llm_client
        self._generator: Generator | None = None

    # -------------------------------------------------------------- lifecycle
    def close(self) -> None:
        if self._owns_driver:
            self.driver.close()

    def __enter__(self) -> GuidedRAG:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = embedder_for(self.settings)
        return self._embedder

    @property
    def llm_configured(self) -> bool:
        return self._llm_client is not None or self.settings.llm_configured

    def generator(self) -> Generator:
        if self._generator is None:
            self._generator = Generator(self.settings, self._llm_client)
        return self._generator

    # -------------------------------------------------------------- stages
    def decide(
        self, semantics: Semantics | None, ranker: str | None, k: int | None
    ) -> tuple[SteeringDecision, str, int]:
        decision = self.policy.decide(semantics)
        return (
            decision,
            ranker or decision.ranker,
            k or decision.top_k or self.settings.top_k,
        )

    def retrieve(
        self,
        question: str,
        selection: Expr | str | CompiledSelectionLike | None = None,
        *,
        semantics: Semantics | None = None,
        k: int | None = None,
        ranker: str | None = None,
        steering: str | None = None,
        path: str | None = None,
        threshold: float | None = None,
        query_vector: Sequence[float] | None = None,
    ) -> RetrievalResult:
        """Rank chunks for ``question`` inside ``selection``.

        ``selection``: an expression, its DSL text, an already compiled selection, or ``None``
        (then the semantics' default selection, else every chunk). ``steering`` (default from
        settings: ``auto``): ``auto`` ranks every chunk with graded boosts built from the
        semantics (docs/steering.md; an explicit ``selection`` runs hard under ``auto``),
        ``hard`` ranks only inside the selection (the paper), ``soft`` boosts it over U.
        ``ranker`` cosine/mmr and ``k`` default from the policy.
        ``query_vector``: the question already embedded (then it is not embedded again).
        """
        args = RetrieveArgs.check(
            k=k, ranker=ranker, steering=steering, path=path, threshold=threshold
        )
        timings: dict[str, float] = {}
        decision, ranker_name, top_k = self.decide(semantics, args.ranker, args.k)
        steer = args.steering or self.settings.steering
        if steer == "auto" and selection is None:
            return self._retrieve_auto(
                question,
                semantics,
                decision,
                ranker_name,
                top_k,
                args.path,
                args.threshold,
                query_vector,
            )
        if steer == "auto":
            steer = "hard"
        path, threshold = args.path, args.threshold

        started = time.perf_counter()
        expr: Expr | None = None
        compiled: CompiledSelectionLike
        if isinstance(selection, str):
            expr = parse(selection, self.selector.limits)  # the settings' limits, not defaults
        elif isinstance(selection, Expr):
            expr = selection
        elif selection is None:
            expr = default_selection(semantics)
        if expr is not None:
            prepared = self.selector.prepare(expr)
            timings["selection"] = time.perf_counter() - started
            unknown = prepared.empty
            if unknown is None and isinstance(expr, Boost):  # a tier naming the unknown: abstain
                unknown = next((w for w in prepared.warnings if w.kind.startswith("unknown")), None)
            if unknown is not None:
                # Abstain: nothing embedded, no vector search, no LLM call.
                return RetrievalResult(
                    question=question,
                    selection_text=expr.to_text(),
                    selection_size=0,
                    empty=unknown,
                    ranker=ranker_name,
                    chunks=[],
                    cypher="",
                    params={},
                    timings=timings,
                    steering=steer,
                    template=decision.template,
                    semantics=semantics,
                )
            compiled = prepared.compiled
        elif selection is not None and not isinstance(selection, (str, Expr)):
            compiled = selection
        else:
            compiled = AllChunks(self.schema)
        selection_text = None if compiled.is_all else (expr.to_text() if expr else "(compiled)")

        started = time.perf_counter()
        vector = self._question_vector(question, query_vector)
        timings["embedding"] = time.perf_counter() - started

        ranking = self.retriever.rank(
            vector,
            compiled,
            k=top_k,
            ranker=ranker_name,
            steering=steer,
            path=path,
            threshold=threshold,
        )
        for stage, seconds in ranking.timings.items():
            timings[stage] = timings.get(stage, 0.0) + seconds
        empty: EmptySelection | None = None
        if ranking.selection_size == 0 and steer == "hard" and expr is not None:
            started = time.perf_counter()
            empty = self.selector.explain_empty(prepared)
            timings["explain_empty"] = time.perf_counter() - started
        return RetrievalResult(
            question=question,
            selection_text=selection_text,
            selection_size=ranking.selection_size,
            empty=empty,
            ranker=ranker_name,
            chunks=ranking.chunks,
            cypher=ranking.cypher,
            params=ranking.params,
            timings=timings,
            path=ranking.path,
            steering=ranking.steering,
            template=decision.template,
            semantics=semantics,
            notes=ranking.notes,
            queries=ranking.queries,
        )

    def _question_vector(self, question: str, given: Sequence[float] | None) -> np.ndarray:
        """The caller's vector when it has one (neo4j-graphrag passes ``query_vector``)."""
        if given is not None:
            return np.asarray(given, dtype=np.float32).ravel()
        vectors: np.ndarray = self.embedder.embed_queries([question])
        return np.asarray(vectors[0])

    def _retrieve_auto(
        self,
        question: str,
        semantics: Semantics | None,
        decision: SteeringDecision,
        ranker: str,
        k: int,
        path: str | None,
        threshold: float | None,
        query_vector: Sequence[float] | None = None,
    ) -> RetrievalResult:
        """``auto``: graded tiers from the semantics; abstain only on names the KB lacks."""
        timings: dict[str, float] = {}
        started = time.perf_counter()
        plan = plan_auto(semantics, self.policy.tier_weights(semantics))
        prepared = prepare_tiers(self.selector, plan)
        timings["selection"] = time.perf_counter() - started
        if prepared.empty is not None:  # nothing embedded, no vector search, no LLM call
            return RetrievalResult(
                question=question,
                ranker=ranker,
                template=decision.template,
                selection_text=plan.text(),
                selection_size=0,
                empty=prepared.empty,
                chunks=[],
                cypher="",
                params={},
                timings=timings,
                steering="auto",
                semantics=semantics,
            )
        started = time.perf_counter()
        vector = self._question_vector(question, query_vector)
        timings["embedding"] = time.perf_counter() - started
        notes: list[str] = []
        ranking: Ranking
        if prepared.compiled is None:
            notes.append("auto: the semantics name no entity, so every chunk ranks by cosine")
            ranking = self.retriever.rank(
                vector, AllChunks(self.schema), k=k, ranker=ranker, path=path, threshold=threshold
            )
        else:
            ranking = self.retriever.rank_tiers(
                vector, prepared.compiled, k=k, ranker=ranker, threshold=threshold
            )
            if ranking.tier_sizes.get("∩") == 0:
                notes.append(
                    "auto: the named entities share no chunk (empty ∩); relaxed to their "
                    "union (tier E) instead of abstaining"
                )
        for stage, seconds in ranking.timings.items():
            timings[stage] = timings.get(stage, 0.0) + seconds
        return RetrievalResult(
            question=question,
            ranker=ranker,
            template=decision.template,
            selection_text=None if prepared.expr is None else prepared.expr.to_text(),
            selection_size=None,
            empty=None,
            chunks=ranking.chunks,
            cypher=ranking.cypher,
            params=ranking.params,
            timings=timings,
            path=ranking.path,
            steering="auto",
            semantics=semantics,
            notes=notes + ranking.notes,
            queries=ranking.queries,
            tier_sizes=ranking.tier_sizes,
        )

    def ask(
        self,
        question: str,
        selection: Expr | str | CompiledSelectionLike | None = None,
        *,
        semantics: Semantics | None = None,
        k: int | None = None,
        ranker: str | None = None,
        steering: str | None = None,
        path: str | None = None,
        threshold: float | None = None,
        template: str | None = None,
    ) -> Answer:
        """Retrieve, augment and generate. Without an LLM configured, ``text`` is None and
        ``reason`` says so; the prompt is still built so callers can show it."""
        retrieval = self.retrieve(
            question,
            selection,
            semantics=semantics,
            k=k,
            ranker=ranker,
            steering=steering,
            path=path,
            threshold=threshold,
        )
        timings = dict(retrieval.timings)
        if retrieval.empty is not None or (
            not retrieval.chunks and retrieval.steering in ("hard", "auto")
        ):
            reason = (
                retrieval.empty.message
                if retrieval.empty is not None
                else "no chunk passed the similarity threshold"
            )
            return Answer(
                text=None,
                abstained=True,
                reason=reason,
                citations=[],
                prompt=None,
                usage=None,
                retrieval=retrieval,
                timings=timings,
            )
        started = time.perf_counter()
        prompt = self.augmenter.augment(
            question,
            retrieval.chunks,
            semantics=semantics,
            template=template or retrieval.template,
        )
        timings["augmentation"] = time.perf_counter() - started
        if not self.llm_configured:
            return Answer(
                text=None,
                abstained=False,
                reason="no LLM is configured (set OPENAI_BASE_URL and/or OPENAI_API_KEY); "
                "showing the retrieved context and the augmented prompt",
                citations=[],
                prompt=prompt,
                usage=None,
                retrieval=retrieval,
                timings=timings,
            )
        generation = self.generator().generate(prompt)
        timings["generation"] = generation.latency_s
        return Answer(
            text=generation.text,
            abstained=False,
            reason=None,
            citations=generation.citations,
            prompt=prompt,
            usage=generation.usage,
            retrieval=retrieval,
            timings=timings,
            invalid_citations=generation.invalid_citations,
            llm_called=True,
        )
