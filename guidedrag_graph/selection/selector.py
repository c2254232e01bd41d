"""``Selector``: resolve, compile and run selections against one Neo4j database.

>>> selector = Selector(GraphContext.open(settings, driver))
>>> prep = selector.prepare("entity('Rome') & hop('Rome', ['FOUGHT_IN'])")
>>> prep.empty            # None, or which term is empty and why (the pipeline abstains)
>>> prep.compiled.cypher  # one fragment; `c` is each selected chunk once afterwards
>>> selector.sizes(prep).render()   # a prepared selection is not resolved again
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.db.deadline import budgeted
from guidedrag_graph.errors import SelectionCostError, SelectionError
from guidedrag_graph.schema.presets import SchemaMapping
from guidedrag_graph.selection import nodes as A
from guidedrag_graph.selection import scope_reads
from guidedrag_graph.selection.compiled_forms import CompiledSelection
from guidedrag_graph.selection.compiler import compile_plan
from guidedrag_graph.selection.cost import check_cost
from guidedrag_graph.selection.explain import SizeNode, explain, static_empty
from guidedrag_graph.selection.limits import Limits, check
from guidedrag_graph.selection.name_reads import NameResolution
from guidedrag_graph.selection.parser import parse
from guidedrag_graph.selection.primitives import Resolved
from guidedrag_graph.selection.resolution import EmptyKind, EmptySelection
from guidedrag_graph.selection.resolver import Resolver
from guidedrag_graph.selection.scope import CompiledScope, Scope
from guidedrag_graph.templates import queries as T

__all__ = [
    "EmptyKind",
    "EmptySelection",
    "PreparedSelection",
    "Selector",
    "SizeNode",
    "as_expr",
]


@dataclass(frozen=True)
class PreparedSelection:
    """An expression resolved against the database and compiled; no chunk has been read."""

    expr: A.Expr
    compiled: CompiledSelection
    empty: EmptySelection | None
    # Terms that resolved to nothing without emptying the whole selection (e.g. one side of |).
    warnings: tuple[EmptySelection, ...] = ()
    resolved: dict[A.Expr, Resolved] = field(default_factory=dict, repr=False)

    @property
    def text(self) -> str:
        return self.expr.to_text()


def as_expr(expr: A.Expr | str, limits: Limits | None = None) -> A.Expr:
    """The expression, parsed if it is text; within ``limits`` either way."""
    limits = limits or Limits()
    if isinstance(expr, str):
        return parse(expr, limits)
    if not isinstance(expr, A.Expr):
        raise SelectionError(f"a selection is an expression or DSL text, not {type(expr).__name__}")
    check(expr, limits)
    return expr


class Selector:
    """Resolves names, compiles selections and runs them in READ transactions."""

    def __init__(self, graph: GraphContext) -> None:
        self.graph = graph
        self.limits = Limits.from_settings(graph.settings)
        self.resolver = Resolver(graph, self.limits)

    @property
    def driver(self) -> Driver:
        return self.graph.driver

    @property
    def settings(self) -> Settings:
        return self.graph.settings

    @property
    def schema(self) -> SchemaMapping:
        return self.graph.schema

    @property
    def database(self) -> str:
        return self.graph.database

    def schema_mismatch(self) -> str | None:
        """Why the schema mapping does not describe this database (``None``: it does); asked
        only when a name is unknown, so a wrong preset is named instead of blaming the name."""
        from guidedrag_graph.db.fit import schema_mismatch

        if not hasattr(self, "_mismatch"):
            self._mismatch = schema_mismatch(self.graph, self.database, self.schema)
        return self._mismatch

    def fulltext_missing(self) -> str | None:
        """Says so when the entity full-text index is missing (suggestions then cannot exist)."""
        from guidedrag_graph.db.fit import missing_fulltext_hint

        return missing_fulltext_hint(
            self.graph, self.database, self.settings.entity_fulltext_index_name
        )

    # --- preparation -----------------------------------------------------------------------
    def resolution(self, names: Iterable[str], *, diagnose: bool = True) -> NameResolution:
        """A question's resolution: ``names`` fetched in one batch, the rest of its facts read
        as its answers need them (``selection/name_reads.py``); with ``diagnose``, an unknown
        name's message also says when the schema mapping or the full-text index is why."""
        return NameResolution.fetch(self.resolver, names, self if diagnose else None)

    def prepare(self, expr: A.Expr | str) -> PreparedSelection:
        """Resolve entity names, documents and relation types; compile. No chunk is touched.

        The limits (``Limits.from_settings``) are checked first, before any query runs; the
        estimated cost (``selection/cost.py``, GUIDEDRAG_MAX_SELECTION_COST) after the names
        are resolved, before the selection's own query is sent."""
        expr = as_expr(expr, self.limits)
        leaves = list(dict.fromkeys(expr.leaves()))
        names = [n for leaf in leaves for n in leaf.entity_names()]
        res = self.resolution(names)
        resolved: dict[A.Expr, Resolved] = {leaf: res.resolve(leaf) for leaf in leaves}
        plan = compile_plan(expr, resolved, self.schema, hop_cap=self.settings.hop_cap)
        empty = static_empty(expr, res.reasons)
        if empty is None:
            check_cost(
                self.settings,
                expr,
                resolved,
                self.resolver.cost_stats,
                plan,
            )  # refused here, before the query is sent
        warnings = tuple(r for r in res.reasons.values() if empty is None or r != empty)
        warnings += tuple(res.partial)
        return PreparedSelection(
            expr, plan.selection(self.schema), empty, warnings if empty is None else (), resolved
        )

    def scope(self, scope: Scope | None, *, fresh: bool = False) -> CompiledScope | None:
        """``scope`` compiled against this KB (None: no restriction): its names resolved like
        any selection's (the trusted side wrote them), its prelude rendered, and its size and
        the KB's chunk count read in one query (decided by ``selection/scope_compiled.py``, its
        facts read by ``selection/scope_reads.py``). Kept per KB version with the resolved
        names (``GraphContext.data``), so a request pays nothing for it once warm."""
        if scope is None:
            return None
        key = ("scope", scope.key)
        if fresh:  # a read saw a write since it was kept (pipeline/scoping.py)
            self.graph.data.clear("scope")
        kept = self.graph.data.get(key)
        if kept is not None:
            return kept  # type: ignore[no-any-return]
        compiled = scope_reads.compiled(self, scope)  # decided pure: scope_compiled.py
        self.graph.data.put(key, compiled)
        return compiled

    def compile(self, expr: A.Expr | str) -> CompiledSelection:
        return self.prepare(expr).compiled

    # --- running ------------------------------------------------------------------------------
    def _read(self, query: str, params: dict[str, Any], name: str) -> list[dict[str, Any]]:
        return self.graph.read(query, params, name=name)

    @budgeted
    def chunk_ids(self, expr: A.Expr | str | PreparedSelection) -> list[str]:
        """The selected chunk ids, sorted."""
        prep = self._prepared(expr)
        if prep.empty is not None:
            return []
        query = T.query("selection_ids", self.schema, selection=prep.compiled.cypher)
        rows = self._read(query, prep.compiled.params, "selection_ids")
        return sorted(str(r["id"]) for r in rows)

    @budgeted
    def boosts(self, expr: A.Boost | str | PreparedSelection) -> dict[str, tuple[float, str]]:
        """Chunk id -> (boost, best tier's name) for every chunk of at least one tier of a
        ``boost(...)`` (boost may be 0.0 for a zero-weight tier); one READ query."""
        prep = self._prepared(expr)
        if not prep.compiled.is_boost:
            raise SelectionError(f"boosts() needs a boost(...) selection, not {prep.text}")
        query = T.query("selection_boosts", self.schema, selection=prep.compiled.boosted)
        rows = self._read(query, prep.compiled.params, "selection_boosts")
        return {str(r["id"]): (float(r["boost"]), str(r["tier"])) for r in rows}

    @budgeted
    def sizes(
        self, expr: A.Expr | str | PreparedSelection, scope: CompiledScope | None = None
    ) -> SizeNode:
        """The size of every sub-expression in one round trip (``guidedrag select``); a
        prepared selection is not resolved again. With a ``scope``, every size counts only
        the chunks inside it (a count outside would tell of what the scope hides)."""
        prep = self._prepared(expr)
        order = list(dict.fromkeys(prep.expr.walk()))
        if scope is not None and scope.empty:
            return A.fold(prep.expr, lambda node, kids: SizeNode(node.to_text(), 0, False, kids))
        plan = compile_plan(
            prep.expr, prep.resolved, self.schema, hop_cap=self.settings.hop_cap, force_sets=True
        )
        # Sizes mode writes every node as its own step: its planning is checked on its own.
        check_cost(
            self.settings,
            prep.expr,
            prep.resolved,
            self.resolver.cost_stats,
            plan,
        )
        query, params = plan.sizes_query(self.schema, order), plan.params
        if scope is not None:
            lists = {
                "sizes": [f"s{plan.nodes[n]}" for n in order],
                "flags": [f"t{plan.nodes[n]}" for n in order],
            }
            sized = T.fragment("scope_narrow", "sizes", self.schema, lists=lists)
            query = f"{scope.prelude}\n{plan.body}{sized}"
            params = {**scope.params, **plan.params}
        rows = self._read(query, params, "selection_sizes")
        sizes = dict(zip(order, rows[0]["sizes"], strict=True))
        flags = dict(zip(order, rows[0]["truncated"], strict=True))

        def make(node: A.Expr, kids: list[SizeNode]) -> SizeNode:
            return SizeNode(node.to_text(), int(sizes[node]), bool(flags[node]), kids)

        return A.fold(prep.expr, make)

    @budgeted
    def explain_empty(self, expr: A.Expr | str | PreparedSelection) -> EmptySelection | None:
        """After a run found no chunk: which term made it empty, or None if it is not empty
        (or when the per-term sizes query would cost more than GUIDEDRAG_MAX_SELECTION_COST:
        it writes every node as its own step, so a long chain that ran as one clause may be
        refused there; the empty result stands, unexplained). A prepared selection (the one
        that ran) is not resolved again."""
        prep = self._prepared(expr)
        if prep.empty is not None:
            return prep.empty
        try:
            sizes = self.sizes(prep)
        except SelectionCostError:
            return None
        return explain(prep.expr, sizes, prep.warnings)

    def _prepared(self, expr: A.Expr | str | PreparedSelection) -> PreparedSelection:
        return expr if isinstance(expr, PreparedSelection) else self.prepare(expr)
