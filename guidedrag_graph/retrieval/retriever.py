"""``Retriever``: rank chunks by cosine *inside Neo4j*, within a selection (paper §3.3).

Steering decides what "within" means. *Hard* ranks only inside the selection (the paper).
*Soft* ranks over U with the selection's members boosted by ``soft_boost`` (β, added to the
(1+cos)/2 score); non-members fill the top k when the selection holds fewer than k chunks, and
β ≥ 1 means "selection first, then fill from U". *Auto* (``rank_tiers``) ranks U with graded
boosts, one per tier of a compiled ``boost(...)``, in one query.

Scores: Neo4j's ``score`` is (1 + cos) / 2; ``cosine`` is the raw cosine. The optional
similarity threshold is on the **raw cosine**.

>>> with GraphContext.open(settings) as graph:
...     ranking = Retriever(graph).rank(query_vector, ChunkIdSelection(("c1", "c2")), k=5)
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from guidedrag_graph import templates
from guidedrag_graph.context import GraphContext
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.retrieval.ordering import final_order
from guidedrag_graph.retrieval.paths import POSTFILTER_FIRST, Paths
from guidedrag_graph.retrieval.planner import Plan, Planner
from guidedrag_graph.retrieval.results import Fetched, RankedChunk, Ranking
from guidedrag_graph.retrieval.selections import (
    AllChunks,
    CompiledSelectionLike,
    CompiledTiersLike,
)
from guidedrag_graph.vocabulary import RANKERS


@dataclass(frozen=True)
class _Candidates:
    """Candidates, the relevance they are ordered by, and how they were found (``fetched``:
    its query is the ranking's ``cypher``; under soft steering, U's top)."""

    chunks: list[RankedChunk]
    relevance: list[float]
    fetched: Fetched

    @classmethod
    def scored(cls, chunks: list[RankedChunk], fetched: Fetched) -> _Candidates:
        """Hard steering: ordered by their own score."""
        return cls(chunks, [c.score for c in chunks], fetched)


@dataclass(frozen=True)
class _Fetch:
    """What one ranking asks of a path: which, the query vector, how many, and whether the
    candidates' vectors come back too (MMR needs them)."""

    path: str
    vector: list[float]
    k: int
    with_embedding: bool


@dataclass(frozen=True)
class _Size:
    """A selection's size and what counting it cost (nothing when it was known)."""

    size: int | None
    timings: dict[str, float] = field(default_factory=dict)
    queries: tuple[str, ...] = ()


class Retriever:
    """Ranks chunks inside a selection in Neo4j; see the module docstring for steering."""

    def __init__(self, graph: GraphContext) -> None:
        self.graph = graph
        self.planner = Planner(graph)
        self.paths = Paths(graph, self.planner)

    def exact_max(self) -> int:
        return self.planner.exact_max()

    def plan(self, selection_size: int | None, is_all: bool) -> str:
        return self.planner.plan(selection_size, is_all).path

    def selection_size(self, selection: CompiledSelectionLike) -> int:
        return self.paths.size(selection)

    # ------------------------------------------------------------------ hard / soft
    def rank(
        self,
        query_vector: Sequence[float] | np.ndarray,
        selection: CompiledSelectionLike | None = None,
        *,
        k: int | None = None,
        ranker: str = "cosine",
        steering: str = "hard",
        path: str | None = None,
        threshold: float | None = None,
        selection_size: int | None = None,
        fetch_k: int | None = None,
        mmr_lambda: float | None = None,
    ) -> Ranking:
        """Top ``k`` chunks for ``query_vector`` within ``selection`` (``None`` = U).

        ``selection_size`` skips the size query when the caller already knows it; ``path``
        forces a physical path (one of ``vocabulary.PATHS``) instead of the planner's.
        """
        _check_ranker(ranker)
        _check_steering(steering)
        settings = self.graph.settings
        k = k or settings.top_k
        threshold = settings.similarity_threshold if threshold is None else threshold
        selection = selection or AllChunks(self.graph.schema)
        if getattr(selection, "is_boost", False):  # a boost(...) ranks its tiers over U
            return self.rank_tiers(
                query_vector,
                selection,  # type: ignore[arg-type]
                k=k,
                ranker=ranker,
                threshold=threshold,
                fetch_k=fetch_k,
                mmr_lambda=mmr_lambda,
            )
        fetch = max(fetch_k or (settings.mmr_fetch_k if ranker == "mmr" else k), k)
        vector: list[float] = np.asarray(query_vector, dtype=np.float64).ravel().tolist()
        sized = self._size(selection, selection_size)
        plan = Plan(path) if path else self.planner.plan(sized.size, selection.is_all)
        chosen = plan.path
        if selection.is_all and chosen != "index":
            chosen = chosen if chosen in ("exact", "plugin") else "index"

        started = time.perf_counter()
        request = _Fetch(chosen, vector, fetch, ranker == "mmr")
        found = self._candidates(request, selection, sized.size, steering)
        ranked_s = time.perf_counter() - started
        ordered = final_order(
            found.chunks,
            found.relevance,
            k=k,
            ranker=ranker,
            threshold=threshold,
            query=vector,
            lambda_=settings.mmr_lambda if mmr_lambda is None else mmr_lambda,
        )
        return Ranking(
            chunks=ordered.chunks,
            path=chosen,
            ranker=ranker,
            steering="hard" if selection.is_all else steering,
            selection_size=sized.size,
            cypher=found.fetched.cypher,
            params=found.fetched.params,
            timings={**sized.timings, "ranking": ranked_s, **ordered.timings},
            queries=list(sized.queries + found.fetched.queries),
            notes=list(plan.notes + found.fetched.notes),
        )

    def _candidates(
        self, request: _Fetch, selection: CompiledSelectionLike, size: int | None, steering: str
    ) -> _Candidates:
        """The selection's top ``k`` through the path (hard), or merged with U's (soft)."""
        if steering == "soft" and not selection.is_all:
            return self._soft(request, selection, size)
        fetched = self.paths.rank(
            request.path, request.vector, selection, request.k, request.with_embedding
        )
        in_selection = None if selection.is_all else True
        return _Candidates.scored(
            [RankedChunk.from_row(r, in_selection) for r in fetched.rows], fetched
        )

    def _size(self, selection: CompiledSelectionLike, known: int | None) -> _Size:
        """The selection's size: unknown for U, the caller's if given, else one count query."""
        if selection.is_all:
            return _Size(None)
        if known is not None:
            return _Size(known)
        started = time.perf_counter()
        size = self.paths.size(selection)
        return _Size(
            size,
            {"selection_size": time.perf_counter() - started},
            (self.paths.size_query(selection),),
        )

    def _soft(
        self, request: _Fetch, selection: CompiledSelectionLike, size: int | None
    ) -> _Candidates:
        """Rank over U with members boosted by β: top of the selection ∪ top of U, re-scored.

        Non-members are drawn from U's top ``2·fetch``; members outside the selection's top
        ``fetch`` cannot reach the top k (the boost is uniform), so the merge is exact whenever U's
        top ``2·fetch`` holds ``fetch`` non-members (noted otherwise).
        """
        beta = self.graph.settings.soft_boost
        path, vector, fetch, with_embedding = (
            request.path,
            request.vector,
            request.k,
            request.with_embedding,
        )
        ran: tuple[str, ...] = ()
        notes: tuple[str, ...] = ()
        selected_rows: list[dict[str, Any]] = []
        if size != 0:
            inside = self.paths.rank(path, vector, selection, fetch, with_embedding)
            selected_rows, ran, notes = inside.rows, inside.queries, inside.notes
        top = self.paths.rank_u(vector, 2 * fetch, with_embedding)
        ran += top.queries
        u_ids = [str(r["id"]) for r in top.rows]
        members = {str(r["id"]) for r in selected_rows}
        if size != 0 and u_ids:
            members |= self.paths.members(selection, u_ids)
            ran += (self.paths.members_query(selection),)
        merged: dict[str, RankedChunk] = {}
        for row in selected_rows:
            merged[str(row["id"])] = RankedChunk.from_row(row, True)
        for row in top.rows:
            cid = str(row["id"])
            if cid not in merged:
                merged[cid] = RankedChunk.from_row(row, cid in members)
        if sum(1 for r in top.rows if str(r["id"]) not in members) < fetch:
            notes += ("soft steering: U's candidates held fewer non-members than fetch_k",)
        chunks = list(merged.values())
        relevance = [c.score + (beta if c.in_selection else 0.0) for c in chunks]
        return _Candidates(chunks, relevance, Fetched(top.rows, top.cypher, top.params, ran, notes))

    # ------------------------------------------------------------------ graded tiers (auto)
    def rank_tiers(
        self,
        query_vector: Sequence[float] | np.ndarray,
        compiled: CompiledTiersLike,
        *,
        k: int | None = None,
        ranker: str = "cosine",
        threshold: float | None = None,
        fetch_k: int | None = None,
        mmr_lambda: float | None = None,
        limit: int | None = None,
    ) -> Ranking:
        """Top ``k`` of every chunk by (1+cos)/2 + its best tier's boost, in one query.

        ``limit`` (calibration only) returns up to that many candidates instead of ``fetch_k``.

        ``cypher/retrieve_boost.cypher`` (``retrieve_boost_index`` on 5.26): each tier's top
        ``fetch_k`` (exact up to the planner's exact limit, else from U's over-fetched index top)
        ∪ U's top ``fetch_k`` holds the boosted top ``fetch_k`` (a tier's boost is uniform).
        """
        _check_ranker(ranker)
        settings = self.graph.settings
        k = k or settings.top_k
        threshold = settings.similarity_threshold if threshold is None else threshold
        fetch = max(fetch_k or (settings.mmr_fetch_k if ranker == "mmr" else k), k)
        vector = [float(x) for x in np.asarray(query_vector, dtype=np.float64).ravel()]
        query, params = self._tiers_query(compiled, vector, fetch, ranker == "mmr", limit)
        started = time.perf_counter()
        rows = self.graph.read(query, params)
        timings = {"ranking": time.perf_counter() - started}
        sizes = [int(x) for x in rows[0]["tier_sizes"]] if rows else []
        names = params["tier_names"]
        tier_sizes = dict(zip(names, sizes, strict=False))
        candidates = [
            RankedChunk.from_row(r, None, tiers=tuple(names[i] for i in r["member_of"]))
            for r in rows
        ]
        ordered = final_order(
            candidates,
            [c.score + c.boost for c in candidates],
            k=k,
            ranker=ranker,
            threshold=threshold,
            query=vector,
            lambda_=settings.mmr_lambda if mmr_lambda is None else mmr_lambda,
            keep=limit,
        )
        return Ranking(
            chunks=ordered.chunks,
            path="boost",
            ranker=ranker,
            steering="auto",
            selection_size=None,
            cypher=query,
            params=params,
            timings={**timings, **ordered.timings},
            queries=[query],
            tier_sizes=tier_sizes,
        )

    def _tiers_query(
        self,
        compiled: CompiledTiersLike,
        vector: list[float],
        fetch: int,
        with_embedding: bool,
        limit: int | None,
    ) -> tuple[str, dict[str, Any]]:
        """``retrieve_boost`` for these tiers, and its parameters."""
        settings, schema = self.graph.settings, self.graph.schema
        tiers = list(compiled.tiers)
        lists = {"tiers": [t.list_variable for t in tiers]}
        params: dict[str, Any] = {
            **compiled.params,
            "query_vector": vector,
            "fetch_k": fetch,
            "u_fetch_k": fetch,
            "wide_k": fetch * POSTFILTER_FIRST,
            "exact_max": self.planner.exact_max(),
            "tier_weights": [float(t.weight) for t in tiers],
            "tier_names": [t.name or t.list_variable for t in tiers],
            "limit": fetch if limit is None else limit,
            "with_embedding": with_embedding,
        }
        # With the plugin, each tier's top k comes from its float32 cache (~1 µs per chunk)
        # instead of Cypher's cosine over every member (~45 µs): the same candidates otherwise.
        plugin = "_plugin" if self.graph.rank_plugin else ""
        if plugin:
            params["embedding_property"] = schema.chunk_embedding
        names: dict[str, str] = {}
        if self.graph.server.supports_search_clause:
            name = f"retrieve_boost{plugin}"
            names["vector_index"] = settings.vector_index_name
        else:
            name = f"retrieve_boost_index{plugin}"
            params["index_name"] = settings.vector_index_name
        query = templates.query(name, schema, selection=compiled.prelude, names=names, lists=lists)
        return query, params


def _check_steering(steering: str) -> None:
    if steering not in ("hard", "soft"):
        raise ConfigurationError(
            f"unknown steering {steering!r} for a selection; use 'hard' or 'soft' "
            "(auto ranks graded tiers: Retriever.rank_tiers)"
        )


def _check_ranker(ranker: str) -> None:
    if ranker not in RANKERS:
        raise ConfigurationError(f"unknown ranker {ranker!r}; use one of {RANKERS}")
