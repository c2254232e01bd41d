"""neo4j-graphrag metadata filters in the ranking query: a selection, or ``auto``'s tiers,
narrowed to the chunks that pass (``FilteredSelection``, ``FilteredTiers``). The filter syntax
and its compiler are ``selection/chunk_filters.py`` (a trusted scope compiles filters too, one
layer down); its names are re-exported here for callers of the retrieval stage.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from guidedrag_graph.schema.presets import SchemaMapping
from guidedrag_graph.selection.chunk_filters import (
    MAX_DEPTH as MAX_DEPTH,
)
from guidedrag_graph.selection.chunk_filters import (
    MAX_KEY as MAX_KEY,
)
from guidedrag_graph.selection.chunk_filters import (
    MAX_LIST as MAX_LIST,
)
from guidedrag_graph.selection.chunk_filters import (
    MAX_TERMS as MAX_TERMS,
)
from guidedrag_graph.selection.chunk_filters import (
    MAX_VALUE as MAX_VALUE,
)
from guidedrag_graph.selection.chunk_filters import (
    ChunkFilter as ChunkFilter,
)
from guidedrag_graph.selection.chunk_filters import (
    FilterError as FilterError,
)
from guidedrag_graph.selection.chunk_filters import (
    check_fields as check_fields,
)
from guidedrag_graph.selection.chunk_filters import (
    compile_filter as compile_filter,
)
from guidedrag_graph.selection.entity_tiers import NO_MEMBERS


@dataclass(frozen=True)
class FilteredSelection:
    """A compiled selection narrowed by a filter (hard/soft steering, or U under auto)."""

    inner: Any  # CompiledSelectionLike
    chunk_filter: ChunkFilter
    schema: SchemaMapping

    @property
    def cypher(self) -> str:
        return f"{self.inner.cypher}\n{self.chunk_filter.narrow(self.schema)}"

    @property
    def params(self) -> dict[str, Any]:
        return {**self.inner.params, **self.chunk_filter.params}

    @property
    def is_all(self) -> bool:
        return False


@dataclass(frozen=True)
class FilteredTier:
    list_variable: str
    weight: float
    name: str | None
    # A tier not listed (``select_mentioned``) is tested by its entities; every candidate the
    # ranking sees is in the universe already, so its narrowed form keeps the same entities.
    member_variable: str = NO_MEMBERS


# The list variable of the universe tier (the chunks that pass the filter) under auto.
UNIVERSE_VARIABLE = "flt_u"
UNIVERSE_TIER = "U"


class NarrowedTiers:
    """What ``auto``'s ranking reads from tiers narrowed to a universe (a filter's here, a
    scope's in ``in_scope.py``): each tier's narrowed list (``<list>_<SUFFIX>``, bound by the
    subclass's ``prelude``), then the universe as a last, unboosted tier ``U`` that the ranking
    query treats as ``$universe``."""

    inner: Any  # CompiledTiersLike
    SUFFIX: ClassVar[str]

    @property
    def universe_variable(self) -> str:
        raise NotImplementedError

    def narrowed(self, tier: Any) -> str:
        return f"{tier.list_variable}_{self.SUFFIX}"

    @property
    def tiers(self) -> tuple[FilteredTier, ...]:
        narrowed = tuple(
            FilteredTier(self.narrowed(t), t.weight, t.name, t.member_variable)
            for t in self.inner.tiers
        )
        return (*narrowed, FilteredTier(self.universe_variable, 0.0, UNIVERSE_TIER))

    @property
    def universe(self) -> int:
        return len(self.inner.tiers)

    @property
    def is_boost(self) -> bool:
        """Ranked as tiers with boosts (``Retriever.run``), like the compiled boost it narrows."""
        return True


@dataclass(frozen=True)
class FilteredTiers(NarrowedTiers):
    """``auto``'s compiled tiers with a filter: every tier narrowed to the chunks that pass,
    and those chunks as a last, unboosted tier ``U`` that the ranking query treats as the
    universe (``$universe``): no candidate outside it is ranked."""

    inner: Any  # CompiledTiersLike
    chunk_filter: ChunkFilter
    schema: SchemaMapping
    SUFFIX: ClassVar[str] = "f"

    @property
    def prelude(self) -> str:
        parts = [self.inner.prelude, self.chunk_filter.universe(self.schema, UNIVERSE_VARIABLE)]
        seen: set[str] = set()
        for tier in self.inner.tiers:
            if tier.list_variable not in seen:
                seen.add(tier.list_variable)
                parts.append(
                    self.chunk_filter.tier(self.schema, tier.list_variable, self.narrowed(tier))
                )
        return "\n".join(parts)

    # plans.scope_mode: U is the chunks that pass, ranked like a scope's (in the index by the
    # filter's own predicate or their ids, else exactly up to the scope budget), never the
    # index's top over the whole KB kept to the filter.
    filtered: ClassVar[bool] = True

    @property
    def params(self) -> dict[str, Any]:
        return {**self.inner.params, **self.chunk_filter.params}

    @property
    def universe_variable(self) -> str:
        return UNIVERSE_VARIABLE

    @property
    def search_properties(self) -> frozenset[str] | None:
        """The filter's properties where it is a predicate the ``SEARCH`` takes, else None."""
        from guidedrag_graph.retrieval.scope_predicate import search_properties

        return search_properties(self.chunk_filter.source)

    def search_predicate(self) -> str:
        """The filter's condition on ``c``, for U's ``SEARCH`` (``$flt_N`` parameters)."""
        return self.chunk_filter.condition
