"""``Selector``: resolve, compile and run selections against one Neo4j database.

>>> selector = Selector(driver, settings)
>>> prep = selector.prepare("entity('Rome') & hop('Rome', ['FOUGHT_IN'])")
>>> prep.empty            # None, or which term is empty and why (the pipeline abstains)
>>> prep.compiled.cypher  # one fragment; `c` is each selected chunk once afterwards
>>> selector.sizes(prep.expr).render()
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from neo4j import Driver

from guidedrag_graph import templates as T
from guidedrag_graph.config import Settings
from guidedrag_graph.db import read_query
from guidedrag_graph.errors import SelectionError
from guidedrag_graph.schema import SchemaMapping, schema_from_settings
from guidedrag_graph.selection import ast as A
from guidedrag_graph.selection.compiler import CompiledSelection, Resolved, compile_plan
from guidedrag_graph.selection.limits import Limits, check
from guidedrag_graph.selection.parser import parse
from guidedrag_graph.selection.resolver import Resolver

EmptyKind = Literal[
    "unknown_entity",
    "unknown_relation_type",
    "empty_intersection",
    "empty_difference",
    "empty_term",
]


@dataclass(frozen=True)
class EmptySelection:
    """Why a selection holds no chunk: the kind, the empty term (DSL text), what to do."""

    kind: EmptyKind
    term: str
    message: str
    suggestions: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "term": self.term,
            "message": self.message,
            "suggestions": list(self.suggestions),
        }


@dataclass(frozen=True)
class SizeNode:
    """The size of one sub-expression, like a line of EXPLAIN ANALYZE."""

    text: str
    size: int
    truncated: bool = False
    children: list[SizeNode] = field(default_factory=list)

    def render(self, depth: int = 0) -> str:
        """A tree like EXPLAIN ANALYZE: ``size  expression`` per line, children indented."""
        lines: list[str] = []
        stack: list[tuple[SizeNode, int]] = [(self, depth)]
        while stack:  # iterative: a long chain a | b | c ... is as deep as it is long
            node, level = stack.pop()
            flag = "  (hop cap hit: partial)" if node.truncated else ""
            lines.append(f"{node.size:>7}  {'  ' * level}{node.text}{flag}")
            stack.extend((child, level + 1) for child in reversed(node.children))
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        stack: list[tuple[SizeNode, dict[str, Any]]] = [(self, out)]
        while stack:
            node, target = stack.pop()
            target.update(text=node.text, size=node.size, truncated=node.truncated, children=[])
            for child in node.children:
                slot: dict[str, Any] = {}
                target["children"].append(slot)
                stack.append((child, slot))
        return out


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

    def __init__(
        self, driver: Driver, settings: Settings, schema: SchemaMapping | None = None
    ) -> None:
        self.driver = driver
        self.settings = settings
        self.schema = schema or schema_from_settings(settings)
        self.database = settings.neo4j_database
        self.limits = Limits.from_settings(settings)
        self.resolver = Resolver(
            driver,
            self.schema,
            self.database,
            settings.entity_fulltext_index_name,
            self.limits,
            settings.query_timeout,
        )

    def schema_mismatch(self) -> str | None:
        """Why the schema mapping does not describe this database (``None``: it does); asked
        only when a name is unknown, so a wrong preset is named instead of blaming the name."""
        from guidedrag_graph.kb.inspect import schema_mismatch

        if not hasattr(self, "_mismatch"):
            self._mismatch = schema_mismatch(self.driver, self.database, self.schema)
        return self._mismatch

    def fulltext_missing(self) -> str | None:
        """Says so when the entity full-text index is missing (suggestions then cannot exist)."""
        from guidedrag_graph.kb.inspect import missing_fulltext_hint

        return missing_fulltext_hint(
            self.driver, self.database, self.settings.entity_fulltext_index_name
        )

    # --- preparation -----------------------------------------------------------------------
    def prepare(self, expr: A.Expr | str) -> PreparedSelection:
        """Resolve entity names, documents and relation types; compile. No chunk is touched.

        The limits (``Limits.from_settings``) are checked first, before any query runs."""
        expr = as_expr(expr, self.limits)
        resolved: dict[A.Expr, Resolved] = {}
        reasons: dict[A.Expr, EmptySelection] = {}
        partial: list[EmptySelection] = []
        leaves = list(dict.fromkeys(expr.leaves()))
        # Every entity name of the expression in one batch (two round trips, however many).
        names = [n for leaf in leaves for n in _entity_names(leaf)]
        ctx = _Resolution(self.resolver.entity_ids_many(names) if names else {})
        for leaf in leaves:
            if isinstance(leaf, A.Entities):
                res, reason, missing = self._resolve_entities(leaf, ctx)
                partial.extend(missing)
            else:
                res, reason = self._resolve_leaf(leaf, ctx)
            resolved[leaf] = res
            if reason is not None:
                reasons[leaf] = reason
        plan = compile_plan(expr, resolved, self.schema, hop_cap=self.settings.hop_cap)
        empty = _static_empty(expr, reasons)
        warnings = tuple(r for r in reasons.values() if empty is None or r != empty)
        warnings += tuple(partial)
        return PreparedSelection(
            expr, plan.selection(self.schema), empty, warnings if empty is None else (), resolved
        )

    def _unknown_entity(self, term: str, name: str, ctx: _Resolution) -> EmptySelection:
        suggestions: tuple[str, ...] = ()
        if ctx.suggestions_left > 0:  # a fuzzy query each: only for the first few unknown names
            ctx.suggestions_left -= 1
            suggestions = tuple(self.resolver.suggestions(name))
        hint = f"; did you mean {', '.join(map(repr, suggestions))}?" if suggestions else ""
        if mismatch := self.schema_mismatch():
            hint = f"; {mismatch}{hint}"
        elif not suggestions and (no_index := self.fulltext_missing()):
            hint = f"; {no_index}"
        return EmptySelection(
            "unknown_entity",
            term,
            f"no entity named {name!r} (by name, id, case-insensitive name or alias){hint}",
            suggestions,
        )

    def _resolve_entities(
        self, leaf: A.Entities, ctx: _Resolution
    ) -> tuple[Resolved, EmptySelection | None, list[EmptySelection]]:
        """entity([...]): the ids of every name; unknown names are warnings unless all are."""
        ids: dict[str, None] = {}
        unknown: list[str] = []
        for name in dict.fromkeys(leaf.names):
            found = ctx.ids.get(name, [])
            ids.update(dict.fromkeys(found))
            if not found:
                unknown.append(name)
        if not ids:
            return Resolved(empty=True), self._unknown_entity(leaf.to_text(), unknown[0], ctx), []
        missing = [self._unknown_entity(A.Entity(n).to_text(), n, ctx) for n in unknown[:5]]
        return Resolved(ids=tuple(ids)), None, missing

    def _resolve_leaf(
        self, leaf: A.Expr, ctx: _Resolution
    ) -> tuple[Resolved, EmptySelection | None]:
        if isinstance(leaf, (A.Entity, A.Hop, A.KHop, A.Near)):
            ids = ctx.ids.get(leaf.name, [])
            if not ids:
                return Resolved(empty=True), self._unknown_entity(leaf.to_text(), leaf.name, ctx)
            if isinstance(leaf, A.Hop):
                types, unknown = self.resolver.resolve_types(leaf.types)
                if unknown or not types:
                    missing = unknown or list(leaf.types)
                    close = tuple(t for u in missing for t in self.resolver.close_types(u))
                    hint = f"; did you mean {', '.join(close)}?" if close else ""
                    return Resolved(empty=True), EmptySelection(
                        "unknown_relation_type",
                        leaf.to_text(),
                        f"unknown relation type(s) {', '.join(map(repr, missing))}: the graph "
                        f"has no such relationships{hint}",
                        close,
                    )
                return Resolved(ids=tuple(ids), types=tuple(types)), None
            return Resolved(ids=tuple(ids)), None
        if isinstance(leaf, A.Document):
            ids = self.resolver.document_ids(leaf.name)
            if not ids:
                return Resolved(empty=True), EmptySelection(
                    "empty_term",
                    leaf.to_text(),
                    f"no document with id or title {leaf.name!r}",
                )
            return Resolved(ids=tuple(ids)), None
        return Resolved(), None

    def compile(self, expr: A.Expr | str) -> CompiledSelection:
        return self.prepare(expr).compiled

    # --- running ------------------------------------------------------------------------------
    def _read(self, query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        return read_query(
            self.driver, query, params, database=self.database, timeout=self.settings.query_timeout
        )

    def chunk_ids(self, expr: A.Expr | str | PreparedSelection) -> list[str]:
        """The selected chunk ids, sorted."""
        prep = expr if isinstance(expr, PreparedSelection) else self.prepare(expr)
        if prep.empty is not None:
            return []
        query = T.query("selection_ids", self.schema, selection=prep.compiled.cypher)
        rows = self._read(query, prep.compiled.params)
        return sorted(str(r["id"]) for r in rows)

    def boosts(self, expr: A.Boost | str | PreparedSelection) -> dict[str, tuple[float, str]]:
        """Chunk id -> (boost, best tier's name) for every chunk of at least one tier of a
        ``boost(...)`` (boost may be 0.0 for a zero-weight tier); one READ query."""
        prep = expr if isinstance(expr, PreparedSelection) else self.prepare(expr)
        if not prep.compiled.is_boost:
            raise SelectionError(f"boosts() needs a boost(...) selection, not {prep.text}")
        query = T.query("selection_boosts", self.schema, selection=prep.compiled.boosted)
        rows = self._read(query, prep.compiled.params)
        return {str(r["id"]): (float(r["boost"]), str(r["tier"])) for r in rows}

    def sizes(self, expr: A.Expr | str) -> SizeNode:
        """The size of every sub-expression in one round trip (``guidedrag select``)."""
        prep = self.prepare(expr)
        order = list(dict.fromkeys(prep.expr.walk()))
        plan = compile_plan(
            prep.expr, prep.resolved, self.schema, hop_cap=self.settings.hop_cap, force_sets=True
        )
        rows = self._read(plan.sizes_query(self.schema, order), plan.params)
        sizes = dict(zip(order, rows[0]["sizes"], strict=True))
        flags = dict(zip(order, rows[0]["truncated"], strict=True))

        def make(node: A.Expr, kids: list[SizeNode]) -> SizeNode:
            return SizeNode(node.to_text(), int(sizes[node]), bool(flags[node]), kids)

        return A.fold(prep.expr, make)

    def explain_empty(self, expr: A.Expr | str) -> EmptySelection | None:
        """After a run found no chunk: which term made it empty, or None if it is not empty."""
        prep = self.prepare(expr)
        if prep.empty is not None:
            return prep.empty
        tree = self.sizes(prep.expr)
        return _explain(prep.expr, tree, prep)


@dataclass
class _Resolution:
    """One ``prepare`` call's resolution state: every entity name's ids, fetched in one batch,
    and how many fuzzy suggestion queries unknown names may still cost."""

    ids: dict[str, list[str]]
    suggestions_left: int = 5


def _entity_names(leaf: A.Expr) -> tuple[str, ...]:
    if isinstance(leaf, (A.Entity, A.Hop, A.KHop, A.Near)):
        return (leaf.name,)
    if isinstance(leaf, A.Entities):
        return leaf.names
    return ()


def _static_empty(expr: A.Expr, reasons: dict[A.Expr, EmptySelection]) -> EmptySelection | None:
    """Emptiness known from resolution alone (unknown names), before any chunk is read."""
    if isinstance(expr, A.Boost):
        return None  # a boost denotes U; empty tiers only boost nothing (they become warnings)

    def combine(node: A.Expr, kids: list[EmptySelection | None]) -> EmptySelection | None:
        if not isinstance(node, A.BinaryOp):
            return reasons.get(node)
        left, right = kids
        if isinstance(node, A.Intersect):
            return left or right
        if isinstance(node, A.Difference):
            return left
        return left if (left and right) else None  # union, symmetric difference

    return A.fold(expr, combine)


def _explain(expr: A.Expr, tree: SizeNode, prep: PreparedSelection) -> EmptySelection | None:
    """Walk down from an empty result to the term that emptied it (a loop, not recursion)."""
    while True:
        if tree.size > 0:
            return None
        if not isinstance(expr, A.BinaryOp):
            for known in prep.warnings:
                if known.term == expr.to_text():
                    return known
            return EmptySelection(
                "empty_term", expr.to_text(), f"{expr.to_text()} selects no chunk in this graph"
            )
        left, right = tree.children
        if isinstance(expr, A.Intersect):
            if left.size == 0:
                expr, tree = expr.left, left
                continue
            if right.size == 0:
                expr, tree = expr.right, right
                continue
            return EmptySelection(
                "empty_intersection",
                expr.to_text(),
                f"{expr.left.to_text()} ({left.size} chunks) and {expr.right.to_text()} "
                f"({right.size} chunks) share no chunk; try | or a soft selection",
            )
        if isinstance(expr, A.Difference):
            if left.size == 0:
                expr, tree = expr.left, left
                continue
            return EmptySelection(
                "empty_difference",
                expr.to_text(),
                f"every chunk of {expr.left.to_text()} ({left.size}) is also in "
                f"{expr.right.to_text()}",
            )
        if isinstance(expr, A.SymDiff) and left.size > 0:
            return EmptySelection(
                "empty_difference",
                expr.to_text(),
                f"{expr.left.to_text()} and {expr.right.to_text()} select the same chunks",
            )
        expr, tree = expr.left, left
