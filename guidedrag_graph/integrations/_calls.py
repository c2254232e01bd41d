"""What every adapter does per call: semantics in any accepted form, then ``GuidedRAG.retrieve``.

The LangChain, LlamaIndex and MCP adapters take the same per-call options (semantics, ``k``,
steering, a DSL selection) and must run exactly what ``GuidedRAG.retrieve`` runs — same ids, same
abstentions — so they share this one path instead of each repeating the argument handling.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from guidedrag_graph.pipeline import GuidedRAG, RetrievalResult
from guidedrag_graph.retrieval import RankedChunk
from guidedrag_graph.semantics import Semantics, merge_stated

SemanticsLike = Semantics | Mapping[str, Any] | None


@dataclass(frozen=True)
class CallOptions:
    """The per-call options an adapter passes on; unset ones fall back to the adapter's own."""

    semantics: SemanticsLike = None
    entities: Sequence[str] | None = None
    k: int | None = None
    steering: str | None = None
    selection: str | None = None

    def over(self, defaults: CallOptions) -> CallOptions:
        """These options, each unset one taken from ``defaults``."""
        return CallOptions(
            semantics=self.semantics if self.semantics is not None else defaults.semantics,
            entities=self.entities if self.entities is not None else defaults.entities,
            k=self.k if self.k is not None else defaults.k,
            steering=self.steering if self.steering is not None else defaults.steering,
            selection=self.selection if self.selection is not None else defaults.selection,
        )


def retrieve(rag: GuidedRAG, question: str, options: CallOptions) -> RetrievalResult:
    """``GuidedRAG.retrieve`` with the options as it takes them (nothing added or changed)."""
    return rag.retrieve(
        question,
        options.selection,
        semantics=merge_stated(options.semantics, options.entities),
        k=options.k,
        steering=options.steering,
    )


def chunk_metadata(chunk: RankedChunk, result: RetrievalResult, rank: int) -> dict[str, Any]:
    """One chunk's provenance as flat JSON-ready metadata (what LangChain and LlamaIndex show)."""
    return {
        "chunk_id": chunk.id,
        "rank": rank,
        "document_id": chunk.document_id,
        "document_title": chunk.document_title,
        "score": chunk.score,
        "cosine": chunk.cosine,
        "boost": chunk.boost,
        "tier": chunk.tier,
        "tiers": list(chunk.tiers),
        "in_selection": chunk.in_selection,
        "selection": result.selection_text,
        "selection_size": result.selection_size,
        "steering": result.steering,
        "path": result.path,
    }
