"""``GuidedRAG``: semantics → selection → ranking in Neo4j → prompt → LLM (paper §3).

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
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Unpack

import numpy as np
from neo4j import Driver

from guidedrag_graph import templates
from guidedrag_graph.augmentation import Augmenter
from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.embeddings import Embedder, embedder_for
from guidedrag_graph.generation import Generator
from guidedrag_graph.pipeline.auto import no_chunk_passes, retrieve_auto
from guidedrag_graph.pipeline.linked import (
    AutoSemantics,
    forgive_relations,
    link_beside_stated,
    link_semantics,
    relations_beside_stated,
)
from guidedrag_graph.pipeline.question import (
    Question,
    RetrieveOptions,
    Selection,
    default_selection,
)
from guidedrag_graph.pipeline.results import Answer, RetrievalResult
from guidedrag_graph.read_deadline import budgeted
from guidedrag_graph.retrieval import AllChunks, CompiledSelectionLike, Retriever
from guidedrag_graph.retrieval.filters import (
    ChunkFilter,
    FilteredSelection,
    check_fields,
    compile_filter,
)
from guidedrag_graph.retrieve_args import RetrieveArgs, check_inputs
from guidedrag_graph.schema import SchemaMapping
from guidedrag_graph.selection import (
    Boost,
    EmptySelection,
    Expr,
    PreparedSelection,
    Selector,
    parse,
)
from guidedrag_graph.semantics import Semantics
from guidedrag_graph.steering.policy import SteeringPolicy

if TYPE_CHECKING:
    from openai import OpenAI


class GuidedRAG:
    """The pipeline over one ``GraphContext`` (opened, and then owned and closed, unless a
    driver is given)."""

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
        self.graph = GraphContext.open(settings, driver, schema)
        self._embedder = embedder
        if policy is None and self.settings.steering_policy is not None:
            policy = SteeringPolicy.from_file(self.settings.steering_policy)
        self.policy = policy or SteeringPolicy.default()
        self.retriever = Retriever(self.graph)
        self.selector = Selector(self.graph)
        self.augmenter = Augmenter(self.graph)
        self._llm_client = llm_client
        self._generator: Generator | None = None

    # -------------------------------------------------------------- lifecycle
    @property
    def settings(self) -> Settings:
        return self.graph.settings

    @property
    def driver(self) -> Driver:
        return self.graph.driver

    @property
    def schema(self) -> SchemaMapping:
        return self.graph.schema

    def close(self) -> None:
        self.graph.close()

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

    # -------------------------------------------------------------- retrieval
    @budgeted
    def retrieve(
        self,
        question: str,
        selection: Selection = None,
        *,
        semantics: Semantics | None = None,
        k: int | None = None,
        ranker: str | None = None,
        steering: str | None = None,
        path: str | None = None,
        threshold: float | None = None,
        query_vector: Sequence[float] | None = None,
        filters: Mapping[str, Any] | None = None,
        link: bool | None = None,
    ) -> RetrievalResult:
        """Rank chunks for ``question`` inside ``selection``.

        ``selection``: an expression, its DSL text, an already compiled selection, or ``None``
        (then the semantics' default selection, else every chunk). ``steering`` (default from
        settings: ``auto``): ``auto`` ranks every chunk with graded boosts built from the
        semantics (docs/steering.md; an explicit ``selection`` runs hard under ``auto``),
        ``hard`` ranks only inside the selection (the paper), ``soft`` boosts it over U.
        ``ranker`` cosine/mmr and ``k`` default from the policy.
        ``query_vector``: the question already embedded (then it is not embedded again).
        ``filters``: neo4j-graphrag metadata filters on chunk properties; they restrict the
        candidates (the universe the tiers rank over, or the selection), compiled into the
        ranking query (retrieval/filters.py). ``link`` (default: settings ``link``, on): under
        ``auto``, when the semantics name no entity, link them from the question
        (``EntityLinker``); linked names never cause an abstention, stated ones do.
        """
        args = RetrieveArgs.check(
            k=k, ranker=ranker, steering=steering, path=path, threshold=threshold
        )
        vector = check_inputs(
            question, k=k, query_vector=query_vector, settings=self.settings, driver=self.driver
        )
        chunk_filter = self._chunk_filter(filters)
        steer = args.steering or self.settings.steering
        auto = steer == "auto" and selection is None
        prepared_semantics = (
            self._auto_semantics(question, semantics, link) if auto else AutoSemantics(semantics)
        )
        semantics = prepared_semantics.semantics
        decision = self.policy.decide(semantics)
        asked = Question(
            text=question,
            semantics=semantics,
            ranker=args.ranker or decision.ranker,
            k=args.k or decision.top_k or self.settings.top_k,
            template=decision.template,
            path=args.path,
            threshold=args.threshold,
            vector=vector,
            chunk_filter=chunk_filter,
            linked=prepared_semantics.linked_dicts(),
            unknown_names=prepared_semantics.unknown,
            notes=prepared_semantics.notes,
        )
        mode = "auto" if auto else ("hard" if steer == "auto" else steer)
        if chunk_filter is not None and not self.graph.read(
            chunk_filter.any_query(self.schema), chunk_filter.params
        ):  # no chunk passes the filters: nothing embedded, no vector search, no LLM call
            return RetrievalResult.abstention(
                question,
                "filters",
                no_chunk_passes(chunk_filter),
                ranker=asked.ranker,
                steering=mode,
                template=asked.template,
                semantics=semantics,
                timings={},
                notes=list(asked.notes),
                linked=list(asked.linked),
                unknown_names=list(asked.unknown_names),
            )
        if auto:
            return self._retrieve_auto(asked)
        return self._retrieve_selection(asked, selection, mode)

    def _chunk_filter(self, filters: Mapping[str, Any] | None) -> ChunkFilter | None:
        """``filters`` compiled, every property they name checked against the database."""
        if filters is None:
            return None
        chunk_filter = compile_filter(filters)
        rows = self.graph.read(templates.query("property_keys", self.schema), {})
        check_fields(chunk_filter, set(rows[0]["keys"]) if rows else set(), self.schema)
        return chunk_filter

    def _auto_semantics(
        self, question: str, semantics: Semantics | None, link: bool | None
    ) -> AutoSemantics:
        """``auto``'s semantics: stated entities as given, else linked from the question (unless
        ``link`` / settings turn it off); unknown relation types forgiven."""
        linked = AutoSemantics(semantics)
        link_on = self.settings.link if link is None else link
        if semantics is not None and semantics.entities:
            if link_on and self.settings.link_beside_stated:
                linked = link_beside_stated(self.graph, self.selector, question, semantics)
            if link_on and linked.semantics is not None:
                more = relations_beside_stated(
                    self.graph,
                    question,
                    linked.semantics,
                    self.embedder,
                    self.settings.link_relations,
                )
                linked = AutoSemantics(
                    more.semantics, linked.linked, linked.notes, more.relations, linked.unknown
                )
        elif link_on:
            linked = link_semantics(
                self.graph,
                self.selector,
                question,
                semantics,
                embedder=self.embedder,
                relations=self.settings.link_relations,
            )
        forgiven = forgive_relations(self.selector, linked.semantics)
        return AutoSemantics(
            forgiven.semantics,
            linked.linked,
            linked.notes + forgiven.notes,
            linked.relations,
            linked.unknown,
        )

    def _retrieve_selection(
        self, asked: Question, selection: Selection, steering: str
    ) -> RetrievalResult:
        """Hard or soft steering over one selection; abstain on names the KB does not know."""
        timings: dict[str, float] = {}
        started = time.perf_counter()
        expr = self._selection_expr(selection, asked.semantics)
        prepared: PreparedSelection | None = None
        compiled: CompiledSelectionLike
        if expr is not None:
            prepared = self.selector.prepare(expr)
            timings["selection"] = time.perf_counter() - started
            unknown = _unknown_name(prepared)
            if unknown is not None:  # abstain: nothing embedded, no vector search, no LLM call
                return RetrievalResult.abstention(
                    asked.text,
                    expr.to_text(),
                    unknown,
                    ranker=asked.ranker,
                    steering=steering,
                    template=asked.template,
                    semantics=asked.semantics,
                    timings=timings,
                )
            compiled = prepared.compiled
        elif selection is not None and not isinstance(selection, (str, Expr)):
            compiled = selection
        else:
            compiled = AllChunks(self.schema)
        text = None if compiled.is_all else (expr.to_text() if expr else "(compiled)")
        if asked.chunk_filter is not None:  # the filter narrows the selection, inside the query
            compiled = FilteredSelection(compiled, asked.chunk_filter, self.schema)
        vector = self._question_vector(asked, timings)
        ranking = self.retriever.rank(
            vector,
            compiled,
            k=asked.k,
            ranker=asked.ranker,
            steering=steering,
            path=asked.path,
            threshold=asked.threshold,
        )
        empty: EmptySelection | None = None
        after: dict[str, float] = {}
        if ranking.selection_size == 0 and steering == "hard":
            if asked.chunk_filter is not None:
                empty = no_chunk_passes(asked.chunk_filter)
            elif prepared is not None:
                started = time.perf_counter()
                empty = self.selector.explain_empty(prepared)
                after["explain_empty"] = time.perf_counter() - started
        return RetrievalResult.ranked(
            asked.text,
            text,
            ranking,
            template=asked.template,
            semantics=asked.semantics,
            timings=timings,
            empty=empty,
            after=after,
            notes=list(asked.notes),
            linked=list(asked.linked),
            unknown_names=list(asked.unknown_names),
        )

    def _selection_expr(self, selection: Selection, semantics: Semantics | None) -> Expr | None:
        """The expression to prepare: the caller's (parsed with the settings' limits), else
        the semantics' default selection; None for a compiled selection or U."""
        if isinstance(selection, str):
            return parse(selection, self.selector.limits)
        if isinstance(selection, Expr):
            return selection
        if selection is None:
            return default_selection(semantics)
        return None

    def _retrieve_auto(self, asked: Question) -> RetrievalResult:
        """``auto``: graded tiers from the semantics; abstain only on names the user stated."""
        return retrieve_auto(
            asked,
            policy=self.policy,
            selector=self.selector,
            retriever=self.retriever,
            schema=self.schema,
            question_vector=self._question_vector,
            guarantee=self.settings.guarantee_entities,
        )

    def _question_vector(self, asked: Question, timings: dict[str, float]) -> np.ndarray:
        """The caller's vector when it has one (neo4j-graphrag passes ``query_vector``), else
        the question embedded (timed as ``embedding``)."""
        started = time.perf_counter()
        if asked.vector is not None:
            vector = np.asarray(asked.vector, dtype=np.float32).ravel()
        else:
            vector = np.asarray(self.embedder.embed_queries([asked.text])[0])
        timings["embedding"] = time.perf_counter() - started
        return vector

    # -------------------------------------------------------------- answers
    def ask(
        self,
        question: str,
        selection: Selection = None,
        *,
        template: str | None = None,
        **options: Unpack[RetrieveOptions],
    ) -> Answer:
        """Retrieve (``options`` as for ``retrieve``), augment and generate. Without an LLM
        configured, ``text`` is None and ``reason`` says so; the prompt is still built so
        callers can show it."""
        retrieval = self.retrieve(question, selection, **options)
        semantics = retrieval.semantics  # as stated, or with the entities auto linked
        if retrieval.empty is not None:
            return Answer.abstention(retrieval, retrieval.empty.message)
        if not retrieval.chunks and retrieval.steering in ("hard", "auto"):
            return Answer.abstention(retrieval, "no chunk passed the similarity threshold")
        started = time.perf_counter()
        prompt = self.augmenter.augment(
            question,
            retrieval.chunks,
            semantics=semantics,
            template=template or retrieval.template,
        )
        timings = {**retrieval.timings, "augmentation": time.perf_counter() - started}
        if not self.llm_configured:
            return Answer.prompt_only(retrieval, prompt, timings)
        return Answer.generated(retrieval, prompt, self.generator().generate(prompt), timings)


def _unknown_name(prepared: PreparedSelection) -> EmptySelection | None:
    """Why a prepared selection must abstain before any embedding: it is empty by resolution
    alone, or it is a boost naming something the KB does not know."""
    if prepared.empty is not None:
        return prepared.empty
    if isinstance(prepared.expr, Boost):
        return next((w for w in prepared.warnings if w.kind.startswith("unknown")), None)
    return None
