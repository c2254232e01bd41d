"""Prepare ``auto``'s graded tiers against the database: resolve names once, compile once.

Every tier of a question repeats the same names (``entity(x)``, ``khop(x, 1)``, ``near(x)``...),
so each name and relation type is resolved exactly once here, not once per leaf, through the
same ``Resolution`` as hard selections; then all tiers compile into ONE Cypher body that binds
one chunk list per tier (shared sub-expressions computed once), which
``cypher/retrieve_boost.cypher`` ranks. A name the KB does not know stops everything before the
question is embedded: the pipeline abstains, as under hard steering.

A question asked again (or another with the same names and tiers) within
``GUIDEDRAG_RESOLUTION_CACHE_S`` reuses its compiled tiers: the compiled body and the cost check
are functions of the tiers and of what their leaves resolved to, so they are kept in the graph's
expiring cache under exactly that key (the cost check's degrees live there for the same time),
and a call pays for resolution lookups only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from guidedrag_graph.selection import EmptySelection, Expr, Selector
from guidedrag_graph.selection import nodes as A
from guidedrag_graph.selection.compiled_forms import CompiledSelection
from guidedrag_graph.selection.cost import check_cost
from guidedrag_graph.selection.primitives import Resolved
from guidedrag_graph.steering.tiers import AutoPlan


@dataclass(frozen=True)
class PreparedTiers:
    """The compiled tiers, or why the question must abstain (a name the KB does not know)."""

    compiled: CompiledSelection | None  # a boost: ``is_boost``, ``tiers``, ``prelude``
    empty: EmptySelection | None
    expr: A.Boost | None = None
    text: str | None = None  # ``expr``'s DSL text, made once with the compiled tiers


def prepare_tiers(
    selector: Selector, plan: AutoPlan, variants: Callable[[str], Mapping[str, str]]
) -> PreparedTiers:
    """Resolve the plan's names (each once, in one batch) and compile its tiers into one body.

    Abstains on the first unknown entity (in the plan's order), then on the first tier term
    with an unknown relation type; the messages name only the term (no schema diagnosis).
    ``variants``: a template's server variants, chosen from the ranking facts
    (``Paths.variant``, i.e. ``RankFacts.variant``); asked only when tiers are compiled, for
    how their entity terms are walked."""
    res = selector.resolution(plan.entities, diagnose=False)
    if (unknown := res.first_unknown(plan.entities)) is not None:
        return PreparedTiers(None, unknown)
    resolved: dict[Expr, Resolved] = {}
    for tier in plan.tiers:
        for leaf in tier.expr.leaves():
            if leaf not in resolved:
                resolved[leaf] = res.resolve(leaf)
                if leaf in res.reasons:
                    return PreparedTiers(None, res.reasons[leaf])
    if not plan.tiers:
        return PreparedTiers(None, None)
    expr = plan.boost()
    assert expr is not None
    cache = selector.graph.data
    key = ("tiers", expr, tuple(resolved.items()))
    kept: PreparedTiers | None = cache.get(key)
    if kept is not None:
        return kept
    compiled = plan.compiled(
        resolved,
        selector.schema,
        hop_cap=selector.settings.hop_cap,
        walk=variants("select_mentioned")["walk"],
    )
    assert compiled is not None  # the plan has tiers (checked above)
    check_cost(
        selector.settings,
        expr,
        resolved,
        selector.resolver.cost_stats,
        compiled,
    )  # before the tiers' query is sent
    prepared = PreparedTiers(compiled.selection(selector.schema), None, expr, expr.to_text())
    cache.put(key, prepared)
    return prepared
