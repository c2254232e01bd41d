"""A trusted scope intersected into the ranking query: the same road as filters (``filters.py``).

The scope's prelude (``CompiledScope.prelude``, ``cypher/scope.cypher``) goes first and binds
``scope_u``, the list of in-scope chunks; the fragments of ``cypher/scope_narrow.cypher`` then
keep every selection, tier and universe inside it (``c IN scope_u``: a hash lookup). A filter
the request passes narrows further (AND), never wider. One query, no second round trip:

* hard/soft (``ScopedSelection``): the selection's chunks that are in scope (and pass the
  filter); ``all()`` is the scope's own chunks, never a label scan. Soft steering ranks its U
  (``universe``) inside the scope too.
* auto (``ScopedTiers``): every tier narrowed, and the scope (with the filter) as the last,
  unboosted tier ``U`` that ``cypher/retrieve_boost.cypher`` treats as ``$universe``: no
  candidate outside it is ranked, and a boost never pulls an out-of-scope chunk in. A tier left
  unlisted (``select_mentioned``: tested by its entities) stays correct because its candidates
  are U's, already inside the universe.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from guidedrag_graph.retrieval.filters import ChunkFilter, NarrowedTiers
from guidedrag_graph.retrieval.scope_predicate import search_properties
from guidedrag_graph.retrieval.selections import CompiledSelectionLike, CompiledTiersLike
from guidedrag_graph.schema.presets import SchemaMapping
from guidedrag_graph.selection import nodes as A
from guidedrag_graph.selection.scope import SCOPE_VARIABLE, CompiledScope
from guidedrag_graph.templates import queries as templates

_NARROW = "scope_narrow"
# auto's universe when a filter narrows the scope too (without one it is ``scope_u`` itself)
SCOPED_UNIVERSE = "scope_f"


def _filtered(chunk_filter: ChunkFilter | None, schema: SchemaMapping) -> str:
    return "" if chunk_filter is None else "\n" + chunk_filter.narrow(schema)


@dataclass(frozen=True)
class ScopedSelection:
    """A compiled selection (or U) kept inside the scope, and inside ``chunk_filter`` if any."""

    inner: CompiledSelectionLike
    scope: CompiledScope
    schema: SchemaMapping
    chunk_filter: ChunkFilter | None = None

    @property
    def cypher(self) -> str:
        if self.inner.is_all:  # the scope's own chunks: U inside the scope
            body = templates.fragment(_NARROW, "rows", self.schema)
        else:
            narrow = templates.fragment(_NARROW, "where", self.schema)
            body = f"{self.inner.cypher}\n{narrow}"
        return f"{self.scope.prelude}\n{body}{_filtered(self.chunk_filter, self.schema)}"

    @property
    def params(self) -> dict[str, Any]:
        extra = {} if self.chunk_filter is None else self.chunk_filter.params
        return {**self.scope.params, **self.inner.params, **extra}

    @property
    def is_all(self) -> bool:
        return False

    @property
    def in_scope(self) -> bool:
        """It is ranked exactly (up to the scope budget) where the index cannot filter by chunk
        id (``plans.plan_sized`` passes it as ``facts.choose_path``'s ``scoped``)."""
        return True

    @property
    def universe(self) -> ScopedSelection:
        """Soft steering's U: every in-scope chunk (that passes the filter)."""
        from guidedrag_graph.retrieval.selections import AllChunks

        return ScopedSelection(AllChunks(self.schema), self.scope, self.schema, self.chunk_filter)

    @property
    def universe_size(self) -> int | None:
        """The scope's size (the planner's input for U); unknown under a filter."""
        return self.scope.size if self.chunk_filter is None else None


@dataclass(frozen=True)
class ScopedTiers(NarrowedTiers):
    """``auto``'s compiled tiers inside the scope: each tier narrowed, and the scope (narrowed
    by ``chunk_filter`` if any) as the universe tier ``U``."""

    inner: CompiledTiersLike
    scope: CompiledScope
    schema: SchemaMapping
    chunk_filter: ChunkFilter | None = None
    SUFFIX: ClassVar[str] = "s"
    # plans.scope_mode: the universe is a trusted scope, ranked in the index by its ids where
    # the server can, else exactly (cypher/retrieve_boost.cypher's ``scope`` variant).
    in_scope: ClassVar[bool] = True

    @property
    def universe_variable(self) -> str:
        return SCOPE_VARIABLE if self.chunk_filter is None else SCOPED_UNIVERSE

    @property
    def prelude(self) -> str:
        parts = [self.scope.prelude, self.inner.prelude]
        if self.chunk_filter is not None:
            head = templates.fragment(_NARROW, "universe_open", self.schema)
            tail = templates.fragment(
                _NARROW, "universe_close", self.schema, variables={"u": SCOPED_UNIVERSE}
            )
            parts.append(f"{head}{_filtered(self.chunk_filter, self.schema)}\n{tail}")
        seen: set[str] = set()
        for tier in self.inner.tiers:
            if tier.list_variable in seen:
                continue
            seen.add(tier.list_variable)
            head = templates.fragment(
                _NARROW, "tier_open", self.schema, variables={"s": tier.list_variable}
            )
            tail = templates.fragment(
                _NARROW, "tier_close", self.schema, variables={"f": self.narrowed(tier)}
            )
            parts.append(f"{head}{_filtered(self.chunk_filter, self.schema)}\n{tail}")
        return "\n".join(parts)

    @property
    def params(self) -> dict[str, Any]:
        extra = {} if self.chunk_filter is None else self.chunk_filter.params
        return {**self.scope.params, **self.inner.params, **extra}

    @property
    def search_properties(self) -> frozenset[str] | None:
        """The chunk properties of the universe's predicate, where the universe is a property
        scope alone (no selection part), narrowed by the request's filter if any, and the two
        ANDed are a predicate the ``SEARCH`` clause takes (``retrieval/scope_predicate.py``);
        else None. ``facts.scope_in_tiers`` then checks that the index declares them."""
        if not isinstance(self.scope.scope.expr, A.All):
            return None
        mine = self.scope.scope.filters
        theirs = None if self.chunk_filter is None else self.chunk_filter.source
        return None if mine is None else search_properties(mine, theirs)

    def search_predicate(self) -> str:
        """The universe's predicate on ``c`` for the SEARCH's WHERE: the scope's compiled filter
        (its ``$scpf_N``, the same text and parameters as its prelude's), ANDed with the
        request's (``$flt_N``). Only where ``search_properties`` is not None."""
        scope_filter = self.scope.scope.chunk_filter()
        if scope_filter is None:
            raise ValueError("search_predicate: the scope has no property filter")
        parts = [scope_filter.condition]
        if self.chunk_filter is not None:
            parts.append(self.chunk_filter.condition)
        return parts[0] if len(parts) == 1 else " AND ".join(f"({p})" for p in parts)
