"""A scope: the chunks a deployment or a user may read, set by the trusted side only (issue 35).

A scope is a selection in the ordinary algebra (DSL text or the JSON form), typically
``document(...)``, ``source(...)``, ``date(...)`` or ``category(...)``. Server-side code sets it
(``GUIDEDRAG_SCOPE``, ``GuidedRAG(scope=...)``, ``rag.scoped(...)``, an adapter's ``scope=``,
``guidedrag mcp --scope``, the CLI's ``--scope``); a request's own inputs (the question, its
semantics, filters, a selection, an MCP tool argument) never reach it, and the scope is
intersected into everything the request can see.

>>> scope = Scope.parse("source('wikipedia')", where="GUIDEDRAG_SCOPE")
>>> scope.narrowed("document('Euro')").text
"source('wikipedia') & document('Euro')"
>>> Scope.parse("all()", where="scope=") is None   # all(): no restriction
True

Why some primitives are refused: a scope is a boundary of documents and chunks, not semantics.
``hop``/``khop``/``near`` walk the graph from a name (what they hold moves with every relation
written anywhere), and ``boost`` ranks rather than restricts; each is refused with one line.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Union

from guidedrag_graph.errors import ConfigurationError, SelectionError
from guidedrag_graph.schema.presets import SchemaMapping
from guidedrag_graph.selection import nodes as A
from guidedrag_graph.selection.chunk_filters import ChunkFilter, FilterError, compile_filter
from guidedrag_graph.selection.compiled_forms import CompiledPlan
from guidedrag_graph.selection.compiler import compile_plan
from guidedrag_graph.selection.json_form import from_json
from guidedrag_graph.selection.limits import CEILING, Limits, check
from guidedrag_graph.selection.parser import parse
from guidedrag_graph.selection.primitives import Resolved
from guidedrag_graph.templates import queries as T

# The one variable a scope's prelude binds: the list of in-scope chunk nodes.
SCOPE_VARIABLE = "scope_u"
# Inside the prelude: the selection's chunks that pass a property scope's filter.
SCOPE_FILTERED = "scope_p"
# Prefix of a scope property filter's parameters (``$scpf_0``).
SCOPE_FILTER_PREFIX = "scpf"
# Prefix of a scope's parameters (``$scp_0_ids``): never a selection's ``sel_*`` nor a filter's
# ``flt_*``, so the three meet in one query.
SCOPE_PARAM_PREFIX = "scp"
# Characters of a scope given as text (DSL or JSON): a scope names documents, sources, dates or
# categories; the selection limits' ceiling then bounds its terms (2,000), nesting and strings.
# The ceiling, not a request's limits: the trusted side writes a scope, and a scope listing a
# thousand documents is ordinary (their union compiles to one subquery: Selector.scope).
MAX_SCOPE_TEXT = 1_000_000
SCOPE_LIMITS: Limits = CEILING

# Primitives a scope may not use, and why (one line each).
_REFUSED: dict[type[A.Expr], str] = {
    A.Hop: "hop() walks relations from a name",
    A.KHop: "khop() walks the graph from a name",
    A.Near: "near() walks the graph from a name",
    A.Boost: "boost() ranks, it does not restrict",
}
ALLOWED = "document(), source(), date(), category(), type(), entity() and chunks()"


@dataclass(frozen=True)
class Scope:
    """A parsed scope: ``expr`` (the selection node), ``filter_json`` (a chunk property filter
    in neo4j-graphrag's syntax, canonical JSON; None: none) and ``text`` (both written out, also
    the cache ``key``). ``Scope.parse`` builds one; ``narrowed`` intersects.

    A property scope (``{"filters": {"tenant": "acme"}}``, alone or beside a ``"selection"``)
    keeps the chunks whose properties pass: the common way a shared graph marks its tenants.
    """

    expr: A.Expr
    filter_json: str | None = None

    @cached_property
    def text(self) -> str:
        """Kept once written: it is the cache key every call of a scoped pipeline looks up."""
        if self.filter_json is None:
            return self.expr.to_text()
        if isinstance(self.expr, A.All):
            return f"filters {self.filter_json}"
        return f"{self.expr.to_text()} filters {self.filter_json}"

    @property
    def key(self) -> str:
        return self.text

    @property
    def filters(self) -> dict[str, Any] | None:
        """The property filter (neo4j-graphrag's syntax), or None."""
        return None if self.filter_json is None else json.loads(self.filter_json)

    def chunk_filter(self) -> ChunkFilter | None:
        """The property filter compiled (parameters ``scpf_N``: never a request's ``flt_N``)."""
        filters = self.filters
        return None if filters is None else compile_filter(filters, prefix=SCOPE_FILTER_PREFIX)

    def __str__(self) -> str:
        return self.text

    @classmethod
    def parse(
        cls, value: Scope | str | Mapping[str, Any] | A.Expr | None, *, where: str
    ) -> Scope | None:
        """``value`` as a scope (``None``: no restriction, as ``all()`` is). ``where`` names the
        door in errors (``GUIDEDRAG_SCOPE``, ``--scope``, ``scope=``): one line, naming the
        problem and the fix."""
        if value is None or isinstance(value, Scope):
            return value
        selection, filters = _split(value, where)
        try:
            expr = A.All() if selection is None else _expr(selection, where)
        except SelectionError as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ConfigurationError(
                f"{where}: the scope is not a valid selection: {first}"
            ) from None
        if isinstance(expr, A.All) and filters is None:
            return None
        for node in expr.walk():
            why = next((w for kind, w in _REFUSED.items() if isinstance(node, kind)), None)
            if why is not None:
                raise ConfigurationError(
                    f"{where}: a scope cannot use {node.op}() ({why}); a scope is a boundary "
                    f"of documents and chunks: use {ALLOWED}, combined with | & - ^, or a "
                    '{"filters": ...} on chunk properties'
                )
        return cls(expr, None if filters is None else _filter_json(filters, where))

    def narrowed(self, other: Scope | str | Mapping[str, Any] | A.Expr | None) -> Scope:
        """This scope intersected with ``other``: a per-user scope can only narrow a
        deployment's, never widen it (``None``/``all()`` leaves it as it is)."""
        more = Scope.parse(other, where="scoped()")
        if more is None or more == self:
            return self
        if isinstance(self.expr, A.All) or more.expr == self.expr:
            expr = more.expr
        elif isinstance(more.expr, A.All):
            expr = self.expr
        else:
            expr = A.Intersect(self.expr, more.expr)
        mine, theirs = self.filters, more.filters
        if mine is None or theirs is None or mine == theirs:
            both = mine if theirs is None else theirs
        else:
            both = {"$and": [mine, theirs]}
        return Scope(expr, None if both is None else _filter_json(both, "scoped()"))


def _split(value: object, where: str) -> tuple[object, Mapping[str, Any] | None]:
    """A scope's selection and its property filter. The object form is
    ``{"selection": <DSL or JSON>, "filters": {...}}`` (either may be left out); any other
    value, and a mapping with ``"op"`` (a selection's JSON form), is a selection alone."""
    form = value
    if isinstance(value, str) and value.lstrip().startswith("{"):
        if len(value) > MAX_SCOPE_TEXT:
            return value, None  # _expr says it is too long
        try:
            form = json.loads(value)
        except ValueError:
            return value, None  # the selection's JSON reader says what is wrong
    if not isinstance(form, Mapping) or "op" in form:
        return value, None
    unknown = sorted(set(form) - {"selection", "filters"})
    if unknown or not form:
        raise ConfigurationError(
            f'{where}: a scope object takes "selection" and/or "filters" '
            f"(got {', '.join(map(repr, unknown)) or 'neither'}); e.g. "
            '{"filters": {"tenant": "acme"}} or {"selection": "source(\'wiki\')"}'
        )
    filters = form.get("filters")
    if filters is not None and not isinstance(filters, Mapping):
        raise ConfigurationError(
            f'{where}: a scope\'s "filters" is an object such as {{"tenant": "acme"}}, '
            f"not {type(filters).__name__}"
        )
    return form.get("selection"), filters


def _filter_json(filters: Mapping[str, Any], where: str) -> str:
    """The filter checked by its compiler (one line naming the problem) and written canonically."""
    try:
        compile_filter(filters, prefix=SCOPE_FILTER_PREFIX)
    except FilterError as exc:
        raise ConfigurationError(f"{where}: the scope's {exc}") from None
    return json.dumps(filters, sort_keys=True, separators=(",", ":"))


def deployment_scope(text: str | None) -> Scope | None:
    """``GUIDEDRAG_SCOPE`` parsed; unset or blank (``GUIDEDRAG_SCOPE=``) is no scope."""
    if text is None or not text.strip():
        return None
    return Scope.parse(text, where="GUIDEDRAG_SCOPE")


ScopeInput = Union["Scope", str, Mapping[str, Any], A.Expr, None]


def narrow(scope: Scope | None, other: ScopeInput, *, where: str) -> Scope | None:
    """``scope`` narrowed by ``other`` (either may be None: no restriction)."""
    more = Scope.parse(other, where=where)
    if scope is None or more is scope:  # the same object: a request carrying its rag's scope
        return more
    return scope if more is None else scope.narrowed(more)


def _expr(value: object, where: str) -> A.Expr:
    limits = SCOPE_LIMITS
    if isinstance(value, A.Expr):
        check(value, limits)
        return value
    if isinstance(value, str):
        if len(value) > MAX_SCOPE_TEXT:
            raise ConfigurationError(
                f"{where}: the scope is {len(value):,} characters; the limit is "
                f"{MAX_SCOPE_TEXT:,} (name documents, sources or categories, not their text)"
            )
        if not value.strip():
            raise ConfigurationError(
                f"{where}: the scope is empty text; give a selection such as "
                "document('Euro'), or leave it unset for no restriction"
            )
        if value.lstrip().startswith("{"):
            return from_json(value, limits)
        return parse(value, limits)
    if isinstance(value, Mapping):
        return from_json(dict(value), limits)
    raise ConfigurationError(
        f"{where}: a scope is a selection (DSL text, its JSON form or an expression), not "
        f"{type(value).__name__}"
    )


@dataclass(frozen=True)
class CompiledScope:
    """A scope compiled against one KB version (``Selector.scope``).

    ``prelude``: a Cypher fragment (``cypher/scope.cypher``) that binds ONE variable,
    ``scope_u``, the list of in-scope chunk nodes, and nothing else: put it first in a query,
    then test ``c IN scope_u`` (Neo4j caches the list's hash, so each test is O(1)).
    ``params``: its parameters, all ``scp_*``. ``empty``: the scope holds no chunk (a request
    abstains before any embedding, vector search or LLM call). ``size``: its chunks;
    ``whole``: it holds every chunk of the KB at ``version`` (then rankings follow the
    unscoped plan, so they are identical to the unscoped ones, and ``pipeline/scoping.py``
    checks that no read of the call saw a later version)."""

    scope: Scope
    prelude: str
    params: dict[str, Any] = field(default_factory=dict)
    empty: bool = False
    size: int = 0
    whole: bool = False
    reason: str = ""
    # The database version the size was read at (a read's bookmark): "whole" holds there.
    version: frozenset[str] | None = None

    @property
    def text(self) -> str:
        return self.scope.text

    def empty_message(self) -> str:
        """What an abstention says when the scope holds nothing: that, and not the scope's
        terms (``reason`` keeps them for the operator: logs, ``guidedrag select --scope``)."""
        return "the scope this deployment set holds no chunk; nothing can be retrieved in it"


def scope_prelude(
    expr: A.Expr,
    resolved: Mapping[A.Expr, Resolved],
    schema: SchemaMapping,
    *,
    hop_cap: int,
    chunk_filter: ChunkFilter | None = None,
) -> tuple[CompiledPlan, str, dict[str, Any]]:
    """A scope's prelude (``cypher/scope.cypher``: binds ``scope_u``) and its ``scp_*``
    parameters, from what its leaves resolved to — no I/O: ``Selector.scope`` resolves the
    names, checks the cost of the compiled plan (returned first) and reads the size."""
    plan = compile_plan(
        expr,
        resolved,
        schema,
        hop_cap=hop_cap,
        param_prefix=SCOPE_PARAM_PREFIX,
        group_documents=True,
    )
    names, params = plan.names(), dict(plan.params)
    narrowed = ""
    if chunk_filter is not None:  # the selection's chunks that pass the property filter
        narrowed = chunk_filter.tier(schema, names["s"], SCOPE_FILTERED) + "\n"
        names, params = {**names, "s": SCOPE_FILTERED}, {**params, **chunk_filter.params}
    prelude = (
        T.fragment("scope", "open", schema)
        + "\n"
        + plan.body
        + narrowed
        + T.fragment("scope", "close", schema, variables=names)
    )
    return plan, prelude, params
