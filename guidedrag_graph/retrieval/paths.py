"""The physical paths that rank a selection inside Neo4j; each returns a ``Fetched``.

* ``exact`` — ``vector.similarity.cosine`` over every selected chunk (``retrieve_exact``): exact,
  one dot product per selected chunk, so it wins for small selections;
* ``plugin`` — exact, through the ``guidedrag.rank`` procedure (``plugin/``, docs/plugin.md),
  which keeps the embeddings it has read in a float32 cache: ~1 µs per chunk instead of ~45;
* ``search_in`` — on 2026.06+, the selection's ids filter the vector index search itself;
* ``index`` — the approximate vector index over every chunk, U (base RAG; ``SEARCH`` on
  2026.01+, ``db.index.vector.queryNodes`` on 5.26). For a selection it is a *post-filter*:
  over-fetch from U, keep the members, widen until k are found, else fall back to exact.

Every query runs in a READ transaction (``GraphContext.read``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from guidedrag_graph.context import RANK_PROCEDURE, GraphContext
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.retrieval.planner import Planner
from guidedrag_graph.retrieval.results import Fetched
from guidedrag_graph.retrieval.selections import CompiledSelectionLike, CompiledTiersLike
from guidedrag_graph.templates import queries as templates
from guidedrag_graph.vocabulary import PATHS

# Post-filter path: first over-fetch factor over U, and the widest fetch before exact fallback.
POSTFILTER_FIRST = 10
# auto's tiers ranked from U's top (retrieve_boost): this factor's top first, POSTFILTER_FIRST's
# only when it holds fewer than fetch_k members of such a tier (the same ranking either way).
TIERS_FIRST = 2
POSTFILTER_MAX = 10_000
# Filtered SEARCH asks the index for this many times fetch_k and keeps the best fetch_k: the
# recall guard for large selections (filtered HNSW recall@5 fell to 0.93 at 10% selectivity
# with LIMIT k; a wider LIMIT widens the graph search). Not yet measured on clustered vectors:
# `benchmarks/planner_bench.py --clusters 200` reports recall with and without it.
SEARCH_IN_OVERFETCH = 4

_Path = Callable[[list[float], CompiledSelectionLike, dict[str, Any]], Fetched]


class Paths:
    """Runs one path for one selection; knows nothing of steering or the final top k."""

    def __init__(self, graph: GraphContext, planner: Planner) -> None:
        self.graph = graph
        self.planner = planner
        self._paths: dict[str, _Path] = {
            "exact": self._exact,
            "plugin": self._plugin,
            "search_in": self._search_in,
            "index": self._index,
        }

    # ------------------------------------------------------------------ variants
    def variant(self, name: str, **chosen: str) -> dict[str, str]:
        """``cypher/<name>.cypher``'s variants, as the context chooses them
        (``GraphContext.variant``, the one place a server fact picks a variant)."""
        return self.graph.variant(name, **chosen)

    # ------------------------------------------------------------------ U and members
    def index_query(self) -> tuple[str, dict[str, Any]]:
        """The vector index top k over every chunk (``SEARCH`` or the 5.26 procedure)."""
        schema, settings = self.graph.schema, self.graph.settings
        variant = self.variant("retrieve_search")
        query = templates.query(
            "retrieve_search",
            schema,
            names={"vector_index": settings.vector_index_name},
            variant=variant,
        )
        extra = {"index_name": settings.vector_index_name} if variant["u_search"] == "index" else {}
        return query, extra

    def rank_u(self, vector: list[float], fetch_k: int, with_embedding: bool) -> Fetched:
        query, extra = self.index_query()
        params = {
            **extra,
            "query_vector": vector,
            "fetch_k": int(fetch_k),
            "with_embedding": with_embedding,
        }
        return Fetched.one(self.graph.read(query, params, name="retrieve_search"), query, params)

    def members_query(self, selection: CompiledSelectionLike) -> str:
        return templates.query("selection_members", self.graph.schema, selection=selection.cypher)

    def members(self, selection: CompiledSelectionLike, candidate_ids: list[str]) -> set[str]:
        """Which of ``candidate_ids`` the selection holds (one query)."""
        rows = self.graph.read(
            self.members_query(selection),
            {**selection.params, "candidate_ids": candidate_ids},
            name="selection_members",
        )
        return {str(r["id"]) for r in rows}

    def size_query(self, selection: CompiledSelectionLike) -> str:
        return templates.query("selection_size", self.graph.schema, selection=selection.cypher)

    def size(self, selection: CompiledSelectionLike) -> int:
        rows = self.graph.read(
            self.size_query(selection), dict(selection.params), name="selection_size"
        )
        return int(rows[0]["selection_size"]) if rows else 0

    def planned_query(
        self,
        vector: list[float],
        selection: CompiledSelectionLike,
        fetch_k: int,
        with_embedding: bool,
        exact_max: int,
    ) -> tuple[str, dict[str, Any]]:
        """``retrieve_planned`` (its plugin variant with the plugin): exact up to ``exact_max``
        chunks, search_in beyond, decided by the query; and its parameters."""
        schema = self.graph.schema
        variant = self.variant("retrieve_planned")
        query = templates.query(
            "retrieve_planned",
            schema,
            selection=selection.cypher,
            names={"vector_index": self.graph.settings.vector_index_name},
            variant=variant,
        )
        params: dict[str, Any] = {
            **selection.params,
            "query_vector": vector,
            "fetch_k": int(fetch_k),
            "wide_k": int(fetch_k) * SEARCH_IN_OVERFETCH,
            "exact_max": int(exact_max),
            "with_embedding": with_embedding,
        }
        if variant["rank"] == "plugin":
            params["embedding_property"] = schema.chunk_embedding
        return query, params

    def tiers_query(
        self,
        compiled: CompiledTiersLike,
        vector: list[float],
        fetch: int,
        with_embedding: bool,
        limit: int | None,
        exact_max: int,
        tier_list_max: int,
    ) -> tuple[str, dict[str, Any]]:
        """``retrieve_boost`` (its variants: the 5.26 index procedure, the plugin) for these
        tiers: each tier ranked exactly up to ``exact_max`` chunks; and the query's parameters."""
        settings, schema = self.graph.settings, self.graph.schema
        tiers = list(compiled.tiers)
        lists = {
            "tiers": [t.list_variable for t in tiers],
            "members": [t.member_variable for t in tiers],
        }
        params: dict[str, Any] = {
            **compiled.params,
            "query_vector": vector,
            "fetch_k": fetch,
            "u_fetch_k": fetch,
            "first_k": fetch * TIERS_FIRST,
            "wide_k": fetch * POSTFILTER_FIRST,
            "exact_max": int(exact_max),
            "tier_list_max": int(tier_list_max),
            "tier_weights": [float(t.weight) for t in tiers],
            "tier_names": [t.name or t.list_variable for t in tiers],
            "limit": fetch if limit is None else limit,
            "with_embedding": with_embedding,
            # filters (retrieval/filters.py): the tier every candidate must be in, else -1
            "universe": int(getattr(compiled, "universe", -1)),
        }
        variant = self.variant("retrieve_boost")
        scope = self.scope_mode(compiled)
        if scope != "unscoped":  # unscoped: the variant's default, the query as it always was
            variant = {**variant, "scope": scope}
        if scope == "exact":
            params["scope_exact_max"] = self.planner.scope_exact_max()
        # With the plugin, one guidedrag.rankTiers call scores the tiers from its float32 cache
        # (~1 µs per chunk instead of Cypher's ~45) and picks the candidates: the same ones.
        if variant["rank_tiers"] == "plugin":
            params["embedding_property"] = schema.chunk_embedding
        if variant["u_search"] == "index":
            params["index_name"] = settings.vector_index_name
        prelude = compiled.prelude
        if scope == "property":  # U's SEARCH filtered by the scope's own predicate
            prelude = f"{prelude}\n{self.scope_search(compiled)}"
        query = templates.query(
            "retrieve_boost",
            schema,
            selection=prelude,
            names={"vector_index": settings.vector_index_name},
            lists=lists,
            variant=variant,
        )
        return query, params

    def scope_mode(self, compiled: CompiledTiersLike) -> str:
        """``retrieve_boost``'s ``scope`` variant for these tiers: ``Planner.scope_in_tiers``
        when they rank inside a trusted scope (``ScopedTiers``; ``property`` where its universe
        is a predicate the index's SEARCH takes), else ``unscoped`` (the template's default
        variant, ``none``)."""
        if not getattr(compiled, "in_scope", False) and not getattr(compiled, "filtered", False):
            return "unscoped"
        return self.planner.scope_in_tiers(getattr(compiled, "search_properties", None))

    def scope_search(self, compiled: Any) -> str:
        """``cypher/scope_search.cypher`` around the universe's predicate: binds ``scope_top``,
        the index's top ``$wide_k`` chunks that pass it (``ScopedTiers.search_predicate``)."""
        schema, names = self.graph.schema, {"vector_index": self.graph.settings.vector_index_name}
        head = templates.fragment("scope_search", "open", schema, names=names)
        tail = templates.fragment("scope_search", "close", schema, names=names)
        return f"{head} {compiled.search_predicate()}\n{tail}"

    # ------------------------------------------------------------------ one path
    def rank(
        self,
        path: str,
        vector: list[float],
        selection: CompiledSelectionLike,
        fetch_k: int,
        with_embedding: bool,
    ) -> Fetched:
        """Top ``fetch_k`` members of the selection by cosine, through ``path``."""
        run = self._paths.get(path)
        if run is None:
            raise ConfigurationError(f"unknown retrieval path {path!r}; use one of {PATHS}")
        base = {
            **selection.params,
            "query_vector": vector,
            "fetch_k": int(fetch_k),
            "with_embedding": with_embedding,
        }
        return run(vector, selection, base)

    def _exact(
        self, vector: list[float], selection: CompiledSelectionLike, base: dict[str, Any]
    ) -> Fetched:
        query = templates.query(
            "retrieve_exact",
            self.graph.schema,
            selection=selection.cypher,
            variant=self.variant("retrieve_exact", rank="cypher"),
        )
        return Fetched.one(self.graph.read(query, base, name="retrieve_exact"), query, base)

    def _plugin(
        self, vector: list[float], selection: CompiledSelectionLike, base: dict[str, Any]
    ) -> Fetched:
        if not self.graph.rank_plugin:
            raise ConfigurationError(
                f"path 'plugin' needs the {RANK_PROCEDURE} procedure on the server (see "
                f"docs/plugin.md; rank_plugin={self.graph.settings.rank_plugin!r}); use 'exact'"
            )
        schema = self.graph.schema
        query = templates.query(
            "retrieve_exact",
            schema,
            selection=selection.cypher,
            variant=self.variant("retrieve_exact", rank="plugin"),
        )
        params = {**base, "embedding_property": schema.chunk_embedding}
        rows = self.graph.read(query, params, name="retrieve_exact")
        return Fetched.one(rows, query, params)

    def _search_in(
        self, vector: list[float], selection: CompiledSelectionLike, base: dict[str, Any]
    ) -> Fetched:
        schema, settings = self.graph.schema, self.graph.settings
        if not self.graph.server.supports_search_in_filter:
            raise ConfigurationError(
                f"path 'search_in' needs Neo4j 2026.06+ (this server is "
                f"{self.graph.server.version}); use 'exact' or 'index'"
            )
        if self.planner.search_in_unready() is not None:
            raise ConfigurationError(
                f"path 'search_in' needs the vector index {settings.vector_index_name!r} to "
                f"declare the chunk id as a filter property: recreate it WITH "
                f"[c.{schema.chunk_id}] (`guidedrag migrate`, or `guidedrag kb adopt` on your "
                f"own graph) or use 'exact' or 'index'"
            )
        query = templates.query(
            "retrieve_search_in",
            schema,
            selection=selection.cypher,
            names={"vector_index": settings.vector_index_name},
        )
        wide = {**base, "fetch_k": int(base["fetch_k"]) * SEARCH_IN_OVERFETCH}
        rows = self.graph.read(query, wide, name="retrieve_search_in")
        return Fetched.one(rows[: base["fetch_k"]], query, wide)

    def _index(
        self, vector: list[float], selection: CompiledSelectionLike, base: dict[str, Any]
    ) -> Fetched:
        fetch_k, with_embedding = int(base["fetch_k"]), bool(base["with_embedding"])
        if selection.is_all:
            return self.rank_u(vector, fetch_k, with_embedding)
        # Post-filter: over-fetch from U, keep members, widen until fetch_k members are found.
        want = max(fetch_k * POSTFILTER_FIRST, fetch_k)
        members_query = self.members_query(selection)
        ran: tuple[str, ...] = ()
        while True:
            top = self.rank_u(vector, want, with_embedding)
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
                return self._exact(vector, selection, base).after(ran, (note,))
            want = min(want * 4, POSTFILTER_MAX)
