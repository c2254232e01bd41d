"""What ranking needs to know about the KB and its server, as plain data — and the choices made
from it: the path for a selection's size (the planner's rule) and a template's variants.

``RankFacts`` is gathered at the edge (``Planner.facts``, through ``GraphContext``, whose reads
all pass ``db/reads.read``) and handed to the pure planning functions (``retrieval/plans.py``),
which import no driver (an import-linter contract in ``pyproject.toml``). A fact left ``None``
was not gathered: the step that would need it does not run for this ranking, so the edge does
not pay its round trip (a filtered ``SEARCH``'s readiness is asked only when a selection is
large enough for it): a plan that needs one raises ``MissingFact``, and the edge reads it and
plans again — a facts → plan round, never a read inside planning.

>>> facts = RankFacts(schema=schema_for("guidedrag"), vector_index_name="chunk_embedding",
...                   u_search="search", rank_plugin=False, exact_max=500)
>>> choose_path(120, False, facts).path
'exact'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from guidedrag_graph.schema.presets import ELEMENT_ID, SchemaMapping
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


class MissingFact(LookupError):
    """A plan needed a fact the edge had not gathered: the edge (``Planner.planned``) reads it
    and plans again, so a fact costs its round trip only when a plan needs it."""

    def __init__(self, name: str) -> None:
        super().__init__(f"ranking planned without the fact {name!r} (gather it: Planner.facts)")
        self.name = name


@dataclass(frozen=True)
class RankFacts:
    """The facts one ranking is planned from. ``schema`` and the index name come from the
    settings; the rest is read from the server once per driver (``GraphContext.fact``).

    ``u_search``: ``search`` (2026.01+ ``SEARCH``) or ``index`` (the 5.26 procedure);
    ``rank_plugin``/``rank_tiers_plugin``: ``guidedrag.rank``/``rankTiers`` rank;
    ``tier_walk_plugin``: the plugin lists the functions that walk auto's entity tiers;
    ``rank_auto_plugin``: it lists ``guidedrag.rankAuto`` (auto's search and ranking in one call);
    ``search_in_filter``: the server can filter a vector search (2026.06+);
    ``search_in_unready``: why a filtered ``SEARCH`` cannot run here ("" when it can);
    ``scope_exact_max``: inside a scope, where the index cannot filter by chunk id, how many
    in-scope chunks are ranked exactly (the scope budget, ``scope_exact_max_for``);
    ``vector_filter_properties``: the chunk properties the vector index declares as filter
    properties (``WITH [c.p, ...]``; empty if it indexes another label)."""

    schema: SchemaMapping
    vector_index_name: str
    u_search: str | None = None
    rank_plugin: bool | None = None
    rank_tiers_plugin: bool | None = None
    tier_walk_plugin: bool | None = None
    rank_auto_plugin: bool | None = None
    exact_max: int | None = None
    tier_list_max: int | None = None
    search_in_filter: bool | None = None
    search_in_unready: str | None = None
    soft_boost: float | None = None
    scope_exact_max: int | None = None
    vector_filter_properties: frozenset[str] | None = None
    server_version: str = ""
    rank_plugin_setting: str = "auto"

    def need(self, name: str) -> Any:
        """The fact ``name``; ``MissingFact`` naming it when the edge has not gathered it."""
        value = getattr(self, name)
        if value is None:
            raise MissingFact(name)
        return value

    def with_facts(self, **values: Any) -> RankFacts:
        """These facts with more of them known."""
        return replace(self, **values)

    @property
    def search_in_ready(self) -> bool:
        """Whether a filtered ``SEARCH`` can run: the server filters and the index declares the
        chunk id."""
        return bool(self.need("search_in_filter")) and self.need("search_in_unready") == ""

    def variant(self, name: str, **chosen: str) -> dict[str, str]:
        """THE choice of ``cypher/<name>.cypher``'s variants from the server's facts: ``SEARCH``
        (2026.01+) or the 5.26 index procedure for U; whether the rank plugin's
        ``guidedrag.rank`` / ``guidedrag.rankTiers`` rank; whether auto's entity tiers are walked
        by the plugin's functions (``walk``, the variant of ``select_near``/``select_mentioned``
        the selection compiler takes). ``chosen`` overrides a fact with a caller's explicit
        choice (path 'plugin'). Only the axes the template declares come back, so the renderer
        can refuse any other; each fact is needed only for an axis the template has, so the edge
        reads it only then (``MissingFact``)."""
        facts: dict[str, Callable[[], str]] = {
            "u_search": lambda: str(self.need("u_search")),
            "rank": lambda: "plugin" if self.need("rank_plugin") else "cypher",
            "rank_tiers": lambda: "plugin" if self.need("rank_tiers_plugin") else "cypher",
            # a plugin that cannot rank the tiers is not asked for the walk
            "walk": lambda: (
                "plugin"
                if self.need("rank_tiers_plugin") and self.need("tier_walk_plugin")
                else "cypher"
            ),
        }
        return {
            axis: chosen[axis] if axis in chosen else facts[axis]()
            for axis in templates.variants(name)
            if axis in chosen or axis in facts
        }


def choose_path(
    selection_size: int | None, is_all: bool, facts: RankFacts, *, scoped: bool = False
) -> Plan:
    """The path for a selection of this size on this server (``None`` size: unknown): exact
    (or the plugin) up to ``exact_max``, else filtered ``SEARCH`` where it can run, else the
    index post-filter — saying why search_in could not run when that was the reason.
    ``scoped``: the selection is kept to a trusted scope; where the index cannot filter by
    chunk id, it is ranked exactly up to ``scope_exact_max`` rather than post-filtered from the
    index's top over the whole KB, which can lose most of a small scope."""
    if is_all:
        return Plan("index")
    exact = "plugin" if facts.need("rank_plugin") else "exact"
    if selection_size is not None and selection_size <= facts.need("exact_max"):
        return Plan(exact)
    if scoped and not facts.search_in_ready:
        budget = int(facts.need("scope_exact_max"))
        if selection_size is not None and selection_size <= budget:
            cannot = "the vector index cannot filter by chunk id here"
            note = f"scope: its {selection_size} chunks ranked exactly ({cannot})"
            return Plan(exact, (note,))
        return Plan("index", (scope_partial(selection_size, budget),))
    if not facts.need("search_in_filter"):
        return Plan("index")
    if facts.schema.chunk_id == ELEMENT_ID:  # elementId chunks: nothing to declare
        return Plan("index")
    why = facts.need("search_in_unready")
    return Plan("search_in") if why == "" else Plan("index", (why,))


def scope_in_tiers(facts: RankFacts, properties: frozenset[str] | None = None) -> str:
    """How auto's tiers reach a scope's chunks (``retrieve_boost``'s ``scope`` variant):
    ``property``, a SEARCH filtered by the scope's own property predicate where it is one the
    SEARCH takes (``properties``: ``retrieval/scope_predicate.py``) on properties the index
    declares; ``index``, a SEARCH filtered by the scope's chunk ids where the index can filter
    by them; else ``exact``, the scope ranked by Cypher's cosine up to ``scope_exact_max``."""
    if (
        properties
        and facts.need("search_in_filter")
        and properties <= facts.need("vector_filter_properties")
    ):
        return "property"
    if facts.need("u_search") == "search" and facts.search_in_ready:
        return "index"
    return "exact"


def scope_exact_max_for(override: int | None, exact_max_override: int | None) -> int:
    """How many in-scope chunks are ranked exactly where the index cannot filter by chunk id:
    ``GUIDEDRAG_PLANNER_SCOPE_EXACT_MAX``, else ``SCOPE_EXACT_BUDGET`` (never below an
    overridden ``exact_max``)."""
    if override is not None:
        return override
    return max(SCOPE_EXACT_BUDGET, exact_max_override or 0)


def scope_partial(size: int | None, budget: int) -> str:
    """The note of a scope ranked past every exact budget where the index cannot filter by id."""
    held = "an unknown number of" if size is None else f"its {size}"
    return (
        f"scope: {held} chunks exceed the exact budget ({budget}) and the vector index cannot "
        "filter by chunk id here, so its part of the ranking comes from the index's "
        "over-fetched top over the whole KB: recall may be partial (Neo4j 2026.06+ with the "
        "index declared WITH [c.id], `guidedrag migrate`, ranks it in the index)"
    )


def exact_max_for(
    override: int | None, search_in_filter: bool, plugin_exact_max: int | None
) -> int:
    """Selections up to this size are ranked exactly: the settings' override, else the measured
    crossover for the index path this server offers — never below it with the plugin
    (``plugin_exact_max``: its limit for the cache it has; None without the plugin)."""
    if override is not None:
        return override
    key = "search_in" if search_in_filter else "index"
    if plugin_exact_max is not None:
        return max(plugin_exact_max, MEASURED_EXACT_MAX[key])
    return MEASURED_EXACT_MAX[key]


def plugin_limit(budget: int, dimensions: int) -> int:
    """How many chunks the plugin ranks exactly from its cache of ``budget`` bytes: VectorCache
    holds floats + array + record (16 + 4·dim + 64), the map node (40) and the element-id key
    ("4:<uuid>:<n>", about 45 characters) per vector."""
    per_vector = 16 + 4 * dimensions + 64 + 40 + 45
    return min(MEASURED_PLUGIN_EXACT_MAX, budget // per_vector)
