"""A selection's cost, estimated from cheap counts before it runs, and the bound on it.

The size limits (``limits.py``) bound the *text* of a selection; they cannot see that
``near('United States', 5)`` on a dense KB walks the whole graph five times, or that 200 such
terms do it 200 times. What a selection costs is decided by the graph: how many relationships its
``hop()``/``khop()``/``near()`` terms expand, which follows from the degrees of the entities they
start from and of the hubs they reach. This module estimates that work in *rows* (one row is one
relationship read or one list element touched, about one Neo4j db hit) from:

- the graph's totals, read from the count store (O(1): entities, chunks, MENTIONS, all
  relationships), and
- the relationship and MENTIONS degree of every start entity (one index seek and a degree
  lookup each),

both in one query (``cypher/selection_cost.cypher``), asked only when the selection has an
expanding term, and kept for ``GUIDEDRAG_RESOLUTION_CACHE_S`` like resolved names. That read is
the edge's (``selection/fact_reads.py``, through ``Resolver.cost_stats``): this module only
decides, from the counts it is handed, and imports no driver (the pure-planning contract).
A selection whose estimate is over ``GUIDEDRAG_MAX_SELECTION_COST`` is refused
(``SelectionCostError``) before its query is sent. The model and the default are explained in
docs/selection-limits.md.

The model, per breadth-first step (the templates' ``@step``): step 1 expands the start entities'
own degree (known); a later step expands the frontier times a growth factor, the larger of the
graph's average degree and the start entities' own (a hub's neighbourhood is assumed as dense as
the hub), and never more than the whole graph's relationships of that kind (each is read at most
twice per step). The frontier is capped by ``GUIDEDRAG_HOP_CAP`` and by the number of entities,
as the templates cap it. Set operations cost the sizes of their operands (their membership
tests are hashed). Every walk is iterative (``fold``).

Planning counts too, for every selection (expanding or not): the compiled query's set-operation
clauses (``WITH *, ...``; a chain of one operator is one clause, ``set_many``) each carry every
earlier list, and the planner's time on each grows with the square of the variables in scope
(summed over the clauses: ``CompiledPlan.projected``). The transaction timeout does not stop
planning: 199 binary ``-`` steps planned past a 30 s timeout (39 s on the server), and a
199-term ``a - (b ^ c) - ...`` of entity() terms (99 binary steps that cannot be one clause)
94 s (issue 34); both sum to ~1.1e7. Each unit of that sum is ``PLAN_ROWS`` rows, so a handful
of steps costs a few thousand rows and those two are refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from guidedrag_graph.errors import SelectionCostError
from guidedrag_graph.selection import nodes as A
from guidedrag_graph.selection.primitives import Resolved

if TYPE_CHECKING:
    from guidedrag_graph.config import Settings
    from guidedrag_graph.selection.compiled_forms import CompiledPlan

# Terms whose cost depends on the graph around their entities (their template has ``@step``).
EXPANDING = (A.Hop, A.KHop, A.Near)
# Each expanded relationship is a few rows of work in the templates (OPTIONAL MATCH, DISTINCT,
# collect, the visited-list test): PROFILE of near()/khop() on the sample KB gives 1.1-2.5 db hits
# per relationship the model counts; the larger is used.
ROW_WORK = 2.5
# Planning, in rows per unit of ``CompiledPlan.projected`` (variables in scope, squared, summed
# over the set-operation clauses): the 199-term nested chain above (1.16e7) planned 94 s on a
# loaded 2-core machine, ~80 rows each at the 10^7 rows/s the default bound assumes
# (docs/selection-limits.md); rounded up.
PLAN_ROWS = 100


@dataclass(frozen=True)
class GraphCounts:
    """Totals of the graph from the count store: what any one step can at most expand."""

    entities: int
    chunks: int
    mentions: int
    relationships: int

    @property
    def relations(self) -> int:
        """Relationships other than MENTIONS (entity relations, PART_OF, ...): an upper bound
        on what a hop step can expand."""
        return max(self.relationships - self.mentions, 0)


@dataclass(frozen=True)
class CostStats:
    """The counts a cost is estimated from: the graph's totals and each start entity's
    ``(relationship degree, MENTIONS degree)``."""

    graph: GraphCounts
    degrees: dict[str, tuple[int, int]]


@dataclass(frozen=True)
class Cost:
    """The estimate: ``rows`` in all, ``size`` (chunks, at most the KB's), and the costliest
    term (DSL text) with its rows, for the refusal message."""

    rows: float
    size: float
    worst: str = ""
    worst_rows: float = 0.0


def needs_estimate(expr: A.Expr) -> bool:
    """Only selections with an expanding term are estimated (the others touch each entity's
    chunks once and are bounded by the size limits); they cost no count query."""
    return any(isinstance(leaf, EXPANDING) for leaf in expr.leaves())


def start_ids(resolved: dict[A.Expr, Resolved]) -> list[str]:
    """The entity ids the cost needs degrees of: those of every entity-anchored term."""
    return [
        i
        for leaf, res in resolved.items()
        if isinstance(leaf, (A.EntityAnchored, A.Entities)) and not res.empty
        for i in res.ids
    ]


def estimate(
    expr: A.Expr, resolved: dict[A.Expr, Resolved], stats: CostStats, hop_cap: int
) -> Cost:
    """The selection's estimated rows (see the module docstring for the model)."""
    g = stats.graph
    chunks = float(max(g.chunks, 1))

    def combine(node: A.Expr, kids: list[Cost]) -> Cost:
        if not kids:
            own = _leaf(node, resolved.get(node, Resolved(empty=True)), stats, hop_cap)
            return Cost(own.rows, own.size, node.to_text(), own.rows)
        rows = sum(k.rows for k in kids) + sum(k.size for k in kids)
        sizes = [k.size for k in kids]
        if isinstance(node, A.Intersect):
            size = min(sizes)
        elif isinstance(node, A.Difference):
            size = sizes[0]
        elif isinstance(node, A.Boost):
            size = chunks  # a boost denotes every chunk
        else:
            size = min(sum(sizes), chunks)
        worst = max(kids, key=lambda k: k.worst_rows)
        return Cost(rows, size, worst.worst, worst.worst_rows)

    return A.fold(expr, combine)


def _leaf(leaf: A.Expr, res: Resolved, stats: CostStats, cap: int) -> Cost:
    g = stats.graph
    entities = float(max(g.entities, 1))
    chunks = float(max(g.chunks, 1))
    if res.empty:
        return Cost(0.0, 0.0)
    if isinstance(leaf, A.Chunks):
        return Cost(float(len(leaf.ids)), float(len(leaf.ids)))
    if isinstance(leaf, A.All):
        return Cost(chunks, chunks)
    if not isinstance(leaf, (A.EntityAnchored, A.Entities)):
        # document(), source(), date(), type(), category(): one scan of documents or entities
        # and their chunks, linear in the graph.
        return Cost(entities + g.mentions + chunks, chunks)
    ids = res.ids
    starts = float(max(len(ids), 1))
    degree = float(sum(stats.degrees.get(i, (0, 0))[0] for i in ids))
    mentions = float(sum(stats.degrees.get(i, (0, 0))[1] for i in ids))
    per_entity_mentions = g.mentions / entities  # mu: chunks an entity is in, on average
    per_chunk_mentions = g.mentions / chunks  # kappa: entities a chunk names, on average
    if not isinstance(leaf, EXPANDING):
        return Cost(starts + mentions, min(mentions, chunks))
    depth = int(leaf.hops or 1)
    frontier, reached, rows = starts, 0.0, starts
    if isinstance(leaf, A.Near):
        # A step reads every chunk of the entity set and every entity of those chunks.
        growth = max(per_entity_mentions, mentions / starts) * per_chunk_mentions
        whole = g.mentions * per_chunk_mentions  # every chunk's mentions, once per mention
        ents = starts
        for step in range(depth):
            expanded = min(mentions * per_chunk_mentions if step == 0 else ents * growth, whole)
            rows += ROW_WORK * expanded
            ents = min(ents + expanded, cap, entities)
        reached = ents
    else:
        growth = max(2.0 * g.relations / entities, degree / starts)
        whole = 2.0 * g.relations
        for step in range(depth):
            expanded = min(degree if step == 0 else frontier * growth, whole)
            frontier = min(expanded, cap, entities)
            rows += ROW_WORK * (expanded + frontier)
            reached = min(reached + frontier, entities)
    gathered = min(reached * per_entity_mentions, float(g.mentions))
    rows += reached + gathered
    return Cost(rows, min(gathered, chunks))


def check_cost(
    settings: Settings,
    expr: A.Expr,
    resolved: dict[A.Expr, Resolved],
    stats_of: Callable[[list[str]], CostStats],
    plan: CompiledPlan | None = None,
) -> Cost | None:
    """Raise ``SelectionCostError`` when the estimate, planning included, is over
    ``GUIDEDRAG_MAX_SELECTION_COST``; the estimate, or None when the selection has no expanding
    term (no count query then; its planning is still checked). ``stats_of``: the counts for
    these entity ids (``Resolver.cost_stats``); ``plan``: the compiled query whose planning is
    priced (its ``steps`` and ``projected``), None when not known."""
    limit = settings.max_selection_cost
    steps, projected = (plan.steps, plan.projected) if plan is not None else (0, 0)
    planning = planning_rows(projected)
    if not needs_estimate(expr):
        if planning > limit:
            raise _refusal(Cost(planning, 0.0), planning, steps, limit)
        return None
    stats = stats_of(start_ids(resolved))
    found = estimate(expr, resolved, stats, settings.hop_cap)
    cost = Cost(found.rows + planning, found.size, found.worst, found.worst_rows)
    if cost.rows > limit:
        raise _refusal(cost, planning, steps, limit)
    return cost


def planning_rows(projected: int) -> float:
    """The planner's work, in rows, for a plan whose set-operation clauses sum to ``projected``
    (``CompiledPlan.projected``; see the module docstring)."""
    return float(PLAN_ROWS * projected)


def _refusal(cost: Cost, planning: float, steps: int, limit: int) -> SelectionCostError:
    """The one-line refusal: the total, its costliest term and the planning share."""
    parts = ["estimated from the degrees of its entities"]
    if cost.worst:
        worst = cost.worst if len(cost.worst) <= 60 else cost.worst[:57] + "..."
        parts.append(f"costliest term {worst} ~{cost.worst_rows:,.0f}")
    if planning:
        parts.append(f"planning its {steps:,} set-operation steps ~{planning:,.0f}")
    return SelectionCostError(
        f"the selection would expand about {cost.rows:,.0f} rows ({'; '.join(parts)}); the "
        f"limit is {limit:,} (GUIDEDRAG_MAX_SELECTION_COST): use fewer or shallower "
        f"hop()/khop()/near() terms, chain one operator (a - b - c is one step, a - (b ^ c) "
        f"two), start from less connected entities, or raise the limit"
    )
