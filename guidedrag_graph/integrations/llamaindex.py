"""GuidedRAG as a LlamaIndex retriever and embedding (``pip install '.[llamaindex]'``).

>>> from guidedrag_graph.integrations.llamaindex import GuidedEmbedding, GuidedLlamaIndexRetriever
>>> retriever = GuidedLlamaIndexRetriever.from_settings(Settings())
>>> nodes = retriever.retrieve("Which countries use the euro?", entities=["Euro"], k=3)
>>> nodes.abstained, nodes.tier_sizes, nodes[0].node.metadata["tier"]     # this call's own
>>> aretriever = await GuidedLlamaIndexRetriever.aopen(Settings())      # on a neo4j.AsyncDriver
>>> await asyncio.gather(*(aretriever.aretrieve(q) for q in questions))  # each its own
>>> RetrieverQueryEngine.from_args(retriever, llm=...)       # any LlamaIndex query engine

The retriever runs ``GuidedRAG.retrieve`` and nothing else: the same chunk ids as
``guidedrag retrieve`` (a test holds them equal). LlamaIndex's ``retrieve`` takes only the
question, so the per-call options (``semantics``, ``entities``, ``relations``, ``k``/``top_k``,
``steering``, ``selection``, ``filters``, ``ranker``, ``link``) are keywords of our
``retrieve``/``aretrieve``, or fixed on the retriever; query engines, which call ``retrieve``
with the question alone, get the retriever's own. Each call returns its own ``Retrieved`` list
(abstention and reason, linked names, tier sizes, steering), and each node's metadata repeats
them. ``NodeWithScore.score`` is the ranking score (``score + boost``), so a LlamaIndex
post-processor that re-sorts keeps our order.

``retrieve`` runs on a ``GuidedRAG`` opened on a ``neo4j.Driver``; ``aretrieve`` awaits
``GuidedRAG.aretrieve`` on one opened with ``GuidedRAG.aopen`` (a ``neo4j.AsyncDriver``), every
read awaited on the caller's event loop. ``rag`` may be either kind, ``async_rag`` holds the
async one beside a sync one; a form whose kind is missing is refused in one line naming the fix.

The scoring and provenance metadata stays out of what LlamaIndex sends an LLM and an embedder:
by default a node shows the LLM only ``chunk_id`` and ``document_title`` and the embedder only
``document_title`` (``llm_metadata_keys`` / ``embed_metadata_keys`` choose others).

``GuidedEmbedding`` keeps e5's asymmetry: queries ``query:``, texts ``passage:``.

llama-index-core is imported here only: the core install does not need it.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Unpack

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from pydantic import PrivateAttr

from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import Embedder, embedder_for
from guidedrag_graph.integrations._calls import (
    CallKeywords,
    CallOptions,
    Retrieved,
    SemanticsLike,
    aretrieve,
    chunk_metadata,
    pick,
    retrieve,
    scoped,
)
from guidedrag_graph.pipeline import GuidedRAG, RetrievalResult

__all__ = ["GuidedEmbedding", "GuidedLlamaIndexRetriever"]

_NAME = "GuidedLlamaIndexRetriever"
_DOOR = f"{_NAME}.retrieve"
LLM_METADATA_KEYS = ("chunk_id", "document_title")
EMBED_METADATA_KEYS = ("document_title",)


@dataclass
class _Call:
    """One ``retrieve`` call in progress: its options in, its result out (LlamaIndex's
    ``_retrieve`` takes the query only and its ``retrieve`` rebuilds the node list)."""

    options: CallOptions
    result: RetrievalResult | None = None


_CALL: contextvars.ContextVar[_Call | None] = contextvars.ContextVar(
    "guidedrag_llamaindex_call", default=None
)


class GuidedLlamaIndexRetriever(BaseRetriever):
    """A LlamaIndex ``BaseRetriever`` over ``GuidedRAG.retrieve``; nodes are ``TextNode``s whose
    ``node_id`` is the chunk id and whose metadata holds the chunk's provenance and its call's
    outcome (``chunk_id``, ``document_id``, ``document_title``, ``score``, ``cosine``,
    ``boost``, ``tier``, ``tiers``, ``selection``, ``selection_size``, ``steering``, ``path``,
    ``abstained``, ``reason``, ``linked``, ``tier_sizes``)."""

    def __init__(
        self,
        rag: GuidedRAG,
        *,
        async_rag: GuidedRAG | None = None,
        semantics: SemanticsLike = None,
        k: int | None = None,
        steering: str | None = None,
        selection: str | None = None,
        filters: dict[str, Any] | None = None,
        llm_metadata_keys: Sequence[str] = LLM_METADATA_KEYS,
        embed_metadata_keys: Sequence[str] = EMBED_METADATA_KEYS,
        scope: Any = None,
        **kwargs: Any,
    ) -> None:
        """``scope`` (trusted, server-side): narrows ``rag`` and ``async_rag`` (``.scoped``);
        no call option can widen it (docs/security.md, Scopes)."""
        super().__init__(**kwargs)
        self.rag: GuidedRAG = scoped(rag, scope)  # type: ignore[assignment]
        self.async_rag = scoped(async_rag, scope)
        self.defaults = CallOptions(
            semantics=semantics, k=k, steering=steering, selection=selection, filters=filters
        )
        self.llm_metadata_keys = tuple(llm_metadata_keys)
        self.embed_metadata_keys = tuple(embed_metadata_keys)

    @classmethod
    def from_settings(
        cls, settings: Settings | None = None, **kwargs: Any
    ) -> GuidedLlamaIndexRetriever:
        """A retriever on its own ``GuidedRAG`` (close it with ``retriever.rag.close()``)."""
        return cls(GuidedRAG(settings), **kwargs)

    @classmethod
    async def aopen(
        cls, settings: Settings | None = None, **kwargs: Any
    ) -> GuidedLlamaIndexRetriever:
        """A retriever on its own ``GuidedRAG`` opened on a ``neo4j.AsyncDriver``
        (``aretrieve``; close it with ``await retriever.rag.aclose()``)."""
        return cls(await GuidedRAG.aopen(settings), **kwargs)

    def retrieve(
        self, str_or_query_bundle: str | QueryBundle, **options: Unpack[CallKeywords]
    ) -> list[NodeWithScore]:
        """LlamaIndex's ``retrieve``, with this call's options; a ``Retrieved`` list."""
        call = _Call(CallOptions.of(options, door=_DOOR))
        token = _CALL.set(call)
        try:
            nodes = super().retrieve(str_or_query_bundle)
        finally:
            _CALL.reset(token)
        return self._retrieved(nodes, call)

    async def aretrieve(
        self, str_or_query_bundle: str | QueryBundle, **options: Unpack[CallKeywords]
    ) -> list[NodeWithScore]:
        """``retrieve``, awaited: each concurrent call keeps its own options and result."""
        call = _Call(CallOptions.of(options, door=_DOOR))
        token = _CALL.set(call)
        try:
            nodes = await super().aretrieve(str_or_query_bundle)
        finally:
            _CALL.reset(token)
        return self._retrieved(nodes, call)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        call = self._call()
        rag = pick((self.rag, self.async_rag), asynchronous=False, door=_NAME, call="retrieve")
        call.result = retrieve(rag, query_bundle.query_str, call.options.over(self.defaults))
        return self._nodes(call.result)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        call = self._call()
        options = call.options.over(self.defaults)
        rag = pick((self.async_rag, self.rag), asynchronous=True, door=_NAME, call="aretrieve")
        call.result = await aretrieve(rag, query_bundle.query_str, options)
        return self._nodes(call.result)

    def _call(self) -> _Call:
        """The call in progress; a caller that reaches ``_retrieve`` without our ``retrieve``
        (a query engine holding LlamaIndex's base method) gets the retriever's own options."""
        return _CALL.get() or _Call(CallOptions())

    @staticmethod
    def _retrieved(nodes: list[NodeWithScore], call: _Call) -> list[NodeWithScore]:
        assert call.result is not None  # _retrieve ran in this call's context
        return Retrieved(nodes, call.result)

    def _nodes(self, result: RetrievalResult) -> list[NodeWithScore]:
        out = []
        for rank, chunk in enumerate(result.chunks, start=1):
            metadata = chunk_metadata(chunk, result, rank)
            node = TextNode(
                id_=chunk.id,
                text=chunk.text,
                metadata=metadata,
                excluded_llm_metadata_keys=[k for k in metadata if k not in self.llm_metadata_keys],
                excluded_embed_metadata_keys=[
                    k for k in metadata if k not in self.embed_metadata_keys
                ],
            )
            out.append(NodeWithScore(node=node, score=chunk.score + chunk.boost))
        return out


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
        """CPU work: on a worker thread, so the event loop keeps running (as ``aretrieve``)."""
        return await asyncio.to_thread(self._get_query_embedding, query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._get_text_embeddings([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return [[float(x) for x in row] for row in self._embedder.embed_passages(list(texts))]
