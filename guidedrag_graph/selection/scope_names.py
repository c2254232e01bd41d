"""The names a trusted scope may show: entities, relation types and documents (issue 35).

A scope (``selection/scope.py``) bounds which chunks a request may rank; this module bounds
which *names* it may see. A request that could link, resolve or be offered a name mentioned only
outside its scope would learn that the name exists in another tenant's documents, so:

- an entity is in scope when an in-scope chunk mentions it (linking, resolution, suggestions);
- a relation type is in scope when one of its relations is: its evidence chunk (the schema's
  relation chunk property) is in scope, or, having none, both its endpoints are mentioned by
  in-scope chunks (the same rule augmentation's triplets follow, ``cypher/augmentation.cypher``);
- a document is in scope when one of its chunks is.

One read (``cypher/scope_names.cypher``, the scope's prelude first) gives all three, kept per
KB version and scope key in the process's warm state (``GraphContext.data``, cleared when a
write moves the database's version), so a scoped request pays it once, not per call.

Bounded: a scope whose chunks mention more than :data:`MAX_SCOPE_ENTITIES` entities (the link
index's own bound) is not held. Its names are then checked per request
(``cypher/scope_names_check.cypher``: the names, ids or types a request asks about, with the
scope's prelude), one small read per kind asked; nothing is ever let through unchecked. Which
names are kept is decided by ``selection/scope_kept.py`` (pure, ``kept``); the check it asks
for is this module's read (``check``), sent through ``selection/fact_rounds.py``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from guidedrag_graph.context import GraphContext
from guidedrag_graph.selection import fact_rounds
from guidedrag_graph.selection.resolver import Resolver
from guidedrag_graph.selection.scope_kept import (
    MissingScopeFact,
    ScopeAsk,
    ScopeKind,
    asked,
    kept,
)
from guidedrag_graph.templates import queries as T

if TYPE_CHECKING:
    from guidedrag_graph.selection.scope import CompiledScope, Scope
    from guidedrag_graph.selection.selector import Selector

# Entities of a scope held in-process: the link index's bound (about 1 KB each).
MAX_SCOPE_ENTITIES = 100_000
# Mentions counted per entity (the link order's popularity prior), as the link index counts.
MENTION_CAP = 1000
CACHE_KIND = "scope_names"
_KIND = attrgetter("kind")  # a missing scope fact's name: the kind of names to check


@dataclass(frozen=True)
class ScopeNames:
    """What one scope may show, read against one KB version.

    ``held``: the lists below are the whole answer; otherwise (a scope over more entities than
    the bound) each question is checked by a query. ``entities``: rows ``[id, name, name_key,
    alias_keys, mentions, document_subject]`` of the entities mentioned in scope (the link
    index's columns, with the id first)."""

    graph: GraphContext = field(repr=False, compare=False)
    scope: CompiledScope = field(repr=False)
    total: int
    held: bool
    # The scope's cache key (its canonical text), computed once: rendering a scope of hundreds
    # of documents as text costs milliseconds, and every scoped lookup keys on it.
    key: str = ""
    entities: tuple[tuple[Any, ...], ...] = ()
    ids: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()
    relation_types: frozenset[str] = frozenset()
    documents: frozenset[str] = frozenset()

    # ------------------------------------------------------------------ filters
    def keep_ids(self, ids: Iterable[str]) -> list[str]:
        """The entity ids among ``ids`` that in-scope chunks mention, in their order."""
        return self._keep(ids, self.ids, "ids")

    def keep_names(self, names: Iterable[str]) -> list[str]:
        """The entity names among ``names`` that in-scope chunks mention (exact names)."""
        return self._keep(names, self.names, "names")

    def keep_types(self, types: Iterable[str]) -> list[str]:
        """The relation types among ``types`` with a relation in scope."""
        return self._keep(types, self.relation_types, "types")

    def keep_documents(self, ids: Iterable[str]) -> list[str]:
        """The document ids among ``ids`` with a chunk in scope."""
        return self._keep(ids, self.documents, "documents")

    def _keep(self, values: Iterable[str], held: frozenset[str], kind: ScopeKind) -> list[str]:
        """``kept`` (``selection/scope_kept.py``, pure) decides; the check it asks for when the
        scope is not held is read here (``checked``), once."""
        ask = ScopeAsk(kind, asked(values), held if self.held else None)
        return fact_rounds.decided(kept, ask, self._checked, MissingScopeFact, _KIND, rounds=1)

    def _checked(self, ask: ScopeAsk, missing: MissingScopeFact) -> ScopeAsk:
        ask.checked = check(self.graph, self.scope, missing.kind, missing.ask)
        return ask


def scope_names(
    graph: GraphContext, scope: CompiledScope, max_entities: int = MAX_SCOPE_ENTITIES
) -> ScopeNames:
    """The names ``scope`` may show: kept per KB version and scope (``graph.data``), else one
    read (``cypher/scope_names.cypher``). Found by the compiled scope itself first (the selector
    keeps one per KB version, so a warm request renders no text), then by its key."""
    by_object = (CACHE_KIND, id(scope), max_entities)
    held: tuple[CompiledScope, ScopeNames] | None = graph.data.get(by_object)
    if held is not None and held[0] is scope:
        return held[1]
    key = (CACHE_KIND, scope.scope.key, max_entities)
    names: ScopeNames | None = graph.data.get(key)
    if names is None:
        names = read_scope_names(graph, scope, max_entities)
        graph.data.put(key, names)
    graph.data.put(by_object, (scope, names))  # the entry holds the scope: its id stays its own
    return names


def read_scope_names(graph: GraphContext, scope: CompiledScope, max_entities: int) -> ScopeNames:
    """One READ query: the scope's prelude, then its entities, relation types and documents
    (only the count above ``max_entities``). An empty scope (no prelude) shows nothing."""
    if scope.empty:
        return ScopeNames(graph, scope, 0, held=True, key=scope.scope.key)
    query = scope.prelude + "\n" + T.fragment("scope_names", "names", graph.schema)
    params = {
        **scope.params,
        "max_entities": max_entities,
        "mention_cap": MENTION_CAP,
        "structural_types": sorted(graph.schema.structural_relationship_types),
    }
    rows = graph.read(query, params, name="scope_names")
    row = rows[0] if rows else {}
    total = int(row.get("total") or 0)
    key = scope.scope.key
    if total > max_entities:
        return ScopeNames(graph, scope, total, held=False, key=key)
    entities = tuple(tuple(e) for e in row.get("entities") or ())
    return ScopeNames(
        graph,
        scope,
        total,
        held=True,
        key=key,
        entities=entities,
        ids=frozenset(str(e[0]) for e in entities if e[0] is not None),
        names=frozenset(str(e[1]) for e in entities if e[1] is not None),
        relation_types=frozenset(str(t) for t in row.get("relation_types") or () if t),
        documents=frozenset(str(d) for d in row.get("documents") or () if d is not None),
    )


def check(
    graph: GraphContext, scope: CompiledScope, kind: ScopeKind, values: Sequence[str]
) -> frozenset[str]:
    """Which of ``values`` (entity ``ids``, entity ``names``, relation ``types`` or
    ``documents``) meet the scope's rule, asked of Neo4j (``cypher/scope_names_check.cypher``):
    the read alone; what is kept, in which order, ``kept`` decides."""
    query = scope.prelude + "\n" + T.fragment("scope_names_check", kind, graph.schema)
    params = {
        **scope.params,
        "ids": [],
        "names": [],
        "types": [],
        "documents": [],
        kind: list(values),
        "structural_types": sorted(graph.schema.structural_relationship_types),
    }
    rows = graph.read(query, params, name="scope_names_check")
    return frozenset(str(v) for v in (rows[0]["kept"] if rows else ()))


def scoped_selector(selector: Selector, scope: CompiledScope | None) -> Selector:
    """``selector`` with a resolver that answers inside ``scope``'s names (the selector itself
    when there is no scope, or it holds the whole KB): what a scoped call links, resolves and
    suggests with. An empty scope shows no name at all. A shallow copy per call, so one
    ``GuidedRAG`` serves scoped views and requests side by side."""
    if scope is None or scope.whole:
        return selector
    graph = selector.graph
    names = (
        ScopeNames(graph, scope, 0, held=True, key=scope.scope.key)
        if scope.empty
        else scope_names(graph, scope)
    )
    # One view per selector and scope names, kept beside them: what a view learns once (the
    # schema-fit diagnosis of an unknown name) is not asked again on every scoped call.
    key = ("scoped_selector", id(selector), id(names))
    kept: tuple[Selector, ScopeNames, Selector] | None = graph.data.get(key)
    if kept is not None and kept[0] is selector and kept[1] is names:
        return kept[2]
    view = copy.copy(selector)
    view.resolver = Resolver(graph, selector.limits, scope=names)
    graph.data.put(key, (selector, names, view))  # holding both: their ids stay their own
    return view


def selector_in_scope(selector: Selector, scope: Scope | None) -> Selector:
    """``scoped_selector`` for a parsed trusted ``scope`` (compiled first, kept per KB
    version): the doors that resolve or suggest outside ``retrieve`` (MCP's
    ``suggest_entities``, the CLI's) take their selector from here."""
    return scoped_selector(selector, selector.scope(scope))
