"""Why a selection is empty: known from resolution alone, or found in the sizes of its terms.

``static_empty`` folds each leaf's resolution reason up through the set operations (each says
which operand's emptiness empties it: ``BinaryOp.empty_from``). ``explain`` walks down the
``SizeNode`` tree of an empty result, one rule per operation (``_STEPS``, keyed by op), to the
term that emptied it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from guidedrag_graph.selection import nodes as A
from guidedrag_graph.selection.resolution import EmptySelection


@dataclass(frozen=True)
class SizeNode:
    """The size of one sub-expression, like a line of EXPLAIN ANALYZE."""

    text: str
    size: int
    truncated: bool = False
    children: list[SizeNode] = field(default_factory=list)

    def render(self, depth: int = 0) -> str:
        """A tree like EXPLAIN ANALYZE: ``size  expression`` per line, children indented."""
        lines: list[str] = []
        stack: list[tuple[SizeNode, int]] = [(self, depth)]
        while stack:  # iterative: a long chain a | b | c ... is as deep as it is long
            node, level = stack.pop()
            flag = "  (hop cap hit: partial)" if node.truncated else ""
            lines.append(f"{node.size:>7}  {'  ' * level}{node.text}{flag}")
            stack.extend((child, level + 1) for child in reversed(node.children))
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        stack: list[tuple[SizeNode, dict[str, Any]]] = [(self, out)]
        while stack:
            node, target = stack.pop()
            target.update(text=node.text, size=node.size, truncated=node.truncated, children=[])
            for child in node.children:
                slot: dict[str, Any] = {}
                target["children"].append(slot)
                stack.append((child, slot))
        return out


def static_empty(expr: A.Expr, reasons: Mapping[A.Expr, EmptySelection]) -> EmptySelection | None:
    """Emptiness known from resolution alone (unknown names), before any chunk is read."""
    if expr.whole_selection_only:
        return None  # a boost denotes U; empty tiers only boost nothing (they become warnings)

    def combine(node: A.Expr, kids: list[EmptySelection | None]) -> EmptySelection | None:
        if not isinstance(node, A.BinaryOp):
            return reasons.get(node)
        return node.empty_from(*kids)

    return A.fold(expr, combine)


# One step down from an empty set operation: the operand (and its sizes) to look into next, or
# the explanation when neither operand is empty on its own.
_Step = tuple[A.Expr, SizeNode] | EmptySelection


def _intersect(expr: A.BinaryOp, left: SizeNode, right: SizeNode) -> _Step:
    if left.size == 0:
        return expr.left, left
    if right.size == 0:
        return expr.right, right
    return EmptySelection(
        "empty_intersection",
        expr.to_text(),
        f"{expr.left.to_text()} ({left.size} chunks) and {expr.right.to_text()} "
        f"({right.size} chunks) share no chunk; try | or a soft selection",
    )


# Why a difference or symmetric difference with a non-empty left operand is empty.
_CANCELLED = {
    A.Difference.op: "every chunk of {left} ({size}) is also in {right}",
    A.SymDiff.op: "{left} and {right} select the same chunks",
}


def _cancelled(expr: A.BinaryOp, left: SizeNode, right: SizeNode) -> _Step:
    if left.size == 0:
        return expr.left, left
    why = _CANCELLED[expr.op].format(
        left=expr.left.to_text(), size=left.size, right=expr.right.to_text()
    )
    return EmptySelection("empty_difference", expr.to_text(), why)


def _union(expr: A.BinaryOp, left: SizeNode, right: SizeNode) -> _Step:
    return expr.left, left  # both sides are empty: the left one first


_STEPS: dict[str, Callable[[A.BinaryOp, SizeNode, SizeNode], _Step]] = {
    A.Intersect.op: _intersect,
    A.Difference.op: _cancelled,
    A.SymDiff.op: _cancelled,
    A.Union.op: _union,
}


def explain(expr: A.Expr, tree: SizeNode, known: Sequence[EmptySelection]) -> EmptySelection | None:
    """Walk down from an empty result to the term that emptied it (a loop, not recursion);
    ``known``: the reasons resolution already gave (a leaf's own is preferred)."""
    while tree.size == 0:
        if not isinstance(expr, A.BinaryOp):
            term = expr.to_text()
            for reason in known:
                if reason.term == term:
                    return reason
            return EmptySelection("empty_term", term, f"{term} selects no chunk in this graph")
        left, right = tree.children
        step = _STEPS[expr.op](expr, left, right)
        if isinstance(step, EmptySelection):
            return step
        expr, tree = step
    return None
