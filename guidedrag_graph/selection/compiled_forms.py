"""What compiling a selection produces: the fragment, its parameters, and how to finish it.

``compiler.py`` builds these; the selector, the steering and the planner read them. Kept apart
so the builder's module holds only how a tree of set operations becomes clauses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from guidedrag_graph.schema.presets import SchemaMapping
from guidedrag_graph.selection import nodes as A
from guidedrag_graph.selection.entity_tiers import NO_MEMBERS
from guidedrag_graph.templates import queries as T


@dataclass(frozen=True)
class CompiledTier:
    """One tier of a compiled ``boost``: the list variable holding its chunks, its weight, its
    display name, the flag variable saying whether a hop cap cut the list, and the variable
    holding its entities when the tier is not listed (null when it is: ``select_mentioned``)."""

    list_variable: str
    weight: float
    name: str
    flag_variable: str
    member_variable: str = NO_MEMBERS


@dataclass(frozen=True)
class CompiledSelection:
    """A Cypher fragment after which ``c`` is each selected chunk once; parameters ``sel_*``.

    For a ``boost`` (``is_boost``) the selected set is U, so ``cypher`` binds ``c`` to every
    chunk; what ranking needs is in the other fields:

    - ``prelude``: the fragment that computes every tier's chunks, once, as a list variable in
      scope afterwards (one row; ``WITH *`` keeps them). ``tiers[j].list_variable`` (``s<i>``)
      holds tier j's DISTINCT chunk nodes, ``tiers[j].flag_variable`` (``t<i>``) says whether a
      hop cap cut it; ``tiers`` are ordered by weight descending (ties: written order), so the
      first tier holding a chunk is its best tier. Two tiers with equal selections share a list.
    - ``boosted``: ``prelude`` followed by ``cypher/select_boost.cypher`` "rows": afterwards
      ``c, boost, tier`` is one row per chunk of at least one tier (``boost`` its best weight,
      possibly 0.0; ``tier`` that tier's name). Parameters ``sel_boost_weights`` and
      ``sel_boost_names`` hold the weights and names in ``tiers`` order.
    """

    cypher: str
    params: dict[str, Any]
    is_all: bool = False
    is_boost: bool = False
    tiers: tuple[CompiledTier, ...] = ()
    prelude: str = ""
    boosted: str = ""


@dataclass
class CompiledPlan:
    """The fragment plus, per compiled node, its list/flag variable index (for sizes).

    ``steps``: the set-operation clauses (``WITH *, ...``) in ``body``; ``projected``: the
    square of the variables in scope at each, summed. Each such clause carries every earlier
    list, and the planner's work on it (which the transaction timeout does not stop) grows with
    that square; the cost bound counts it (``selection/cost.py``, ``planning_rows``)."""

    body: str
    params: dict[str, Any]
    result: int
    nodes: dict[A.Expr, int] = field(default_factory=dict)
    is_all: bool = False
    tiers: tuple[CompiledTier, ...] = ()
    steps: int = 0
    projected: int = 0

    @property
    def is_boost(self) -> bool:
        return bool(self.tiers)

    def selection(self, schema: SchemaMapping) -> CompiledSelection:
        if self.is_all:
            return CompiledSelection(self.body, self.params, True)
        if self.is_boost:
            every = T.fragment("select_all", "alone", schema)
            lists = {"tiers": [t.list_variable for t in self.tiers]}
            rows = T.fragment("select_boost", "rows", schema, lists=lists)
            return CompiledSelection(
                self.body + every,
                self.params,
                is_boost=True,
                tiers=self.tiers,
                prelude=self.body,
                boosted=self.body + rows,
            )
        finish = T.fragment("select_finish", "rows", schema, variables=self.names())
        return CompiledSelection(self.body + finish, self.params, False)

    def names(self, index: int | None = None) -> dict[str, str]:
        i = self.result if index is None else index
        return {"s": f"s{i}", "t": f"t{i}"}

    def sizes_query(self, schema: SchemaMapping, order: list[A.Expr]) -> str:
        """The fragment ending in ``RETURN sizes, truncated`` (one element per node in order)."""
        lists = {
            "sizes": [f"s{self.nodes[n]}" for n in order],
            "flags": [f"t{self.nodes[n]}" for n in order],
        }
        return self.body + T.fragment("select_sizes", "item", schema, lists=lists)
