"""A trusted scope compiled against one KB, decided from facts (issue 37): pure, the reads are
``selection/scope_reads.py``'s.

``compiled_scope`` decides from ``ScopeFacts`` — the scope, the schema, the settings (the hop
cap and the selection cost bound) and four facts read at the edge, in this order, each only
when the decision needs it: the database's property keys (a property filter naming a key no
node has is a typo, not an empty scope: ``FilterError``), what the scope's names resolve to
(its leaves' ``Resolved`` and the reasons of those that resolve to nothing), the counts its
cost is estimated from (``selection/cost.py``; only for an expanding term) and the scope's size
and the KB's chunk count, read in one query at one database version. What comes out is the
``CompiledScope``: empty (with the reason) when its names resolve to nothing or it selects no
chunk, ``whole`` when it holds every chunk. A fact not yet handed in raises
``MissingCompileFact`` naming it and what to read; the edge (``scope_reads.compiled``) reads it
and asks again (``selection/fact_rounds.py``). This module imports no driver, database layer
or context (the "Planning is pure" contract in ``pyproject.toml``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

from guidedrag_graph.config import Settings
from guidedrag_graph.schema.presets import SchemaMapping
from guidedrag_graph.selection import nodes as A
from guidedrag_graph.selection.chunk_filters import ChunkFilter, check_fields
from guidedrag_graph.selection.compiled_forms import CompiledPlan
from guidedrag_graph.selection.cost import CostStats, check_cost
from guidedrag_graph.selection.explain import static_empty
from guidedrag_graph.selection.primitives import Leaf, Resolved
from guidedrag_graph.selection.resolution import EmptySelection
from guidedrag_graph.selection.scope import (
    SCOPE_VARIABLE,
    CompiledScope,
    Scope,
    scope_prelude,
)

# The facts a scope is compiled from: the property keys, its names resolved, the cost's
# counts, its size and the KB's chunk count.
ScopeFactKind = Literal["keys", "names", "stats", "size"]

# Why a scope whose names resolve selects nothing (the operator's reason, never a user's).
SELECTS_NOTHING = "its terms resolve but select no chunk"


class MissingCompileFact(LookupError):
    """The decision needed the fact ``kind``: the edge reads it and asks again. "names": the
    ``names`` resolved in one batch and each of ``leaves`` resolved; "stats": the cost's counts
    for the entity ``ids``; "size": the size of the scope ``prelude`` binds (with ``params``)
    and the KB's chunk count."""

    def __init__(
        self,
        kind: ScopeFactKind,
        *,
        leaves: tuple[Leaf, ...] = (),
        names: tuple[str, ...] = (),
        ids: tuple[str, ...] = (),
        prelude: str = "",
        params: dict[str, Any] | None = None,
    ) -> None:
        # the names are not shown: a message must not carry a scope's term anywhere
        super().__init__(f"a scope compiled without the fact {kind}")
        self.kind = kind
        self.leaves = leaves
        self.names = names
        self.ids = ids
        self.prelude = prelude
        self.params = params if params is not None else {}


@dataclass
class ScopeFacts:
    """What one scope is compiled from: the ``scope``, the ``schema`` and the ``settings``
    (``hop_cap``, ``max_selection_cost``); read at the edge, ``keys`` (every property key a
    node of the database has), ``resolved`` and ``reasons`` (what the scope's leaves resolve
    to, and why those that resolve to nothing do), ``stats`` (the cost's counts), ``size`` and
    ``total`` (the scope's chunks, the KB's) and the ``version`` they were read at. The
    scope's filter and prelude are compiled once however many rounds the loop asks."""

    scope: Scope
    schema: SchemaMapping
    settings: Settings
    keys: set[str] | None = None
    resolved: dict[A.Expr, Resolved] | None = None
    reasons: Mapping[A.Expr, EmptySelection] = field(default_factory=dict)
    stats: CostStats | None = None
    size: int | None = None
    total: int | None = None
    version: frozenset[str] | None = None

    @cached_property
    def chunk_filter(self) -> ChunkFilter | None:
        """The scope's property filter compiled (``Scope.chunk_filter``), once."""
        return self.scope.chunk_filter()

    @cached_property
    def rendered(self) -> tuple[CompiledPlan, str, dict[str, Any]]:
        """The scope's plan, prelude and parameters (``scope_prelude``) from its names
        resolved, rendered once: the size is read with the parameters it is compiled with."""
        if self.resolved is None:
            raise _names_missing(self.scope.expr)
        return scope_prelude(
            self.scope.expr,
            self.resolved,
            self.schema,
            hop_cap=self.settings.hop_cap,
            chunk_filter=self.chunk_filter,
        )

    def stats_of(self, ids: list[str]) -> CostStats:
        """The cost's counts (``check_cost``'s ``stats_of``): ``MissingCompileFact("stats")``
        with the ids until they are read."""
        if self.stats is None:
            raise MissingCompileFact("stats", ids=tuple(ids))
        return self.stats


def compiled_scope(facts: ScopeFacts) -> CompiledScope:
    """``facts.scope`` compiled: a property filter's fields checked against the keys read
    (``FilterError`` naming the unknown ones); a filter alone, the chunks that pass (indexed
    where it can); else the scope's names resolved — empty, with the reason, when that alone
    empties it — its prelude rendered and its cost checked (``SelectionCostError``); then
    sized (``MissingCompileFact`` for each fact until it is read)."""
    scope, schema = facts.scope, facts.schema
    chunk_filter = facts.chunk_filter
    if chunk_filter is not None:  # a property no node has is a typo, not an empty scope
        if facts.keys is None:
            raise MissingCompileFact("keys")
        check_fields(chunk_filter, facts.keys, schema)
        if isinstance(scope.expr, A.All):  # the chunks that pass, indexed where it can
            prelude = chunk_filter.universe(schema, SCOPE_VARIABLE)
            return sized(facts, prelude, dict(chunk_filter.params))
    expr = scope.expr
    resolved = facts.resolved
    if resolved is None:
        raise _names_missing(expr)
    empty = static_empty(expr, facts.reasons)
    if empty is not None:
        return CompiledScope(scope, "", empty=True, reason=empty.message)
    plan, prelude, params = facts.rendered
    check_cost(facts.settings, expr, resolved, facts.stats_of, plan)
    return sized(facts, prelude, params)


def sized(facts: ScopeFacts, prelude: str, params: dict[str, Any]) -> CompiledScope:
    """The scope ``prelude`` binds, from its size and the KB's chunk count: empty (with the
    reason), or the whole KB at the version they were read at (``MissingCompileFact("size")``
    with the prelude and its parameters until they are read)."""
    size, total = facts.size, facts.total
    if size is None or total is None:
        raise MissingCompileFact("size", prelude=prelude, params=params)
    return CompiledScope(
        facts.scope,
        prelude,
        params,
        empty=size == 0,
        size=size,
        whole=size == total,
        version=facts.version,
        reason="" if size else SELECTS_NOTHING,
    )


def _names_missing(expr: A.Expr) -> MissingCompileFact:
    """The "names" fact ``expr`` needs: its leaves (each once, in order) and their entity
    names, fetched in one batch before each leaf is resolved."""
    leaves = tuple(dict.fromkeys(expr.leaves()))
    names = tuple(n for leaf in leaves for n in leaf.entity_names())
    return MissingCompileFact("names", leaves=leaves, names=names)
