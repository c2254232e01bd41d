"""Prepare ``auto``'s graded tiers against the database: resolve names once, compile once.

Every tier of a question repeats the same names (``entity(x)``, ``khop(x, 1)``, ``near(x)``...),
so each name and relation type is resolved exactly once here, not once per leaf; then all tiers
compile into ONE Cypher body that binds one chunk list per tier (shared sub-expressions computed
once), which ``cypher/retrieve_boost.cypher`` ranks. A name the KB does not know stops everything
before the question is embedded: the pipeline abstains, as under hard steering.
"""

from __future__ import annotations

from dataclasses import dataclass

from guidedrag_graph.selection import EmptySelection, Expr, Selector
from guidedrag_graph.selection import ast as A
from guidedrag_graph.selection.compiler import CompiledSelection, Resolved, compile_plan
from guidedrag_graph.tiers import AutoPlan


@dataclass(frozen=True)
class PreparedTiers:
    """The compiled tiers, or why the question must abstain (a name the KB does not know)."""

    compiled: CompiledSelection | None  # a boost: ``is_boost``, ``tiers``, ``prelude``
    empty: EmptySelection | None
    expr: A.Boost | None = None


def _unknown_entity(selector: Selector, name: str) -> EmptySelection:
    suggestions = tuple(selector.resolver.suggestions(name))
    hint = f"; did you mean {', '.join(map(repr, suggestions))}?" if suggestions else ""
    return EmptySelection(
        "unknown_entity",
        A.Entity(name).to_text(),
        f"no entity named {name!r} (by name, id, case-insensitive name or alias){hint}",
        suggestions,
    )


def _unknown_types(selector: Selector, leaf: A.Hop, missing: list[str]) -> EmptySelection:
    close = tuple(t for u in missing for t in selector.resolver.close_types(u))
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return EmptySelection(
        "unknown_relation_type",
        leaf.to_text(),
        f"unknown relation type(s) {', '.join(map(repr, missing))}: the graph has no such "
        f"relationships{hint}",
        close,
    )


def prepare_tiers(selector: Selector, plan: AutoPlan) -> PreparedTiers:
    """Resolve the plan's names (each once) and compile its tiers into one body."""
    ids: dict[str, list[str]] = {}
    for name in plan.entities:
        found = selector.resolver.entity_ids(name)
        if not found:
            return PreparedTiers(None, _unknown_entity(selector, name))
        ids[name] = found
    resolved: dict[Expr, Resolved] = {}
    for tier in plan.tiers:
        for leaf in tier.expr.leaves():
            if leaf in resolved or not isinstance(leaf, (A.Entity, A.Hop, A.KHop, A.Near)):
                continue
            if isinstance(leaf, A.Hop):
                types, unknown = selector.resolver.resolve_types(leaf.types)
                if unknown or not types:
                    return PreparedTiers(
                        None, _unknown_types(selector, leaf, unknown or list(leaf.types))
                    )
                resolved[leaf] = Resolved(ids=tuple(ids[leaf.name]), types=tuple(types))
            else:
                resolved[leaf] = Resolved(ids=tuple(ids[leaf.name]))
    if not plan.tiers:
        return PreparedTiers(None, None)
    expr = plan.boost()
    assert expr is not None
    compiled = compile_plan(expr, resolved, selector.schema, hop_cap=selector.settings.hop_cap)
    return PreparedTiers(compiled.selection(selector.schema), None, expr)
