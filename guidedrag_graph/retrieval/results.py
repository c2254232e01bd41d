"""What the retrieval stage hands on: ranked chunks, and how they were found.

``Fetched`` is what one physical path returns (rows plus every query it ran and why it deviated);
paths combine them instead of appending to lists passed in, so a path's whole cost and story is
in its return value, and concurrent questions on one ``Retriever`` never share state.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class RankedChunk:
    """One retrieved chunk; ``score`` = Neo4j's (1+cos)/2, ``cosine`` = raw cosine."""

    id: str
    document_id: str | None
    document_title: str | None
    text: str
    score: float
    cosine: float
    in_selection: bool | None
    embedding: tuple[float, ...] | None = field(default=None, repr=False, compare=False)
    tier: str | None = None  # auto / boost: the best tier the chunk is in (None: U only)
    boost: float = 0.0  # auto / boost: that tier's weight, added to ``score`` for ranking
    tiers: tuple[str, ...] = field(default=(), compare=False)  # auto: every tier holding it

    @property
    def short_id(self) -> str:
        """A short readable form of ``id`` to print beside it (``id`` stays the key): an
        elementId (``4:<uuid>:17``) becomes ``#17``, a long hash its first 10 characters."""
        return short_chunk_id(self.id)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "short_id": self.short_id,
            "document_id": self.document_id,
            "document_title": self.document_title,
            "text": self.text,
            "score": self.score,
            "cosine": self.cosine,
            "in_selection": self.in_selection,
            "tier": self.tier,
            "boost": self.boost,
            "tiers": list(self.tiers),
        }

    @classmethod
    def from_row(
        cls, row: dict[str, Any], in_selection: bool | None, tiers: tuple[str, ...] = ()
    ) -> RankedChunk:
        """A row of any ``retrieve_*`` template (they all return the same columns)."""
        embedding = row.get("embedding")
        return cls(
            id=str(row["id"]),
            document_id=_text_or_none(row.get("document_id")),
            document_title=_text_or_none(row.get("document_title")),
            text=str(row.get("text") or ""),
            score=float(row["score"]),
            cosine=float(row["cosine"]),
            in_selection=in_selection if in_selection is not None else row.get("in_selection"),
            embedding=tuple(float(x) for x in embedding) if embedding is not None else None,
            tier=_text_or_none(row.get("tier")),
            boost=float(row.get("boost") or 0.0),
            tiers=tiers,
        )


_ELEMENT_ID = re.compile(r"^\d+:[0-9a-f-]{20,}:(\d+)$")


def short_chunk_id(chunk_id: str, width: int = 16) -> str:
    """``chunk_id`` as a person reads it in a result list (see ``RankedChunk.short_id``)."""
    match = _ELEMENT_ID.match(chunk_id)
    if match:
        return f"#{match.group(1)}"
    if len(chunk_id) <= width:
        return chunk_id
    return chunk_id[: width - 6] + "…"


def _text_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


@dataclass
class Ranking:
    """What the retrieval stage did: chunks, the path and queries it used, and their cost."""

    chunks: list[RankedChunk]
    path: str
    ranker: str
    steering: str
    selection_size: int | None
    cypher: str
    params: dict[str, Any]
    timings: dict[str, float] = field(default_factory=dict)
    queries: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    tier_sizes: dict[str, int] = field(default_factory=dict)  # auto / boost: chunks per tier


@dataclass(frozen=True)
class Fetched:
    """One path's candidates: rows, the query whose rows they are (with its parameters), every
    query the path ran on the way (``queries``, in order) and why it deviated (``notes``)."""

    rows: list[dict[str, Any]]
    cypher: str
    params: dict[str, Any]
    queries: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @classmethod
    def one(cls, rows: list[dict[str, Any]], cypher: str, params: dict[str, Any]) -> Fetched:
        """The result of a path that ran exactly one query."""
        return cls(rows, cypher, params, (cypher,))

    def after(self, queries: tuple[str, ...], notes: tuple[str, ...] = ()) -> Fetched:
        """This result, preceded by queries (and notes) that were run before it."""
        return Fetched(
            self.rows, self.cypher, self.params, queries + self.queries, notes + self.notes
        )
