"""The physical paths that rank a selection inside Neo4j, run: each returns a ``Fetched``.

* ``exact`` — ``vector.similarity.cosine`` over every selected chunk (``retrieve_exact``): exact,
  one dot product per selected chunk, so it wins for small selections;
* ``plugin`` — exact, through the ``guidedrag.rank`` procedure (``plugin/``, docs/plugin.md),
  which keeps the embeddings it has read in a float32 cache: ~1 µs per chunk instead of ~45;
* ``search_in`` — on 2026.06+, the selection's ids filter the vector index search itself;
* ``index`` — the approximate vector index over every chunk, U (base RAG; ``SEARCH`` on
  2026.01+, ``db.index.vector.queryNodes`` on 5.26). For a selection it is a *post-filter*:
  over-fetch from U, keep the members, widen until k are found, else fall back to exact.

Each query is planned without I/O (``retrieval/plans.py``, from ``RankFacts``); this is the
edge that sends it. Every query runs in a READ transaction (``GraphContext.read``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from guidedrag_graph.context import GraphContext
from guidedrag_graph.retrieval import plans
from guidedrag_graph.retrieval.facts import RankFacts
from guidedrag_graph.retrieval.in_scope import ScopedSelection
from guidedrag_graph.retrieval.planner import Planner
from guidedrag_graph.retrieval.plans import POSTFILTER_FIRST, POSTFILTER_MAX, Query
from guidedrag_graph.retrieval.results import Fetched
from guidedrag_graph.retrieval.selections import CompiledSelectionLike

__all__ = ["POSTFILTER_FIRST", "POSTFILTER_MAX", "Paths"]


class Paths:
    """Runs one path for one selection; knows nothing of steering or the final top k."""

    def __init__(self, graph: GraphContext, planner: Planner) -> None:
        self.graph = graph
        self.planner = planner

    def read(self, query: Query) -> list[dict[str, Any]]:
        """The one read of a planned query (``GraphContext.read``: logged, timed out)."""
        rows = self.graph.read(query.cypher, query.params, name=query.name)
        return rows if query.keep is None else rows[: query.keep]

    def fetch(self, query: Query) -> Fetched:
        """A planned query's rows, with the query they are the rows of."""
        return Fetched.one(self.read(query), query.cypher, query.params)

    # ------------------------------------------------------------------ variants
    def variant(self, name: str, **chosen: str) -> dict[str, str]:
        """``cypher/<name>.cypher``'s variants from this server's facts (``RankFacts.variant``,
        the facts read once per driver)."""
        return self.planner.planned(lambda facts: facts.variant(name, **chosen))

    # ------------------------------------------------------------------ U and members
    def index_query(self) -> tuple[str, dict[str, Any]]:
        """The vector index top k over every chunk (``SEARCH`` or the 5.26 procedure)."""
        query = self.planner.planned(lambda facts: plans.u_query(facts, [], 0, False))
        extra = {k: v for k, v in query.params.items() if k == "index_name"}
        return query.cypher, extra

    def rank_u(self, vector: list[float], fetch_k: int, with_embedding: bool) -> Fetched:
        query = self.planner.planned(
            lambda facts: plans.u_query(facts, vector, fetch_k, with_embedding)
        )
        return self.fetch(query)

    def members_query(self, selection: CompiledSelectionLike) -> str:
        return plans.members_query(self.planner.facts(), selection, []).cypher

    def members(self, selection: CompiledSelectionLike, candidate_ids: list[str]) -> set[str]:
        """Which of ``candidate_ids`` the selection holds (one query)."""
        rows = self.read(plans.members_query(self.planner.facts(), selection, candidate_ids))
        return {str(r["id"]) for r in rows}

    def size_query(self, selection: CompiledSelectionLike) -> str:
        return plans.size_query(self.planner.facts(), selection).cypher

    def size(self, selection: CompiledSelectionLike) -> int:
        rows = self.read(plans.size_query(self.planner.facts(), selection))
        return int(rows[0]["selection_size"]) if rows else 0

    def rank_universe(
        self, universe: ScopedSelection, vector: list[float], fetch_k: int, emb: bool
    ) -> Fetched:
        """Soft steering's U inside a scope (``ScopedSelection.universe``): sized first where
        the index cannot filter by chunk id, so that ``choose_path``'s ``scoped`` ranks it
        exactly up to the scope budget; then ranked on the path planned for it."""
        size = universe.universe_size
        ran: tuple[str, ...] = ()
        if size is None and not self.planner.plans_in_query():  # exact if it fits
            size = self.size(universe)
            ran = (self.size_query(universe),)
        path = self.planner.plan(size, False, scoped=True).path
        return self.rank(path, vector, universe, fetch_k, emb).after(ran)

    # ------------------------------------------------------------------ one path
    def rank(
        self,
        path: str,
        vector: list[float],
        selection: CompiledSelectionLike,
        fetch_k: int,
        with_embedding: bool,
        facts: RankFacts | None = None,
    ) -> Fetched:
        """Top ``fetch_k`` members of the selection by cosine, through ``path``."""
        query = self.planner.planned(
            lambda known: plans.path_query(known, path, vector, selection, fetch_k, with_embedding),
            facts,
        )
        return self.run(path, query, vector, selection, fetch_k, with_embedding)

    def run(
        self,
        path: str,
        query: Query,
        vector: list[float],
        selection: CompiledSelectionLike,
        fetch_k: int,
        with_embedding: bool,
    ) -> Fetched:
        """A planned path's query, sent; the index post-filter over a selection goes on from
        its first query's rows (more rounds, each planned: wider, then exact)."""
        if path != "index" or selection.is_all:
            return self.fetch(query)
        # Post-filter: over-fetch from U, keep members, widen until fetch_k members are found.
        want = int(query.params["fetch_k"])
        members_query = self.members_query(selection)
        ran: tuple[str, ...] = ()
        while True:
            top = self.fetch(query)
            members = self.members(selection, [str(r["id"]) for r in top.rows])
            ran += (top.cypher, members_query)
            kept = [r for r in top.rows if str(r["id"]) in members]
            if len(kept) >= fetch_k or len(top.rows) < want:
                return Fetched(kept[:fetch_k], top.cypher, top.params, ran)
            if want >= POSTFILTER_MAX:
                note = (
                    f"index post-filter found {len(kept)} of {fetch_k} members in the top "
                    f"{want} of U; fell back to exact cosine"
                )
                exact = plans.path_query(
                    self.planner.facts(), "exact", vector, selection, fetch_k, with_embedding
                )
                return self.fetch(exact).after(ran, (note,))
            want = min(want * 4, POSTFILTER_MAX)
            query = self.planner.planned(_u_query(vector, want, with_embedding))


def _u_query(vector: list[float], want: int, with_embedding: bool) -> Callable[[RankFacts], Query]:
    """U's top ``want``, to plan once the facts are known."""
    return lambda facts: plans.u_query(facts, vector, want, with_embedding)
