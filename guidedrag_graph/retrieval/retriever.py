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
from typing import Any, cast

import numpy as np

from guidedrag_graph.context import GraphContext
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.retrieval.ordering import RankOrder, floats, ranker_named
from guidedrag_graph.retrieval.paths import Paths
from guidedrag_graph.retrieval.planner import Planner
from guidedrag_graph.retrieval.plans import (
    Query,
    RankPlan,
    plan_ranking,
    plan_sized,
    plan_tiers,
    scope_notes,
)
from guidedrag_graph.retrieval.results import Fetched, RankedChunk, Ranking
from guidedrag_graph.retrieval.selections import (
    AllChunks,
    CompiledSelectionLike,
    CompiledTiersLike,
)
from guidedrag_graph.retrieve_args import RetrieveArgs


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

    # ------------------------------------------------------------------ the entry
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
        """Top ``k`` chunks for ``query_vector`` within ``selection`` (``None`` = U), for callers
        of the retrieval stage itself: the arguments are checked (``RetrieveArgs``, the model
        ``GuidedRAG.retrieve``'s request is checked by), then ``run``.

        ``selection_size`` skips the size query when the caller already knows it; ``path``
        forces a physical path (one of ``vocabulary.PATHS``) instead of the planner's.
        """
        _check(k, ranker, path, threshold, fetch_k, mmr_lambda)
        _check_steering(steering)
        order = self.order(
            query_vector,
            k=k,
            ranker=ranker,
            threshold=threshold,
            fetch_k=fetch_k,
            mmr_lambda=mmr_lambda,
        )
        return self.run(
            order, selection, steering=steering, path=path, selection_size=selection_size
        )

    def order(
        self,
        query_vector: Sequence[float] | np.ndarray,
        *,
        k: int | None,
        ranker: str,
        threshold: float | None,
        fetch_k: int | None = None,
        mmr_lambda: float | None = None,
    ) -> RankOrder:
        """How a ranking ends, with the settings' defaults filled in for what is None. Not
        checked here: ``rank``/``rank_tiers`` check their arguments, and ``GuidedRAG``'s come
        from its request, checked once at its door."""
        settings = self.graph.settings
        k = settings.top_k if k is None else k
        return RankOrder(
            # tolist(): the same Python floats as float() of each element, at a tenth the cost
            vector=floats(query_vector),
            k=k,
            fetch=ranker_named(ranker).fetch(k, fetch_k, settings.mmr_fetch_k),
            ranker=ranker,
            threshold=settings.similarity_threshold if threshold is None else threshold,
            lambda_=settings.mmr_lambda if mmr_lambda is None else mmr_lambda,
        )

    def run(
        self,
        order: RankOrder,
        selection: CompiledSelectionLike | CompiledTiersLike | None = None,
        *,
        steering: str = "hard",
        path: str | None = None,
        selection_size: int | None = None,
        limit: int | None = None,
    ) -> Ranking:
        """THE ranking entry: a compiled ``boost(...)`` or ``auto``'s tiers rank every chunk
        with their boosts (``steering`` is then ``auto``); any other selection ranks hard (only
        inside it) or soft (boosted over U). ``limit``: tiers only (calibration).

        Planned without I/O (``plans.plan_ranking``, from the server's ``RankFacts``), then
        ``execute``d."""
        selection = selection or AllChunks(self.graph.schema)
        plan = self.planner.planned(
            lambda facts: plan_ranking(
                order,
                selection,
                facts,
                steering=steering,
                path=path,
                selection_size=selection_size,
                limit=limit,
            )
        )
        return self.execute(order, plan, selection, limit=limit)

    def execute(
        self,
        order: RankOrder,
        plan: RankPlan,
        selection: CompiledSelectionLike | CompiledTiersLike,
        *,
        limit: int | None = None,
    ) -> Ranking:
        """A planned ranking (``plans.plan_ranking``) sent: its query, then, for a ``sized``
        plan, the second round planned from the size it read (``plans.plan_sized``)."""
        first, plain = plan.query, cast(CompiledSelectionLike, selection)
        assert first is not None or plan.path not in ("boost", "planned", "sized")
        if plan.path == "boost":
            return self._rank_tiers(order, plan, limit)
        if plan.path == "planned":
            return self._rank_planned(order, first)  # type: ignore[arg-type]
        sized = _Size(None if plain.is_all else plan.size)
        if plan.path == "sized" and first is not None:
            started = time.perf_counter()
            size = int(rows[0]["selection_size"]) if (rows := self.paths.read(first)) else 0
            sized = _Size(size, {"selection_size": time.perf_counter() - started}, (first.cypher,))
            steering, path = plan.steering, plan.extra.get("path")
            plan = self.planner.planned(
                lambda facts: plan_sized(
                    order, plain, facts, steering=steering, path=path, size=size
                )
            )
        started = time.perf_counter()
        found = self._candidates(order, plan, plain)
        ranked_s = time.perf_counter() - started
        return order.ranking(
            found.chunks,
            found.relevance,
            path=plan.path,
            steering=plan.steering,
            size=sized.size,
            cypher=found.fetched.cypher,
            params=found.fetched.params,
            timings={**sized.timings, "ranking": ranked_s},
            queries=list(sized.queries + found.fetched.queries),
            notes=list(plan.notes + found.fetched.notes),
        )

    def _rank_planned(self, order: RankOrder, query: Query) -> Ranking:
        """Hard steering in ONE round trip: the query sizes the selection and picks exact or
        search_in itself (``plans.plans_in_query``); the size comes back with the ranking."""
        started = time.perf_counter()
        rows = self.paths.read(query)
        ranked_s = time.perf_counter() - started
        size = int(rows[0]["selection_size"]) if rows else 0
        found = [r for r in rows if r["id"] is not None]
        # The query names the path it took; an empty selection returns no chunk to name it, so
        # the planner says which path that size takes (the same rule the query applied).
        chosen = str(found[0]["path"]) if found else self.planner.plan(size, False).path
        candidates = [RankedChunk.from_row(r, True) for r in found]
        return order.ranking(
            candidates,
            [c.score for c in candidates],
            path=chosen,
            steering="hard",
            size=size,
            cypher=query.cypher,
            params=query.params,
            timings={"ranking": ranked_s},
            queries=[query.cypher],
        )

    def _candidates(
        self, order: RankOrder, plan: RankPlan, selection: CompiledSelectionLike
    ) -> _Candidates:
        """The selection's top ``k`` through the planned path (hard), or merged with U's
        (soft)."""
        if plan.steering == "soft" and not selection.is_all:
            return self._soft(order, selection, plan)
        assert plan.query is not None
        fetched = self.paths.run(
            plan.path, plan.query, order.vector, selection, order.fetch, order.with_embedding
        )
        in_selection = None if selection.is_all else True
        return _Candidates.scored(
            [RankedChunk.from_row(r, in_selection) for r in fetched.rows], fetched
        )

    def _soft(
        self, order: RankOrder, selection: CompiledSelectionLike, plan: RankPlan
    ) -> _Candidates:
        """Rank over U with members boosted by β: top of the selection ∪ top of U, re-scored.

        Non-members are drawn from U's top ``2·fetch``; members outside the selection's top
        ``fetch`` cannot reach the top k (the boost is uniform), so the merge is exact whenever U's
        top ``2·fetch`` holds ``fetch`` non-members (noted otherwise). Each further read (U's
        top, the members among it) is its own planned round.
        """
        beta = self.graph.settings.soft_boost
        path, vector, fetch, with_embedding = (
            plan.path,
            order.vector,
            order.fetch,
            order.with_embedding,
        )
        size = plan.size
        ran: tuple[str, ...] = ()
        notes: tuple[str, ...] = ()
        selected_rows: list[dict[str, Any]] = []
        if plan.query is not None:  # an empty selection (size 0) sends nothing for itself
            inside = self.paths.run(path, plan.query, vector, selection, fetch, with_embedding)
            selected_rows, ran, notes = inside.rows, inside.queries, inside.notes
        universe = getattr(selection, "universe", None)  # a scope's U (retrieval/in_scope.py)
        if universe is None:
            top = self.paths.rank_u(vector, 2 * fetch, with_embedding)
        else:
            top = self.paths.rank_universe(universe, vector, 2 * fetch, with_embedding)
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

        ``cypher/retrieve_boost.cypher`` (variant ``u_search=index`` on 5.26): each tier's top
        ``fetch_k`` (exact up to the planner's exact limit, else from U's over-fetched index top)
        ∪ U's top ``fetch_k`` holds the boosted top ``fetch_k`` (a tier's boost is uniform).
        """
        _check(k, ranker, None, threshold, fetch_k, mmr_lambda)
        order = self.order(
            query_vector,
            k=k,
            ranker=ranker,
            threshold=threshold,
            fetch_k=fetch_k,
            mmr_lambda=mmr_lambda,
        )
        plan = self.planner.planned(lambda facts: plan_tiers(order, compiled, facts, limit))
        return self._rank_tiers(order, plan, limit)

    def _rank_tiers(self, order: RankOrder, plan: RankPlan, limit: int | None = None) -> Ranking:
        """auto's tiers (or a compiled boost), ranked by their one planned ``retrieve_boost``;
        inside a scope, its notes say how U was ranked (``plans.scope_notes``)."""
        planned = cast(Query, plan.query)
        query, params = planned.cypher, planned.params
        started = time.perf_counter()
        rows = self.paths.read(planned)
        timings = {"ranking": time.perf_counter() - started}
        sizes = [int(x) for x in rows[0]["tier_sizes"]] if rows else []
        names = params["tier_names"]
        notes = scope_notes(plan.extra["scope"], params, sizes, plan.extra["filtered"])
        candidates = [
            RankedChunk.from_row(r, None, tiers=tuple(names[i] for i in r["member_of"]))
            for r in rows
        ]
        return order.ranking(
            candidates,
            [c.score + c.boost for c in candidates],
            path="boost",
            steering="auto",
            size=None,
            cypher=query,
            params=params,
            timings=timings,
            queries=[query],
            tier_sizes=dict(zip(names, sizes, strict=False)),
            keep=limit,
            notes=notes,
        )


def _check(
    k: int | None,
    ranker: str,
    path: str | None,
    threshold: float | None,
    fetch_k: int | None,
    mmr_lambda: float | None,
) -> None:
    """A direct caller's arguments, checked by the model ``GuidedRAG``'s request is checked by,
    so ``k=0`` is an error here too, never "the settings' top_k" (``None`` means that)."""
    RetrieveArgs.check(
        k=k,
        ranker=ranker,
        steering=None,
        path=path,
        threshold=threshold,
        fetch_k=fetch_k,
        mmr_lambda=mmr_lambda,
    )


def _check_steering(steering: str) -> None:
    if steering not in ("hard", "soft"):
        raise ConfigurationError(
            f"unknown steering {steering!r} for a selection; use 'hard' or 'soft' "
            "(auto ranks graded tiers: Retriever.rank_tiers)"
        )
