"""The JSON form of a selection, validated by a pydantic schema node by node (issue 10, D2/D3).

Each node type has a strict model of its own fields (a string is a string, an integer is not a
boolean, unknown keys are errors); children stay raw and are converted by an explicit stack, so
neither pydantic nor Python recursion ever follows the nesting of user input. Errors name the
node's path and the field: ``selection JSON at left.right: source.name: Input should be a valid
string``. The term and nesting limits are counted while walking, before anything is built.

    >>> expr_from_json({"op": "entity", "name": "Rome"}, Limits())
    <Entity entity('Rome')>
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from guidedrag_graph.errors import SelectionError
from guidedrag_graph.selection import ast as A
from guidedrag_graph.selection.limits import (
    Limits,
    check,
    check_hop_depth,
    check_leaf,
    too_deep,
    too_many_terms,
)

Name = str
Direction = Literal["both", "out", "in"]


class _Node(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    op: str


class AllJSON(_Node):
    op: Literal["all"]


class EntityJSON(_Node):
    op: Literal["entity"]
    name: Name


class EntitiesJSON(_Node):
    op: Literal["entities"]
    names: list[Name] = Field(min_length=1)


class HopJSON(_Node):
    op: Literal["hop"]
    name: Name
    types: Name | list[Name]
    depth: int = 1
    direction: Direction = "both"


class KHopJSON(_Node):
    op: Literal["khop"]
    name: Name
    k: int = 1


class NearJSON(_Node):
    op: Literal["near"]
    name: Name
    depth: int = 1


class NamedJSON(_Node):
    """type, category, document, source: one name."""

    op: Literal["type", "category", "document", "source"]
    name: Name


class DateJSON(_Node):
    op: Literal["date"]
    start: Name | int | None = None
    end: Name | int | None = None


class ChunksJSON(_Node):
    op: Literal["chunks"]
    ids: list[Name]


class BinaryJSON(_Node):
    op: Literal["union", "intersect", "difference", "symdiff"]
    left: dict[str, Any]
    right: dict[str, Any]


class TierJSON(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    expr: dict[str, Any]
    weight: float
    name: Name | None = None


class BoostJSON(_Node):
    op: Literal["boost"]
    tiers: list[TierJSON] = Field(min_length=1)


SCHEMAS: dict[str, type[_Node]] = {
    "all": AllJSON,
    "entity": EntityJSON,
    "entities": EntitiesJSON,
    "hop": HopJSON,
    "khop": KHopJSON,
    "near": NearJSON,
    "type": NamedJSON,
    "category": NamedJSON,
    "document": NamedJSON,
    "source": NamedJSON,
    "date": DateJSON,
    "chunks": ChunksJSON,
    "union": BinaryJSON,
    "intersect": BinaryJSON,
    "difference": BinaryJSON,
    "symdiff": BinaryJSON,
    "boost": BoostJSON,
}


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
        cls = A.NODE_TYPES[node.op]
        return cls(kids[0], kids[1])  # type: ignore[call-arg]
    if isinstance(node, BoostJSON):
        return A.Boost(
            tuple(A.Tier(k, t.weight, t.name) for k, t in zip(kids, node.tiers, strict=True))
        )
    if isinstance(node, HopJSON):
        types = (node.types,) if isinstance(node.types, str) else tuple(node.types)
        return A.Hop(node.name, types, node.depth, node.direction)
    if isinstance(node, (EntitiesJSON, ChunksJSON)):
        values = node.names if isinstance(node, EntitiesJSON) else node.ids
        return A.NODE_TYPES[node.op](tuple(values))  # type: ignore[call-arg]
    args = {k: v for k, v in node.model_dump().items() if k != "op"}
    return A.NODE_TYPES[node.op](**args)


def _children(node: _Node) -> list[tuple[str, object]]:
    if isinstance(node, BinaryJSON):
        return [("left", node.left), ("right", node.right)]
    if isinstance(node, BoostJSON):
        return [(f"tiers[{i}].expr", t.expr) for i, t in enumerate(node.tiers)]
    return []


def expr_from_json(data: dict[str, Any] | str, limits: Limits) -> A.Expr:
    """The expression ``data`` (or the JSON text) denotes, or a ``SelectionError``."""
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
