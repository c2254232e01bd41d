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

import numpy as np

from guidedrag_graph.retrieval.results import RankedChunk


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
    """Drop candidates under ``threshold`` (raw cosine), then take ``k``: by ``relevance``
    (ties: chunk id) or by MMR. ``keep`` (calibration) returns that many instead of ``k``."""
    if threshold is not None:
        kept = [i for i, c in enumerate(candidates) if c.cosine >= threshold]
        candidates = [candidates[i] for i in kept]
        relevance = [relevance[i] for i in kept]
    if ranker == "mmr" and candidates:
        started = time.perf_counter()
        matrix = np.array([c.embedding for c in candidates], dtype=np.float64)
        order = mmr(np.asarray(query), matrix, relevance, k, lambda_)
        return Ordered([candidates[i] for i in order], {"mmr": time.perf_counter() - started})
    order = sorted(range(len(candidates)), key=lambda i: (-relevance[i], candidates[i].id))
    return Ordered([candidates[i] for i in order[: max(k, keep or 0)]], {})
