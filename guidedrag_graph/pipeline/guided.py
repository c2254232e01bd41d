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

import copy
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Unpack

import numpy as np
from neo4j import AsyncDriver, Driver

from guidedrag_graph.augmentation import Augmenter
from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.db.deadline import budgeted, call_budget
from guidedrag_graph.db.reads import bridged, off_loop, open_async_driver
from guidedrag_graph.embeddings import Embedder, embedder_for
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.generation import Generator
from guidedrag_graph.pipeline.auto import no_chunk_passes, retrieve_auto
from guidedrag_graph.pipeline.filter_reads import checked_filter, filter_abstains
from guidedrag_graph.pipeline.linked import AutoSemantics, auto_semantics
from guidedrag_graph.pipeline.prompting import Prompted, prompted
from guidedrag_graph.pipeline.question import Question, RetrieveOptions, Selection
from guidedrag_graph.pipeline.request import RetrieveRequest
from guidedrag_graph.pipeline.results import Answer, RetrievalResult
from guidedrag_graph.pipeline.scoping import on_one_version, scope_abstention
from guidedrag_graph.pipeline.selected import retrieve_selection
from guidedrag_graph.retrieval import Retriever
from guidedrag_graph.retrieve_args import index_dimensions
from guidedrag_graph.schema.presets import SchemaMapping
from guidedrag_graph.selection import Selector
from guidedrag_graph.selection.scope import (
    CompiledScope,
    Scope,
    ScopeInput,
    deployment_scope,
    narrow,
)
from guidedrag_graph.selection.scope_names import scoped_selector
from guidedrag_graph.semantics import Semantics
from guidedrag_graph.steering.policy import SteeringPolicy

if TYPE_CHECKING:
    from openai import AsyncOpenAI, OpenAI


class GuidedRAG:
    """The pipeline over one ``GraphContext`` (opened, and then owned and closed, unless a
    driver is given)."""

    def __init__(
        self,
        settings: Settings | None = None,
        driver: Driver | AsyncDriver | None = None,
        *,
        schema: SchemaMapping | None = None,
        embedder: Embedder | None = None,
        policy: SteeringPolicy | None = None,
        llm_client: OpenAI | None = None,
        async_llm_client: AsyncOpenAI | None = None,
        scope: ScopeInput = None,
    ) -> None:
        """``scope`` (trusted, server-side code only): the chunks this instance may read, a
        selection; it narrows ``GUIDEDRAG_SCOPE`` when both are set (docs/security.md)."""
        given = Scope.parse(scope, where="GuidedRAG(scope=...)")  # a bad one: before connecting
        # an AsyncDriver is read through the bridge (``aopen``: its reads are awaited)
        self.graph = GraphContext.open(settings, driver, schema)  # type: ignore[arg-type]
        self._embedder = embedder
        if policy is None and self.settings.steering_policy is not None:
            policy = SteeringPolicy.from_file(self.settings.steering_policy)
        self.policy = policy or SteeringPolicy.default()
        self.retriever = Retriever(self.graph)
        self.selector = Selector(self.graph)
        self.augmenter = Augmenter(self.graph)
        self._llm_client = llm_client
        self._async_llm_client = async_llm_client
        self._generator: Generator | None = None
        deployment = deployment_scope(self.settings.scope)
        self._scope = narrow(deployment, given, where="GuidedRAG(scope=...)")
        self._view = False

    @property
    def scope(self) -> Scope | None:
        """The trusted scope every call of this instance is intersected with (None: the KB)."""
        return self._scope

    def scoped(self, scope: ScopeInput) -> GuidedRAG:
        """A view of this instance narrowed to ``scope`` (intersected with its own: a view
        never widens). It shares the context, the KB's warm state, the driver, the embedder
        and the LLM clients; closing it closes nothing (the instance it came from owns them).
        Per user, server side: ``rag.scoped("document('Euro') | document('Yen')")``."""
        view = copy.copy(self)
        view._scope = narrow(self._scope, scope, where="scoped()")
        view._view = True
        return view

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
        if not self._view:  # a scoped view shares its parent's driver
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
        return (
            self._llm_client is not None
            or self._async_llm_client is not None
            or self.settings.llm_configured
        )

    def generator(self) -> Generator:
        if self._generator is None:
            self._generator = Generator(self.settings, self._llm_client, self._async_llm_client)
        return self._generator

    # -------------------------------------------------------------- retrieval
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

        The arguments become one ``RetrieveRequest`` (checked once, here: the door) and
        ``retrieve_request`` runs it.
        """
        with call_budget(self.settings.query_timeout):  # validation's read counts against it
            request = RetrieveRequest.build(
                question,
                selection,
                settings=self.settings,
                semantics=semantics,
                k=k,
                ranker=ranker,
                steering=steering,
                path=path,
                threshold=threshold,
                query_vector=query_vector,
                filters=filters,
                link=link,
                dimensions=lambda: index_dimensions(self.graph),
                scope=self.scope,
            )
            return self.retrieve_request(request)

    @budgeted
    def retrieve_request(self, request: RetrieveRequest) -> RetrievalResult:
        """Run a request a door built (``RetrieveRequest.build``); nothing is checked again.
        Its scope is intersected with this instance's: a request never widens it."""
        wanted = narrow(self.scope, request.scope, where="request scope")
        return on_one_version(
            lambda fresh: self.selector.scope(wanted, fresh=fresh),
            lambda scope: self._retrieve_in(request, scope),
        )

    def _retrieve_in(
        self, request: RetrieveRequest, scope: CompiledScope | None
    ) -> RetrievalResult:
        if scope is not None and scope.empty:  # nothing embedded, searched or asked
            template = self.policy.decide(request.semantics).template
            return scope_abstention(request, scope, template)
        scope = None if scope is None or scope.whole else scope  # the whole KB: unscoped plan
        selector = scoped_selector(self.selector, scope)  # links, resolves, suggests in scope
        chunk_filter = request.chunk_filter
        # every property the filters name, checked on the KB (pipeline/filter_checks.py)
        filters = None if chunk_filter is None else checked_filter(self.graph, chunk_filter)
        prepared = AutoSemantics(request.semantics)
        if request.auto:  # linked and resolved inside the scope (the scoped selector)
            prepared = auto_semantics(
                self.graph,
                selector,
                self.embedder,
                request.question,
                request.semantics,
                request.link,
            )
        semantics = prepared.semantics
        decision = self.policy.decide(semantics)
        asked = Question(
            text=request.question,
            semantics=semantics,
            ranker=request.ranker or decision.ranker,
            k=request.k or decision.top_k or self.settings.top_k,
            template=decision.template,
            path=request.path,
            threshold=request.threshold,
            vector=request.vector,
            chunk_filter=chunk_filter,
            linked=prepared.linked_dicts(),
            unknown_names=prepared.unknown,
            notes=prepared.notes,
            scope=scope,
        )
        if filters is not None and filter_abstains(self.graph, filters):
            # no chunk passes the filters: nothing embedded, no vector search, no LLM call
            return asked.abstain(
                "filters", no_chunk_passes(filters.chunk_filter), steering=request.mode, timings={}
            )
        if request.auto:
            return retrieve_auto(
                asked,
                policy=self.policy,
                selector=selector,
                retriever=self.retriever,
                schema=self.schema,
                question_vector=self._question_vector,
                guarantee=self.settings.guarantee_entities,
            )
        return retrieve_selection(
            asked,
            request.selection,
            request.mode,
            selector=selector,
            retriever=self.retriever,
            schema=self.schema,
            question_vector=self._question_vector,
        )

    def _question_vector(self, asked: Question, timings: dict[str, float]) -> np.ndarray:
        """The caller's vector when it has one (neo4j-graphrag passes ``query_vector``), else
        the question embedded (timed as ``embedding``)."""
        started = time.perf_counter()
        if asked.vector is not None:
            vector = np.asarray(asked.vector, dtype=np.float32).ravel()
        else:
            # CPU work: on a worker thread when an async caller waits (reader.off_loop)
            embedded = off_loop(lambda: self.embedder.embed_queries([asked.text])[0])
            vector = np.asarray(embedded)
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
        prompted = self._prompted(question, selection, template, options)
        if isinstance(prompted, Answer):
            return prompted
        retrieval, prompt, timings = prompted
        return Answer.generated(retrieval, prompt, self.generator().generate(prompt), timings)

    def _prompted(
        self,
        question: str,
        selection: Selection,
        template: str | None,
        options: RetrieveOptions,
    ) -> Prompted:
        """``ask`` up to the LLM call (``pipeline/prompting.py``)."""
        return prompted(self, question, selection, template, options)

    # -------------------------------------------------------------- async
    @classmethod
    async def aopen(
        cls,
        settings: Settings | None = None,
        driver: AsyncDriver | None = None,
        **options: Any,
    ) -> GuidedRAG:
        """A ``GuidedRAG`` on a ``neo4j.AsyncDriver`` (opened from ``settings`` when not given,
        and then owned: ``aclose``/``async with`` closes it), for ``aretrieve``/``aask``.
        ``options``: as for the constructor (schema, embedder, policy, llm clients).

        >>> async with await GuidedRAG.aopen(settings, driver=async_driver) as rag:
        ...     result = await rag.aretrieve("Which countries use the euro?")
        """
        settings = settings or Settings()
        owned = driver is None
        driver = open_async_driver(settings) if driver is None else driver
        try:
            rag = await bridged(cls, settings, driver, **options)
        except BaseException:
            if owned:
                await driver.close()
            raise
        rag.graph.owns_driver = owned
        return rag

    async def aclose(self) -> None:
        """Close the driver if this instance opened it (``aopen`` without a driver)."""
        if self.graph.owns_driver and not self._view:
            driver: Any = self.graph.driver  # an AsyncDriver here
            await driver.close()

    async def __aenter__(self) -> GuidedRAG:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aretrieve(
        self, question: str, selection: Selection = None, **options: Unpack[RetrieveOptions]
    ) -> RetrievalResult:
        """``retrieve`` for an async caller, on an instance opened on a ``neo4j.AsyncDriver``
        (``aopen``): the same code, every read awaited on this event loop (``reader.bridged``),
        the question embedded on a worker thread (``asyncio.to_thread``: CPU work, not I/O)."""
        self._check_async()
        return await bridged(self.retrieve, question, selection, **options)

    def _check_async(self) -> None:
        """The async API needs an AsyncDriver: a sync driver's reads would block the loop."""
        if not isinstance(self.graph.driver, AsyncDriver):
            raise ConfigurationError(
                "aretrieve/aask need a GuidedRAG opened on a neo4j.AsyncDriver: open it with "
                "`await GuidedRAG.aopen(settings)` (or pass an AsyncDriver to aopen)"
            )

    async def aask(
        self,
        question: str,
        selection: Selection = None,
        *,
        template: str | None = None,
        **options: Unpack[RetrieveOptions],
    ) -> Answer:
        """``ask`` for an async caller: ``aretrieve``, augmentation (its read awaited), and the
        LLM called through ``openai.AsyncOpenAI``."""
        self._check_async()
        prompted = await bridged(self._prompted, question, selection, template, options)
        if isinstance(prompted, Answer):
            return prompted
        retrieval, prompt, timings = prompted
        generation = await self.generator().agenerate(prompt)
        return Answer.generated(retrieval, prompt, generation, timings)
