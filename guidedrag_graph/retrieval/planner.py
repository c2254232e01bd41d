"""The planner's edge: the facts a ranking is planned from, read from this server once.

Which physical path ranks a selection of a given size is a pure rule (``facts.choose_path``,
from plain ``RankFacts``); this module gathers those facts through ``GraphContext`` — the
server's version and plugin procedures, the plugin's cache budget, whether the vector index can
filter by chunk id — each asked once per driver and kept (``GraphContext.fact``), and runs a
pure plan until it has every fact it needs (``planned``). Its crossover points were measured by
``benchmarks/planner_bench.py`` (``MEASURED_EXACT_MAX``) and can be overridden with
``GUIDEDRAG_PLANNER_EXACT_MAX``; a plan that had to avoid a path says why in its notes.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any, TypeVar

from guidedrag_graph.context import GraphContext
from guidedrag_graph.retrieval.facts import (
    MEASURED_EXACT_MAX,
    MEASURED_PLUGIN_EXACT_MAX,
    MEASURED_TIER_LIST_MAX,
    SCOPE_EXACT_BUDGET,
    MissingFact,
    Plan,
    RankFacts,
    choose_path,
    exact_max_for,
    plugin_limit,
    scope_exact_max_for,
)
from guidedrag_graph.schema.presets import ELEMENT_ID
from guidedrag_graph.selection import fact_rounds
from guidedrag_graph.templates import queries as templates

__all__ = [
    "MEASURED_EXACT_MAX",
    "MEASURED_PLUGIN_EXACT_MAX",
    "MEASURED_TIER_LIST_MAX",
    "SCOPE_EXACT_BUDGET",
    "Plan",
    "Planner",
]

_P = TypeVar("_P")
# The facts ``Planner.gather`` reads: a plan lacks each at most once, so it needs at most this
# many reads (more is ``fact_rounds.FactsNotConverging``).
GATHERED = (
    "u_search",
    "search_in_filter",
    "rank_plugin",
    "rank_tiers_plugin",
    "tier_walk_plugin",
    "rank_auto_plugin",
    "exact_max",
    "search_in_unready",
    "vector_filter_properties",
)


class Planner:
    """Gathers a ranking's facts from this server and plans with them (``planned``)."""

    def __init__(self, graph: GraphContext) -> None:
        self.graph = graph

    # ------------------------------------------------------------------ facts, gathered
    def facts(self) -> RankFacts:
        """The facts known without a round trip: the settings', and the server's that an
        earlier call on this driver already read. The rest is read when a plan needs it."""
        graph, settings = self.graph, self.graph.settings
        known: dict[str, Any] = {}
        kept = graph.known_facts()  # one look at the kept facts, not one per fact
        server = kept.get("server")
        if server is not None:
            known.update(
                u_search="search" if server.supports_search_clause else "index",
                search_in_filter=server.supports_search_in_filter,
                server_version=str(server.version),
            )
        plugin = False if settings.rank_plugin == "off" else kept.get("rank_plugin")
        if plugin is not None:
            known["rank_plugin"] = plugin
            tiers = False if not plugin else kept.get("rank_tiers_plugin")
            if tiers is not None:
                known["rank_tiers_plugin"] = tiers
                walk = False if not tiers else kept.get("tier_walk_plugin")
                if walk is not None:
                    known["tier_walk_plugin"] = walk
                auto = False if not tiers else kept.get("rank_auto_plugin")
                if auto is not None:
                    known["rank_auto_plugin"] = auto
        if settings.planner_exact_max is not None:
            known["exact_max"] = settings.planner_exact_max
        elif server is not None and plugin is not None:
            limit = kept.get("plugin_exact_max") if plugin else None
            if not plugin or limit is not None:
                known["exact_max"] = exact_max_for(None, server.supports_search_in_filter, limit)
        if graph.schema.chunk_id == ELEMENT_ID:
            known["search_in_unready"] = self.search_in_unready() or ""
        elif kept.get("search_in_ready"):  # only a "ready" answer is kept
            known["search_in_unready"] = ""
        declared = kept.get("vector_filter_properties")
        if declared is not None:  # read once per driver: no round trip when already known
            known["vector_filter_properties"] = declared
        return RankFacts(
            schema=graph.schema,
            vector_index_name=settings.vector_index_name,
            tier_list_max=self.tier_list_max(),
            scope_exact_max=self.scope_exact_max(),
            soft_boost=settings.soft_boost,
            rank_plugin_setting=str(settings.rank_plugin),
            **known,
        )

    def gather(self, facts: RankFacts, name: str) -> RankFacts:
        """``facts`` with the fact ``name`` read from the server (once per driver)."""
        graph = self.graph
        readers: dict[str, Callable[[], dict[str, Any]]] = {
            "u_search": lambda: {
                "u_search": "search" if graph.server.supports_search_clause else "index"
            },
            "search_in_filter": lambda: {
                "search_in_filter": graph.server.supports_search_in_filter,
                "server_version": str(graph.server.version),
            },
            "rank_plugin": lambda: {"rank_plugin": graph.rank_plugin},
            "rank_tiers_plugin": lambda: {"rank_tiers_plugin": graph.rank_tiers_plugin},
            "tier_walk_plugin": lambda: {"tier_walk_plugin": graph.tier_walk_plugin},
            "rank_auto_plugin": lambda: {"rank_auto_plugin": graph.rank_auto_plugin},
            "exact_max": lambda: {"exact_max": self.exact_max()},
            "search_in_unready": lambda: {"search_in_unready": self.search_in_unready() or ""},
            "vector_filter_properties": lambda: {
                "vector_filter_properties": self.vector_filter_properties()
            },
        }
        if name not in readers:  # GATHERED names them all
            raise MissingFact(name)
        return facts.with_facts(**readers[name]())

    def planned(self, plan: Callable[[RankFacts], _P], facts: RankFacts | None = None) -> _P:
        """``plan(facts)``, each fact it asks for and lacks read first: facts → plan rounds
        at the edge, so the plan itself never reads and a fact costs a round trip only when
        some plan needs it (as when each was asked inline)."""
        return fact_rounds.decided(
            plan,
            facts or self.facts(),
            lambda facts, missing: self.gather(facts, missing.name),
            MissingFact,
            attrgetter("name"),
            rounds=len(GATHERED),
        )

    # ------------------------------------------------------------------ the reads
    def plugin_exact_max(self) -> int:
        """The plugin's limit: the measured one, or fewer chunks if its cache holds fewer.

        Past its cache budget the plugin reads the store at Cypher's speed (~45 µs per chunk).
        """

        def ask() -> int:
            rows = self.graph.read(
                templates.query("rank_plugin_cache", self.graph.schema),
                {},
                name="rank_plugin_cache",
            )
            budget = int(rows[0]["budget"]) if rows else 0
            return plugin_limit(budget, self.graph.settings.embedding_dimensions)

        return self.graph.fact("plugin_exact_max", ask)

    def exact_max(self) -> int:
        """Selections up to this size are ranked exactly; larger ones through the index."""
        override = self.graph.settings.planner_exact_max
        if override is not None:
            return override
        filters = self.graph.server.supports_search_in_filter
        # never below Cypher's own crossover, even with a tiny cache
        plugin = self.plugin_exact_max() if self.graph.rank_plugin else None
        return exact_max_for(None, filters, plugin)

    def tier_list_max(self) -> int:
        """Mentions past which a tier of entity terms is tested, not listed
        (``cypher/select_mentioned.cypher``)."""
        if self.graph.settings.planner_tier_list_max is not None:
            return self.graph.settings.planner_tier_list_max
        return MEASURED_TIER_LIST_MAX

    def scope_exact_max(self) -> int:
        """How many in-scope chunks are ranked exactly in Cypher where the index cannot filter
        by chunk id (``GUIDEDRAG_PLANNER_SCOPE_EXACT_MAX``, else ``SCOPE_EXACT_BUDGET``)."""
        settings = self.graph.settings
        return scope_exact_max_for(settings.planner_scope_exact_max, settings.planner_exact_max)

    def plan(self, selection_size: int | None, is_all: bool, *, scoped: bool = False) -> Plan:
        """The path for a selection of this size on this server (``None`` size: unknown;
        ``scoped``: kept to a trusted scope, ``facts.choose_path``)."""
        return self.planned(lambda facts: choose_path(selection_size, is_all, facts, scoped=scoped))

    def plans_in_query(self) -> bool:
        """Whether the choice between exact and search_in can be made inside the ranking query
        (``retrieve_planned``: one round trip, no size query first). It needs filtered
        ``SEARCH`` (2026.06+, the index declaring the chunk id); elsewhere the planner asks the
        selection's size first and picks the path here, as before."""
        return self.graph.server.supports_search_in_filter and self.search_in_unready() is None

    def vector_filter_properties(self) -> frozenset[str]:
        """The chunk properties the vector index declares as filter properties (``WITH [c.p,
        ...]``; none if it indexes another label), asked once per ``GraphContext``."""

        def ask() -> frozenset[str]:
            rows = self.graph.read(
                templates.query("vector_index_filters", self.graph.schema),
                {"index_name": self.graph.settings.vector_index_name},
                name="vector_index_filters",
            )
            declared, labels = _declared(rows)
            return frozenset(declared) if self.graph.schema.chunk_label in labels else frozenset()

        return self.graph.fact("vector_filter_properties", ask)

    def search_in_unready(self) -> str | None:
        """Why a filtered ``SEARCH`` cannot run (None: the vector index declares the chunk id
        as a filter property, ``WITH [c.id]``).

        A filtered ``SEARCH`` on an index made without it fails with ``PropertyNotFound ... not
        an additional property`` (a user's own index, or one made before migration V0005). Only
        a "ready" answer is kept, so an index fixed later (`kb adopt`, `migrate`) is seen at once.
        """
        schema, settings = self.graph.schema, self.graph.settings
        if schema.chunk_id == ELEMENT_ID:
            return "chunks are addressed by elementId(), which a vector index cannot filter by"
        if self.graph.known("search_in_ready"):
            return None
        index = settings.vector_index_name
        rows = self.graph.read(
            templates.query("vector_index_filters", schema),
            {"index_name": index},
            name="vector_index_filters",
        )
        declared, labels = _declared(rows)
        if schema.chunk_id in declared and schema.chunk_label in labels:
            self.graph.remember("search_in_ready", True)
            return None
        what = (
            "does not exist"
            if not rows
            else (
                f"does not declare {schema.chunk_label}.{schema.chunk_id} as a filter "
                f"property (it has {sorted(declared) or 'none'})"
            )
        )
        return (
            f"planner: the vector index {index!r} {what}, so a filtered SEARCH cannot run; "
            f"ranked through exact/index instead (recreate the index WITH "
            f"[c.{schema.chunk_id}], e.g. `guidedrag migrate`, to enable search_in)"
        )


def _declared(rows: list[dict[str, Any]]) -> tuple[set[str], list[str]]:
    """``vector_index_filters``' rows: the declared filter properties and the index's labels."""
    declared: set[str] = set()
    labels: list[str] = []
    for row in rows:
        labels = [str(x) for x in row.get("labels") or []]
        declared.update(str(p) for p in (row.get("properties") or [])[1:])
        config = (row.get("options") or {}).get("indexConfig") or {}
        declared.update(str(p) for p in config.get("vector.filterable_properties") or [])
    return declared, labels
