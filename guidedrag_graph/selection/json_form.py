"""The JSON form of a selection, validated by a pydantic schema node by node.

Each node type has a strict model of its own fields (a string is a string, an integer is not a
boolean, unknown keys are errors); children stay raw and are converted by an explicit stack, so
neither pydantic nor Python recursion ever follows the nesting of user input. Errors name the
node's path and the field: ``selection JSON at left.right: source.name: Input should be a valid
string``. The term and nesting limits are counted while walking, before anything is built.

    >>> from_json({"op": "entity", "name": "Rome"})
    <Entity entity('Rome')>
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from guidedrag_graph.errors import SelectionError
from guidedrag_graph.selection import nodes as A
from guidedrag_graph.selection.limits import (
    Limits,
    check,
    check_hop_depth,
    check_leaf,
    too_deep,
    too_many_terms,
)


class _Node(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    op: str


class BinaryJSON(_Node):
    left: dict[str, Any]
    right: dict[str, Any]


class TierJSON(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    expr: dict[str, Any]
    weight: float
    name: str | None = None


class BoostJSON(_Node):
    tiers: list[TierJSON] = Field(min_length=1)


def _schema(cls: type[A.Expr]) -> type[_Node]:
    """A node kind's strict model: a primitive's from the arguments its class declares."""
    if issubclass(cls, A.Leaf):
        fields: dict[str, Any] = dict(cls.args)
        return create_model(f"{cls.__name__}JSON", __base__=_Node, **fields)
    return BoostJSON if issubclass(cls, A.Boost) else BinaryJSON


# Looked up by op, so a model's own ``op`` needs only be a string.
SCHEMAS: dict[str, type[_Node]] = {op: _schema(cls) for op, cls in A.NODE_TYPES.items()}


def _where(path: str) -> str:
    return f"selection JSON at {path}" if path else "selection JSON"


def _validate(data: object, path: str) -> _Node:
    if not isinstance(data, dict) or "op" not in data:
        raise SelectionError(f'{_where(path)}: a selection is an object with an "op" key')
    op = data["op"]
    schema = SCHEMAS.get(op) if isinstance(op, str) else None
    if schema is None:
        raise SelectionError(
            f"{_where(path)}: unknown selection op {str(op)[:40]!r}; expected one of "
            f"{', '.join(SCHEMAS)}"
        )
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        got = repr(err.get("input"))[:40]
        raise SelectionError(f"{_where(path)}: {op}.{field}: {err['msg']} (got {got})") from None


def _build(node: _Node, kids: list[A.Expr], limits: Limits) -> A.Expr:
    for key in ("depth", "k"):  # the configured range first, so the message names the setting
        value = getattr(node, key, None)
        if isinstance(value, int):
            check_hop_depth(value, node.op, limits)
    if isinstance(node, BinaryJSON):
        return A.NODE_TYPES[node.op](kids[0], kids[1])  # type: ignore[call-arg]
    if isinstance(node, BoostJSON):
        return A.Boost(
            tuple(A.Tier(k, t.weight, t.name) for k, t in zip(kids, node.tiers, strict=True))
        )
    args = {k: v for k, v in node.model_dump().items() if k != "op"}
    return A.NODE_TYPES[node.op](**args)


def _children(node: _Node) -> list[tuple[str, object]]:
    if isinstance(node, BinaryJSON):
        return [("left", node.left), ("right", node.right)]
    if isinstance(node, BoostJSON):
        return [(f"tiers[{i}].expr", t.expr) for i, t in enumerate(node.tiers)]
    return []


def from_json(data: dict[str, Any] | str, limits: Limits | None = None) -> A.Expr:
    """Inverse of ``Expr.to_json``; also accepts the JSON text. Every node is validated against
    its schema; errors name the node's path and the field. A function, not a method of
    ``Expr``, so the node classes never import their own reader (the package stays acyclic)."""
    limits = limits or Limits()
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as exc:
            raise SelectionError(f"selection JSON is not valid JSON: {exc}") from None
        except RecursionError:
            raise too_deep(limits.max_depth + 1, limits) from None
    max_nodes = 2 * limits.max_terms  # a tree with n leaves has 2n - 1 nodes
    built: dict[int, A.Expr] = {}
    nodes: dict[int, _Node] = {}
    seen = 0
    stack: list[tuple[object, str, bool]] = [(data, "", False)]
    while stack:
        raw, path, ready = stack.pop()
        if ready:
            node = nodes[id(raw)]
            if any(id(child) not in built for _, child in _children(node)):
                raise SelectionError(f"{_where(path)}: the selection contains itself (a cycle)")
            kids = [built[id(child)] for _, child in _children(node)]
            try:
                expr = _build(node, kids, limits)
                check_leaf(expr, limits)
            except (SelectionError, TypeError, ValueError) as exc:
                raise SelectionError(f"{_where(path)}: {exc}") from None
            built[id(raw)] = expr
            continue
        seen += 1
        if seen > max_nodes:
            raise too_many_terms(seen // 2, limits)
        if id(raw) in nodes:  # the same object twice (a Python caller's shared dict): reuse
            continue
        node = _validate(raw, path)
        nodes[id(raw)] = node
        stack.append((raw, path, True))
        for name, child in reversed(_children(node)):
            stack.append((child, f"{path}.{name}" if path else name, False))
    expr = built[id(data)]
    check(expr, limits)
    return expr
