"""A trusted scope compiled against the KB: the edge of ``selection/scope_compiled.py``.

What the scope compiles to is decided pure (``compiled_scope``); the facts it asks for are read
here through ``selection/fact_rounds.py``, in the order it asks, each through the one reader
(``GraphContext.read``, so the async core awaits the same reads): the database's property keys
(``cypher/property_keys.cypher``; a scope with a property filter only), the scope's names
resolved (``Selector.resolution``: the names in one batch, then each leaf), the counts its cost
is estimated from (``Resolver.cost_stats``; an expanding term only) and its size with the KB's
chunk count (``cypher/scope.cypher``'s ``size``, at the version the read saw). ``Selector.scope``
calls ``compiled`` and keeps what it returns per KB version.
"""

from __future__ import annotations

from functools import partial
from operator import attrgetter
from typing import TYPE_CHECKING

from guidedrag_graph.db.read_versions import seen
from guidedrag_graph.selection import fact_rounds
from guidedrag_graph.selection.scope import CompiledScope, Scope
from guidedrag_graph.selection.scope_compiled import (
    MissingCompileFact,
    ScopeFacts,
    compiled_scope,
)
from guidedrag_graph.templates import queries as T

if TYPE_CHECKING:
    from guidedrag_graph.selection.selector import Selector

_KIND = attrgetter("kind")


def compiled(selector: Selector, scope: Scope) -> CompiledScope:
    """``scope`` compiled against ``selector``'s KB: at most four reads — the property keys,
    the names, the cost's counts, the size — each only when the decision asks for it."""
    facts = ScopeFacts(scope, selector.schema, selector.settings)
    read = partial(_read, selector)
    return fact_rounds.decided(compiled_scope, facts, read, MissingCompileFact, _KIND, rounds=4)


def _read(selector: Selector, facts: ScopeFacts, missing: MissingCompileFact) -> ScopeFacts:
    """The fact ``missing`` names, read as ``Selector._compile_scope`` read it before the
    split."""
    graph = selector.graph
    if missing.kind == "keys":
        facts.keys = graph.property_keys()
    elif missing.kind == "names":
        res = selector.resolution(missing.names, diagnose=False)
        facts.resolved = {leaf: res.resolve(leaf) for leaf in missing.leaves}
        facts.reasons = res.reasons
    elif missing.kind == "stats":
        facts.stats = selector.resolver.cost_stats(list(missing.ids))
    else:
        query = missing.prelude + T.fragment("scope", "size", facts.schema)
        with seen() as versions:  # the version "whole" is true at
            rows = graph.read(query, missing.params, name="scope")
        facts.size = int(rows[0]["scope_size"]) if rows else 0
        facts.total = int(rows[0]["chunks"]) if rows else 0
        facts.version = versions[-1] if versions else None
    return facts
