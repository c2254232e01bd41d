"""GuidedRAG as a LlamaIndex retriever and embedding (``pip install guidedrag-graph[llamaindex]``).

>>> from guidedrag_graph.integrations.llamaindex import GuidedEmbedding, GuidedLlamaIndexRetriever
>>> retriever = GuidedLlamaIndexRetriever.from_settings(Settings())
>>> nodes = retriever.retrieve("Which countries use the euro?", semantics={"entities": ["Euro"]})
>>> nodes[0].node.node_id, nodes[0].score, nodes[0].node.metadata["tier"]
>>> RetrieverQueryEngine.from_args(retriever, llm=...)       # any LlamaIndex query engine

The retriever runs ``GuidedRAG.retrieve`` and nothing else: the same chunk ids as
``guidedrag retrieve`` (a test holds them equal). LlamaIndex's ``retrieve`` takes only the
question, so the per-call options (semantics, ``k``, steering, selection) are keywords of our
``retrieve``/``aretrieve``, or fixed on the retriever; query engines, which call ``retrieve`` with
the question alone, get the retriever's own. ``NodeWithScore.score`` is the ranking score
(``score + boost``), so a LlamaIndex post-processor that re-sorts keeps our order; the plain
cosine and the tier are in the node's metadata.

``GuidedEmbedding`` keeps e5's asymmetry: queries ``query:``, texts ``passage:``.

llama-index-core is imported here only: the core install does not need it.
"""

from __future__ import annotations

import contextvars
from collections.abc import Sequence
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from pydantic import PrivateAttr

from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import Embedder, embedder_for
from guidedrag_graph.integrations._calls import CallOptions, SemanticsLike, chunk_metadata, retrieve
from guidedrag_graph.pipeline import GuidedRAG, RetrievalResult

__all__ = ["GuidedEmbedding", "GuidedLlamaIndexRetriever"]

# The options of the retrieve() call in progress (LlamaIndex's _retrieve takes the query only).
_CALL: contextvars.ContextVar[CallOptions | None] = contextvars.ContextVar(
    "guidedrag_llamaindex_call", default=None
)


class GuidedLlamaIndexRetriever(BaseRetriever):
    """A LlamaIndex ``BaseRetriever`` over ``GuidedRAG.retrieve``; nodes are ``TextNode``s whose
    ``node_id`` is the chunk id and whose metadata holds the chunk's provenance (``chunk_id``,
    ``document_id``, ``document_title``, ``score``, ``cosine``, ``boost``, ``tier``, ``tiers``,
    ``selection``, ``selection_size``, ``steering``, ``path``)."""

    def __init__(
        self,
        rag: GuidedRAG,
        *,
        semantics: SemanticsLike = None,
        k: int | None = None,
        steering: str | None = None,
        selection: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.rag = rag
        self.defaults = CallOptions(semantics, None, k, steering, selection)
        self.last_result: RetrievalResult | None = None

    @classmethod
    def from_settings(
        cls, settings: Settings | None = None, **kwargs: Any
    ) -> GuidedLlamaIndexRetriever:
        """A retriever on its own ``GuidedRAG`` (close it with ``retriever.rag.close()``)."""
        return cls(GuidedRAG(settings), **kwargs)

    def retrieve(
        self,
        str_or_query_bundle: str | QueryBundle,
        *,
        semantics: SemanticsLike = None,
        entities: Sequence[str] | None = None,
        k: int | None = None,
        steering: str | None = None,
        selection: str | None = None,
    ) -> list[NodeWithScore]:
        """LlamaIndex's ``retrieve``, with this call's semantics and options."""
        token = _CALL.set(CallOptions(semantics, entities, k, steering, selection))
        try:
            return super().retrieve(str_or_query_bundle)
        finally:
            _CALL.reset(token)

    async def aretrieve(
        self,
        str_or_query_bundle: str | QueryBundle,
        *,
        semantics: SemanticsLike = None,
        entities: Sequence[str] | None = None,
        k: int | None = None,
        steering: str | None = None,
        selection: str | None = None,
    ) -> list[NodeWithScore]:
        """``retrieve``, awaited (LlamaIndex runs ``_retrieve`` inline)."""
        token = _CALL.set(CallOptions(semantics, entities, k, steering, selection))
        try:
            return await super().aretrieve(str_or_query_bundle)
        finally:
            _CALL.reset(token)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        options = (_CALL.get() or CallOptions()).over(self.defaults)
        result = retrieve(self.rag, query_bundle.query_str, options)
        self.last_result = result
        return [
            NodeWithScore(
                node=TextNode(
                    id_=chunk.id,
                    text=chunk.text,
                    metadata=chunk_metadata(chunk, result, rank),
                ),
                score=chunk.score + chunk.boost,
            )
            for rank, chunk in enumerate(result.chunks, start=1)
        ]


class GuidedEmbedding(BaseEmbedding):
    """A LlamaIndex ``BaseEmbedding`` over a guidedrag embedder (same cache as ``guidedrag
    load``): ``get_query_embedding`` for questions, ``get_text_embedding`` for passages."""

    _embedder: Embedder = PrivateAttr()

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        settings: Settings | None = None,
        **kwargs: Any,
    ) -> None:
        settings = settings or Settings()
        chosen = embedder if embedder is not None else embedder_for(settings)
        kwargs.setdefault("model_name", settings.embedding_model)
        super().__init__(**kwargs)
        self._embedder = chosen

    @classmethod
    def class_name(cls) -> str:
        return "GuidedEmbedding"

    def _get_query_embedding(self, query: str) -> list[float]:
        return [float(x) for x in self._embedder.embed_queries([query])[0]]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._get_text_embeddings([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return [[float(x) for x in row] for row in self._embedder.embed_passages(list(texts))]
