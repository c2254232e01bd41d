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

from guidedrag_graph.config import Settings
from guidedrag_graph.db import read_query
from guidedrag_graph.schema import SchemaMapping, schema_from_settings
from guidedrag_graph.selection import ast as A
from guidedrag_graph.selection.compiler import CompiledSelection, Resolved, compile_plan
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
        flag = "  (hop cap hit: partial)" if self.truncated else ""
        lines = [f"{self.size:>7}  {'  ' * depth}{self.text}{flag}"]
        for child in self.children:
            lines.append(child.render(depth + 1))
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "size": self.size,
            "truncated": self.truncated,
            "children": [c.to_json() for c in self.children],
        }


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


def as_expr(expr: A.Expr | str) -> A.Expr:
    return parse(expr) if isinstance(expr, str) else expr


class Selector:
    """Resolves names, compiles selections and runs them in READ transactions."""

    def __init__(
        self, driver: Driver, settings: Settings, schema: SchemaMapping | None = None
    ) -> None:
        self.driver = driver
        self.settings = settings
        self.schema = schema or schema_from_settings(settings)
        self.database = settings.neo4j_database
        self.resolver = Resolver(
            driver, self.schema, self.database, settings.entity_fulltext_index_name
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
        """Resolve entity names, documents and relation types; compile. No chunk is touched."""
        expr = as_expr(expr)
        resolved: dict[A.Expr, Resolved] = {}
        reasons: dict[A.Expr, EmptySelection] = {}
        for leaf in dict.fromkeys(expr.leaves()):
            res, reason = self._resolve_leaf(leaf)
            resolved[leaf] = res
            if reason is not None:
                reasons[leaf] = reason
        plan = compile_plan(expr, resolved, self.schema, hop_cap=self.settings.hop_cap)
        empty = _static_empty(expr, reasons)
        warnings = tuple(r for r in reasons.values() if empty is None or r != empty)
        return PreparedSelection(
            expr, plan.selection(self.schema), empty, warnings if empty is None else (), resolved
        )

    def _resolve_leaf(self, leaf: A.Expr) -> tuple[Resolved, EmptySelection | None]:
        if isinstance(leaf, (A.Entity, A.Hop, A.KHop, A.Near)):
            ids = self.resolver.entity_ids(leaf.name)
            if not ids:
                suggestions = tuple(self.resolver.suggestions(leaf.name))
                hint = f"; did you mean {', '.join(map(repr, suggestions))}?" if suggestions else ""
                if mismatch := self.schema_mismatch():
                    hint = f"; {mismatch}{hint}"
                elif not suggestions and (no_index := self.fulltext_missing()):
                    hint = f"; {no_index}"
                return Resolved(empty=True), EmptySelection(
                    "unknown_entity",
                    leaf.to_text(),
                    f"no entity named {leaf.name!r} (by name, id, case-insensitive name or "
                    f"alias){hint}",
                    suggestions,
                )
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
        return read_query(self.driver, query, params, database=self.database)

    def chunk_ids(self, expr: A.Expr | str | PreparedSelection) -> list[str]:
        """The selected chunk ids, sorted."""
        prep = expr if isinstance(expr, PreparedSelection) else self.prepare(expr)
        if prep.empty is not None:
            return []
        rows = self._read(
            prep.compiled.cypher + f"\nRETURN {self.schema.chunk_ref('c')} AS id",
            prep.compiled.params,
        )
        return sorted(str(r["id"]) for r in rows)

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

        def build(node: A.Expr) -> SizeNode:
            return SizeNode(
                node.to_text(),
                int(sizes[node]),
                bool(flags[node]),
                [build(child) for child in node.children()],
            )

        return build(prep.expr)

    def explain_empty(self, expr: A.Expr | str) -> EmptySelection | None:
        """After a run found no chunk: which term made it empty, or None if it is not empty."""
        prep = self.prepare(expr)
        if prep.empty is not None:
            return prep.empty
        tree = self.sizes(prep.expr)
        return _explain(prep.expr, tree, prep)


def _static_empty(expr: A.Expr, reasons: dict[A.Expr, EmptySelection]) -> EmptySelection | None:
    """Emptiness known from resolution alone (unknown names), before any chunk is read."""
    if isinstance(expr, A.BinaryOp):
        left = _static_empty(expr.left, reasons)
        right = _static_empty(expr.right, reasons)
        if isinstance(expr, A.Intersect):
            return left or right
        if isinstance(expr, A.Difference):
            return left
        return left if (left and right) else None  # union, symmetric difference
    return reasons.get(expr)


def _explain(expr: A.Expr, tree: SizeNode, prep: PreparedSelection) -> EmptySelection | None:
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
            return _explain(expr.left, left, prep)
        if right.size == 0:
            return _explain(expr.right, right, prep)
        return EmptySelection(
            "empty_intersection",
            expr.to_text(),
            f"{expr.left.to_text()} ({left.size} chunks) and {expr.right.to_text()} "
            f"({right.size} chunks) share no chunk; try | or a soft selection",
        )
    if isinstance(expr, A.Difference):
        if left.size == 0:
            return _explain(expr.left, left, prep)
        return EmptySelection(
            "empty_difference",
            expr.to_text(),
            f"every chunk of {expr.left.to_text()} ({left.size}) is also in {expr.right.to_text()}",
        )
    if isinstance(expr, A.SymDiff) and left.size > 0:
        return EmptySelection(
            "empty_difference",
            expr.to_text(),
            f"{expr.left.to_text()} and {expr.right.to_text()} select the same chunks",
        )
    return _explain(expr.left, left, prep)
