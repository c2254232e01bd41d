"""The expression core: ``Expr``, its identity and traversal, and the four set operations.

Every node denotes a set of chunks. Nodes are frozen dataclasses, so they hash, compare
structurally and can be shared between threads; the operators ``|``, ``&``, ``-`` and ``^`` build
new nodes with Python's own precedence (``-`` > ``&`` > ``^`` > ``|``). The primitives (leaves)
are in ``primitives.py``, weighted tiers in ``boost.py``; ``ast.py`` gathers them all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast

from guidedrag_graph.errors import SelectionError

if TYPE_CHECKING:
    from guidedrag_graph.selection.evaluator import Evaluator
    from guidedrag_graph.selection.primitives import Leaf

_T = TypeVar("_T")

# Binding strength of each operator, as in Python: higher binds tighter.
PRECEDENCE: dict[str, int] = {"|": 1, "^": 2, "&": 3, "-": 4}


def quote(value: str) -> str:
    """A DSL string literal for ``value`` that the parser reads back unchanged."""
    out = value.replace("\\", "\\\\").replace("'", "\\'")
    out = out.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return "'" + out + "'"


@dataclass(frozen=True, eq=False, repr=False)
class Expr:
    """A set of chunks. Subclasses are the primitives, the four set operations and ``boost``.

    Equality, hashing, text, JSON and traversal are iterative (an explicit stack, never Python
    recursion), so an expression as deep as the limits allow cannot raise ``RecursionError``;
    the structural hash is computed once per node and cached.
    """

    op: ClassVar[str] = ""
    # Only valid as the whole selection (boost): never an operand, never a tier.
    whole_selection_only: ClassVar[bool] = False
    # An infix operator (a | b): a left-nested chain of one such operator reads without
    # parentheses, so the nesting limit counts the chain as one level.
    infix: ClassVar[bool] = False

    # --- identity ------------------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Expr):
            return NotImplemented
        return _equal(self, other)

    def __hash__(self) -> int:
        return _hash(self)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.to_text()}>"

    def fields_items(self) -> Iterator[tuple[str, Any]]:
        """(name, value) of this node's own data: everything but child selections."""
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, Expr):
                yield f.name, value

    def identity(self) -> tuple[Any, ...]:
        """What identifies this node apart from its children."""
        return (type(self), *(value for _, value in self.fields_items()))

    def limited_values(self) -> Iterator[tuple[str, Any]]:
        """(what, value) of every string or list of this node that the limits bound, ``what``
        as their errors name it (``hop() types``)."""
        for key, value in self.fields_items():
            yield f"{self.op}() {key}", value

    # --- operators -------------------------------------------------------------------------
    def __or__(self, other: Expr) -> Expr:
        return Union(self, _check(other))

    def __and__(self, other: Expr) -> Expr:
        return Intersect(self, _check(other))

    def __sub__(self, other: Expr) -> Expr:
        return Difference(self, _check(other))

    def __xor__(self, other: Expr) -> Expr:
        return SymDiff(self, _check(other))

    # --- forms -------------------------------------------------------------------------------
    def to_text(self) -> str:
        """The canonical DSL text (``parse(e.to_text()) == e``)."""
        return fold(self, lambda node, kids: node._text(kids))

    def _text(self, kids: list[str]) -> str:
        """This node's text given its children's texts (leaves have none)."""
        raise NotImplementedError

    def __str__(self) -> str:
        return self.to_text()

    def to_json(self) -> dict[str, Any]:
        """Plain JSON-serialisable data: ``{"op": "entity", "name": "Rome"}``."""
        return fold(self, lambda node, kids: node._json(kids))

    def _json(self, kids: list[dict[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.op}
        for name, value in self.fields_items():
            out[name] = list(value) if isinstance(value, tuple) else value
        return out

    # --- meaning -------------------------------------------------------------------------------
    @property
    def hops(self) -> int | None:
        """How many hops this node walks itself: its template's ``@step`` repeats that often,
        it takes the hop cap, and the hop-depth limit bounds it (None: it walks none)."""
        return None

    def evaluate(self, ev: Evaluator) -> set[str]:
        """The chunk ids this node denotes in ``ev``'s in-memory graph (``evaluator.py``), for
        nodes whose set does not come from their children (primitives, ``boost``)."""
        raise TypeError(f"no evaluation rule for {type(self).__name__}")

    # --- traversal ---------------------------------------------------------------------------
    def children(self) -> tuple[Expr, ...]:
        return ()

    def walk(self) -> Iterator[Expr]:
        """This node and every node below it, parents first, left to right."""
        stack: list[Expr] = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children()))

    def leaves(self) -> Iterator[Leaf]:
        """The primitives below this node (a set operation or a boost always has children)."""
        for node in self.walk():
            if not node.children():
                yield cast("Leaf", node)


def fold(root: Expr, combine: Callable[[Expr, list[_T]], _T]) -> _T:
    """``combine(node, [results of its children])`` bottom-up, with an explicit stack (no
    recursion), memoised by node identity (a shared sub-expression is combined once)."""
    done: dict[int, _T] = {}
    stack: list[tuple[Expr, bool]] = [(root, False)]
    while stack:
        node, ready = stack.pop()
        if id(node) in done:
            continue
        kids = node.children()
        if ready or not kids:
            done[id(node)] = combine(node, [done[id(k)] for k in kids])
        else:
            stack.append((node, True))
            stack.extend((k, False) for k in reversed(kids) if id(k) not in done)
    return done[id(root)]


def _hash(root: Expr) -> int:
    cached: int | None = root.__dict__.get("_hash")
    if cached is not None:
        return cached

    def combine(node: Expr, kids: list[int]) -> int:
        value: int | None = node.__dict__.get("_hash")
        if value is None:
            value = hash((node.identity(), tuple(kids)))
            object.__setattr__(node, "_hash", value)
        return value

    return fold(root, combine)


def _equal(a: Expr, b: Expr) -> bool:
    stack: list[tuple[Expr, Expr]] = [(a, b)]
    while stack:
        x, y = stack.pop()
        if x is y:
            continue
        if type(x) is not type(y) or _hash(x) != _hash(y) or x.identity() != y.identity():
            return False
        kx, ky = x.children(), y.children()
        if len(kx) != len(ky):
            return False
        stack.extend(zip(kx, ky, strict=True))
    return True


def _check(other: object) -> Expr:
    if not isinstance(other, Expr):
        raise TypeError(f"selection operators combine selections, not {type(other).__name__}")
    return other


# --- set operations --------------------------------------------------------------------------


@dataclass(frozen=True, eq=False, repr=False)
class BinaryOp(Expr):
    """A set operation. Each declares its DSL ``symbol``, its ``cypher/set_op.cypher`` variant,
    how it combines its operands' sets, and which operand's emptiness empties it."""

    left: Expr
    right: Expr
    symbol: ClassVar[str] = ""
    template: ClassVar[str] = ""
    infix: ClassVar[bool] = True
    variant: ClassVar[Mapping[str, str]] = {}  # its template's variant (set_op: the operator)

    def __post_init__(self) -> None:
        for side in (self.left, self.right):
            if side.whole_selection_only:
                raise SelectionError(
                    f"{side.op}(...) must be the whole selection, not part of {self.symbol!r}"
                )

    @property
    def precedence(self) -> int:
        return PRECEDENCE[self.symbol]

    def combine(self, left: set[str], right: set[str]) -> set[str]:
        """This operation on its operands' chunk sets."""
        raise NotImplementedError

    def empty_from(self, left: _T | None, right: _T | None) -> _T | None:
        """Given why each operand is known to be empty (or None), why this node is: the reason
        that empties it, or None when it may hold chunks."""
        raise NotImplementedError

    def children(self) -> tuple[Expr, ...]:
        return (self.left, self.right)

    def _json(self, kids: list[dict[str, Any]]) -> dict[str, Any]:
        return {"op": self.op, "left": kids[0], "right": kids[1]}

    def _text(self, kids: list[str]) -> str:
        mine = self.precedence
        left, right = kids
        # Left-associative: a left child of equal strength needs no parentheses, a right one does.
        if isinstance(self.left, BinaryOp) and self.left.precedence < mine:
            left = f"({left})"
        if isinstance(self.right, BinaryOp) and self.right.precedence <= mine:
            right = f"({right})"
        return f"{left} {self.symbol} {right}"


@dataclass(frozen=True, eq=False, repr=False)
class Union(BinaryOp):
    op: ClassVar[str] = "union"
    symbol: ClassVar[str] = "|"
    template: ClassVar[str] = "set_op"
    variant: ClassVar[Mapping[str, str]] = {"op": "union"}

    def combine(self, left: set[str], right: set[str]) -> set[str]:
        return left | right

    def empty_from(self, left: _T | None, right: _T | None) -> _T | None:
        return left if (left and right) else None


@dataclass(frozen=True, eq=False, repr=False)
class Intersect(BinaryOp):
    op: ClassVar[str] = "intersect"
    symbol: ClassVar[str] = "&"
    template: ClassVar[str] = "set_op"
    variant: ClassVar[Mapping[str, str]] = {"op": "intersect"}

    def combine(self, left: set[str], right: set[str]) -> set[str]:
        return left & right

    def empty_from(self, left: _T | None, right: _T | None) -> _T | None:
        return left or right


@dataclass(frozen=True, eq=False, repr=False)
class Difference(BinaryOp):
    op: ClassVar[str] = "difference"
    symbol: ClassVar[str] = "-"
    template: ClassVar[str] = "set_op"
    variant: ClassVar[Mapping[str, str]] = {"op": "difference"}

    def combine(self, left: set[str], right: set[str]) -> set[str]:
        return left - right

    def empty_from(self, left: _T | None, right: _T | None) -> _T | None:
        return left


@dataclass(frozen=True, eq=False, repr=False)
class SymDiff(BinaryOp):
    op: ClassVar[str] = "symdiff"
    symbol: ClassVar[str] = "^"
    template: ClassVar[str] = "set_op"
    variant: ClassVar[Mapping[str, str]] = {"op": "symdiff"}

    def combine(self, left: set[str], right: set[str]) -> set[str]:
        return left ^ right

    def empty_from(self, left: _T | None, right: _T | None) -> _T | None:
        return left if (left and right) else None
