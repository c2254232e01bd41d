"""The planner: which physical path ranks a selection of a given size on this server.

Its crossover points were measured by ``benchmarks/planner_bench.py`` (``MEASURED_EXACT_MAX``)
and can be overridden with ``GUIDEDRAG_PLANNER_EXACT_MAX``. What it learns about the server (the
plugin's cache budget, whether the vector index can filter by chunk id) is asked once per
``GraphContext``; a plan that had to avoid a path says why in its notes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from guidedrag_graph.context import GraphContext
from guidedrag_graph.schema.presets import ELEMENT_ID
from guidedrag_graph.templates import queries as templates

# Largest selection ranked exactly, keyed by the index path the planner would use instead. Below
# it exact cosine is both faster and exact; above it the index path is faster but loses recall
# as the selection grows. Measured by benchmarks/planner_bench.py on both server lines; the
# figures and how they were taken are in docs/planner.md ("Measured here").
MEASURED_EXACT_MAX: dict[str, int] = {"search_in": 500, "index": 1_000}
# With the rank plugin, exact ranking costs about a microsecond per selected chunk once cached,
# less than selecting the chunk, so exact (recall 1.0) stays the default far beyond the Cypher
# crossover (benchmarks/plugin_bench.py; figures in docs/plugin.md).
MEASURED_PLUGIN_EXACT_MAX = 200_000
# Under auto, a tier of entity terms whose entities' mentions add up to more than this is not
# listed: each candidate is tested for membership instead, and the tier is ranked from U's
# over-fetched top. Listing and ranking grow with the tier, the test does not; the crossover
# was measured by benchmarks/tier_listing.py on a synthetic KB (docs/performance.md).
MEASURED_TIER_LIST_MAX = 3_000
# Inside a scope, on a server whose vector index cannot filter by chunk id (5.26, an index
# without the id), the scope's chunks are ranked exactly in Cypher up to this many: a latency
# budget, not a measured crossover (benchmarks/scope_recall.py: auto ranked a 4,000-chunk scope
# in ~0.3 s on 2026.08.1, ~70 µs per chunk at load 6; 5.26's cosine is slower, docs/planner.md).
# Past it the scope's part comes from the index's over-fetched top over the whole KB, and the
# result says that recall may be partial.
SCOPE_EXACT_BUDGET = 10_000


@dataclass(frozen=True)
class Plan:
    """The chosen path, and why another one was not (``notes``, shown in the result)."""

    path: str
    notes: tuple[str, ...] = ()


class Planner:
    """Chooses a path by selection size, server version, plugin and index declaration."""

    def __init__(self, graph: GraphContext) -> None:
        self.graph = graph

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
            # VectorCache.size: floats + array + record (16 + 4·dim + 64), the map node (40) and
            # the element-id key ("4:<uuid>:<n>", about 45 characters).
            per_vector = 16 + 4 * self.graph.settings.embedding_dimensions + 64 + 40 + 45
            return min(MEASURED_PLUGIN_EXACT_MAX, budget // per_vector)

        return self.graph.fact("plugin_exact_max", ask)

    def exact_max(self) -> int:
        """Selections up to this size are ranked exactly; larger ones through the index."""
        if self.graph.settings.planner_exact_max is not None:
            return self.graph.settings.planner_exact_max
        key = "search_in" if self.graph.server.supports_search_in_filter else "index"
        if self.graph.rank_plugin:  # never below Cypher's own crossover, even with a tiny cache
            return max(self.plugin_exact_max(), MEASURED_EXACT_MAX[key])
        return MEASURED_EXACT_MAX[key]

    def tier_list_max(self) -> int:
        """Mentions past which a tier of entity terms is tested, not listed
        (``cypher/select_mentioned.cypher``)."""
        if self.graph.settings.planner_tier_list_max is not None:
            return self.graph.settings.planner_tier_list_max
        return MEASURED_TIER_LIST_MAX

    def scope_exact_max(self) -> int:
        """How many in-scope chunks are ranked exactly in Cypher where the index cannot filter
        by chunk id (``GUIDEDRAG_PLANNER_SCOPE_EXACT_MAX``, else ``SCOPE_EXACT_BUDGET``)."""
        if self.graph.settings.planner_scope_exact_max is not None:
            return self.graph.settings.planner_scope_exact_max
        return max(SCOPE_EXACT_BUDGET, self.graph.settings.planner_exact_max or 0)

    def scope_in_tiers(self, properties: frozenset[str] | None = None) -> str:
        """How auto's tiers reach a scope's chunks (``retrieve_boost``'s ``scope`` variant):
        ``property``, a SEARCH filtered by the scope's own property predicate where it is one
        the SEARCH takes (``properties``: ``retrieval/scope_predicate.py``) on properties the
        index declares; ``index``, a SEARCH filtered by the scope's chunk ids where the index
        can filter by them; else ``exact``, the scope ranked by Cypher's cosine up to
        ``scope_exact_max``."""
        if (
            properties
            and self.graph.server.supports_search_in_filter
            and properties <= self.vector_filter_properties()
        ):
            return "property"
        if self.graph.server.supports_search_clause and self.plans_in_query():
            return "index"
        return "exact"

    def plan(self, selection_size: int | None, is_all: bool, *, scoped: bool = False) -> Plan:
        """The path for a selection of this size on this server (``None`` size: unknown).
        ``scoped``: the selection is kept to a trusted scope; where the index cannot filter by
        chunk id, it is ranked exactly up to ``scope_exact_max`` rather than post-filtered
        from the index's top over the whole KB, which can lose most of a small scope."""
        if is_all:
            return Plan("index")
        exact = "plugin" if self.graph.rank_plugin else "exact"
        if selection_size is not None and selection_size <= self.exact_max():
            return Plan(exact)
        if scoped and not self.plans_in_query():
            if selection_size is not None and selection_size <= self.scope_exact_max():
                cannot = "the vector index cannot filter by chunk id here"
                note = f"scope: its {selection_size} chunks ranked exactly ({cannot})"
                return Plan(exact, (note,))
            return Plan("index", (scope_partial(selection_size, self.scope_exact_max()),))
        if not self.graph.server.supports_search_in_filter:
            return Plan("index")
        if self.graph.schema.chunk_id == ELEMENT_ID:  # elementId chunks: nothing to declare
            return Plan("index")
        why = self.search_in_unready()
        return Plan("search_in") if why is None else Plan("index", (why,))

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


def scope_partial(size: int | None, budget: int) -> str:
    """The note of a scope ranked past every exact budget where the index cannot filter by id."""
    held = "an unknown number of" if size is None else f"its {size}"
    return (
        f"scope: {held} chunks exceed the exact budget ({budget}) and the vector index cannot "
        "filter by chunk id here, so its part of the ranking comes from the index's "
        "over-fetched top over the whole KB: recall may be partial (Neo4j 2026.06+ with the "
        "index declared WITH [c.id], `guidedrag migrate`, ranks it in the index)"
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
