"""``select`` and ``cypher`` (the CLI commands and the MCP tools) inside the trusted scope.

The scope comes from the operator (``GUIDEDRAG_SCOPE``, ``--scope``, ``guidedrag mcp
--scope``), never from the expression: the selection is prepared as written, then its query is
wrapped by ``retrieval/in_scope.py`` (the scope's prelude first, ``c IN scope_u`` after), so the
printed Browser script carries the scope and, run as printed, returns only in-scope chunks; the
sizes count only in-scope chunks, and an empty result is never explained from outside the scope.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from guidedrag_graph.retrieval.in_scope import ScopedSelection
from guidedrag_graph.selection import CompiledSelection, Expr, Selector
from guidedrag_graph.selection.explain import SizeNode
from guidedrag_graph.selection.resolution import EmptySelection
from guidedrag_graph.selection.scope import CompiledScope, Scope
from guidedrag_graph.selection.scope_names import scoped_selector
from guidedrag_graph.selection.selector import PreparedSelection


@dataclass(frozen=True)
class InScope:
    """A prepared selection with its query inside the scope (``prepared``), the scope compiled
    (None: no scope, or it holds the whole KB) and the selection as written (``written``)."""

    prepared: PreparedSelection
    scope: CompiledScope | None
    written: PreparedSelection


def prepare_in_scope(selector: Selector, expr: Expr, scope: Scope | None) -> InScope:
    """``expr`` prepared, its query narrowed to ``scope``. Its names are resolved inside the
    scope (``scoped_selector``): a name only another tenant's chunks mention is unknown, with
    suggestions from inside, never "known but outside the scope"."""
    compiled = selector.scope(scope)
    written = scoped_selector(selector, compiled).prepare(expr)
    if compiled is None or compiled.whole:
        return InScope(written, None, written)
    if compiled.empty:
        empty = EmptySelection("empty_scope", "scope", compiled.empty_message())
        return InScope(replace(written, empty=empty, warnings=()), compiled, written)
    inner = ScopedSelection(written.compiled, compiled, selector.schema)
    narrowed = replace(written, compiled=CompiledSelection(inner.cypher, inner.params, False))
    return InScope(narrowed, compiled, written)


def selected(
    selector: Selector, found: InScope
) -> tuple[SizeNode, list[str], EmptySelection | None]:
    """Sizes (inside the scope), chunk ids and why it is empty, for ``select``."""
    tree = selector.sizes(found.written, found.scope)
    ids = [] if found.prepared.empty is not None else selector.chunk_ids(found.prepared)
    empty = found.prepared.empty
    if empty is None and not ids:
        if found.scope is None:
            empty = selector.explain_empty(found.prepared)
        else:  # never explained from the whole KB: that would tell of what the scope hides
            empty = EmptySelection(
                "empty_scope", found.prepared.text, "no chunk of the selection is in the scope"
            )
    return tree, ids, empty


SCOPE_HELP = (
    "the operator's scope: a selection (DSL or JSON, e.g. \"source('wiki')\") every query is "
    "intersected with; it narrows GUIDEDRAG_SCOPE, never widens it (docs/security.md)"
)


def operator_scope(deployment: str | None, given: str | None) -> Scope | None:
    """``GUIDEDRAG_SCOPE`` narrowed by ``--scope`` (one-line errors naming which)."""
    from guidedrag_graph.selection.scope import deployment_scope, narrow

    return narrow(deployment_scope(deployment), given, where="--scope")
