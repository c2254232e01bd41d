"""The last step of ranking: threshold, then the top k by score or by MMR.

The candidates (and, for MMR, their vectors) come back from Neo4j already ranked by a
``retrieve_*`` template; only the final re-ordering of at most ``mmr_fetch_k`` chunks runs here.
Every path and steering ends through ``final_order``, so ties break the same way everywhere
(score descending, then chunk id).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.retrieval.results import RankedChunk, Ranking


def mmr(
    query: np.ndarray,
    candidates: np.ndarray,
    relevance: Sequence[float],
    k: int,
    lambda_: float,
) -> list[int]:
    """Maximal marginal relevance (Carbonell & Goldstein 1998): indices into ``candidates``.

    Each step takes argmax λ·rel(d) − (1−λ)·max_{s∈S} cos(d, s). ``relevance`` is the score the
    caller ranks by (cosine, or a boosted score under soft steering); λ=1 is plain ranking.
    """
    n = len(candidates)
    if n == 0 or k <= 0:
        return []
    vectors = np.asarray(candidates, dtype=np.float64)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    vectors = vectors / norms
    rel = np.asarray(relevance, dtype=np.float64)
    similarity = vectors @ vectors.T
    chosen: list[int] = []
    redundancy = np.full(n, -np.inf)
    available = np.ones(n, dtype=bool)
    for _ in range(min(k, n)):
        penalty = np.where(np.isfinite(redundancy), redundancy, 0.0)
        objective = lambda_ * rel - (1.0 - lambda_) * penalty
        objective[~available] = -np.inf
        best = int(np.argmax(objective))
        chosen.append(best)
        available[best] = False
        redundancy = np.maximum(redundancy, similarity[best])
    del query  # the query enters through ``relevance``; kept in the signature for clarity
    return chosen


@dataclass(frozen=True)
class Ordered:
    """The chosen chunks, best first, and what the ordering cost (``mmr`` seconds, if run)."""

    chunks: list[RankedChunk]
    timings: dict[str, float]


class Ranker:
    """How ranked candidates become the top k: what a ranker needs from Neo4j (the candidates'
    vectors or not), how many candidates it asks for, and how it orders them. The registry
    below is the one place a ranker is defined; ``vocabulary.Ranker`` names the same keys (a
    test holds them equal), so settings, ``retrieve()`` and the CLI accept exactly these."""

    name: ClassVar[str]
    needs_vectors: ClassVar[bool] = False

    def fetch(self, k: int, fetch_k: int | None, default_fetch: int) -> int:
        """Candidates to ask Neo4j for: at least ``k``."""
        return max(fetch_k or k, k)

    def choose(
        self,
        candidates: list[RankedChunk],
        relevance: list[float],
        k: int,
        query: Sequence[float],
        lambda_: float,
    ) -> list[int]:
        """Indices into ``candidates``, best first."""
        order = sorted(range(len(candidates)), key=lambda i: (-relevance[i], candidates[i].id))
        return order[:k]


class ByScore(Ranker):
    """By score (cosine, or the boosted score under soft/auto), ties by chunk id."""

    name = "cosine"


class MaximalMarginalRelevance(Ranker):
    """MMR over ``mmr_fetch_k`` candidates (their vectors come back with them)."""

    name = "mmr"
    needs_vectors = True

    def fetch(self, k: int, fetch_k: int | None, default_fetch: int) -> int:
        return max(fetch_k or default_fetch, k)

    def choose(
        self,
        candidates: list[RankedChunk],
        relevance: list[float],
        k: int,
        query: Sequence[float],
        lambda_: float,
    ) -> list[int]:
        matrix = np.array([c.embedding for c in candidates], dtype=np.float64)
        return mmr(np.asarray(query), matrix, relevance, k, lambda_)


RANKER_REGISTRY: dict[str, Ranker] = {r.name: r for r in (ByScore(), MaximalMarginalRelevance())}


def ranker_named(name: str) -> Ranker:
    """The registered ranker ``name``, or a one-line error listing those there are."""
    try:
        return RANKER_REGISTRY[name]
    except (KeyError, TypeError):
        raise ConfigurationError(
            f"unknown ranker {name!r}; use one of {tuple(RANKER_REGISTRY)}"
        ) from None


def final_order(
    candidates: list[RankedChunk],
    relevance: list[float],
    *,
    k: int,
    ranker: str,
    threshold: float | None,
    query: Sequence[float],
    lambda_: float,
    keep: int | None = None,
) -> Ordered:
    """Drop candidates under ``threshold`` (raw cosine), then take ``k`` as ``ranker`` orders
    them. ``keep`` (calibration) returns that many instead of ``k`` (by score)."""
    if threshold is not None:
        kept = [i for i, c in enumerate(candidates) if c.cosine >= threshold]
        candidates = [candidates[i] for i in kept]
        relevance = [relevance[i] for i in kept]
    chosen = ranker_named(ranker)
    if not candidates:
        return Ordered([], {})
    if chosen.needs_vectors:
        started = time.perf_counter()
        order = chosen.choose(candidates, relevance, k, query, lambda_)
        return Ordered([candidates[i] for i in order], {chosen.name: time.perf_counter() - started})
    order = chosen.choose(candidates, relevance, max(k, keep or 0), query, lambda_)
    return Ordered([candidates[i] for i in order], {})


@dataclass(frozen=True)
class RankOrder:
    """How a ranking ends: ``fetch`` candidates asked of Neo4j, then the top ``k`` above
    ``threshold`` (raw cosine) by score or by MMR (``lambda_``) around ``vector``; built by
    ``Retriever.order``."""

    vector: list[float]
    k: int
    fetch: int
    ranker: str
    threshold: float | None
    lambda_: float

    @property
    def with_embedding(self) -> bool:
        return ranker_named(self.ranker).needs_vectors  # MMR needs the candidates' vectors

    def ranking(
        self,
        candidates: list[RankedChunk],
        relevance: list[float],
        *,
        path: str,
        steering: str,
        size: int | None,
        cypher: str,
        params: dict[str, Any],
        timings: dict[str, float],
        queries: list[str],
        notes: list[str] | None = None,
        tier_sizes: dict[str, int] | None = None,
        keep: int | None = None,
    ) -> Ranking:
        """THE place a ``Ranking`` is built: the candidates ordered (threshold, top k or MMR),
        with how they were found."""
        ordered = final_order(
            candidates,
            relevance,
            k=self.k,
            ranker=self.ranker,
            threshold=self.threshold,
            query=self.vector,
            lambda_=self.lambda_,
            keep=keep,
        )
        return Ranking(
            chunks=ordered.chunks,
            path=path,
            ranker=self.ranker,
            steering=steering,
            selection_size=size,
            cypher=cypher,
            params=params,
            timings={**timings, **ordered.timings},
            queries=queries,
            notes=notes or [],
            tier_sizes=tier_sizes or {},
        )


def floats(query_vector: Sequence[float] | np.ndarray) -> list[float]:
    """The vector as Python floats; a flat float32 array (what ``GuidedRAG`` passes) converts
    as it is, each float32 exact as a Python float, without a float64 copy first."""
    if (
        isinstance(query_vector, np.ndarray)
        and query_vector.ndim == 1
        and query_vector.dtype in (np.float32, np.float64)
    ):
        floats: list[float] = query_vector.tolist()
        return floats
    result: list[float] = np.asarray(query_vector, dtype=np.float64).ravel().tolist()
    return result
