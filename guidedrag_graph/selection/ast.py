"""The selection algebra as immutable expression nodes (paper §3.2, DESIGN §4).

Every node denotes a set of chunks. Nodes are frozen dataclasses, so they hash, compare
structurally and can be shared between threads; the operators ``|``, ``&``, ``-`` and ``^`` build
new nodes with Python's own precedence (``-`` > ``&`` > ``^`` > ``|``). Three forms round-trip:
the Python builders below, the text DSL (``to_text()`` / ``parse()``) and a JSON form
(``to_json()`` / ``Expr.from_json()``).

    >>> expr = entity("Rome") & hop("Rome", ["FOUGHT_IN"])
    >>> str(expr)
    "entity('Rome') & hop('Rome', ['FOUGHT_IN'])"
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Literal

from guidedrag_graph.errors import SelectionError

Direction = Literal["both", "out", "in"]
DIRECTIONS: tuple[str, ...] = ("both", "out", "in")

# Binding strength of each operator, as in Python: higher binds tighter.
PRECEDENCE: dict[str, int] = {"|": 1, "^": 2, "&": 3, "-": 4}


def quote(value: str) -> str:
    """A DSL string literal for ``value`` that the parser reads back unchanged."""
    out = value.replace("\\", "\\\\").replace("'", "\\'")
    out = out.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return "'" + out + "'"


@dataclass(frozen=True)
class Expr:
    """A set of chunks. Subclasses are the primitives and the four set operations."""

    op: ClassVar[str] = ""

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
        raise NotImplementedError

    def __str__(self) -> str:
        return self.to_text()

    def to_json(self) -> dict[str, Any]:
        """Plain JSON-serialisable data: ``{"op": "entity", "name": "Rome"}``."""
        out: dict[str, Any] = {"op": self.op}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, Expr):
                out[f.name] = value.to_json()
            elif isinstance(value, tuple):
                out[f.name] = list(value)
            else:
                out[f.name] = value
        return out

    @staticmethod
    def from_json(data: dict[str, Any] | str) -> Expr:
        """Inverse of ``to_json``; also accepts the JSON text."""
        if isinstance(data, str):
            try:
                data = json.loads(data)
            except json.JSONDecodeError as exc:
                raise SelectionError(f"selection JSON is not valid JSON: {exc}") from exc
        if not isinstance(data, dict) or "op" not in data:
            raise SelectionError('selection JSON must be an object with an "op" key')
        cls = NODE_TYPES.get(str(data["op"]))
        if cls is None:
            raise SelectionError(
                f"unknown selection op {data['op']!r}; expected one of {', '.join(NODE_TYPES)}"
            )
        if cls is Boost:
            tiers = data.get("tiers")
            if not isinstance(tiers, list) or not all(isinstance(t, dict) for t in tiers):
                raise SelectionError('boost JSON needs "tiers": a list of {"expr", "weight"}')
            out: list[Tier] = []
            for t in tiers:
                if "expr" not in t or "weight" not in t:
                    raise SelectionError('each boost tier needs "expr" and "weight"')
                out.append(Tier(Expr.from_json(t["expr"]), t["weight"], t.get("name")))
            return Boost(tuple(out))
        kwargs: dict[str, Any] = {}
        for f in fields(cls):
            if f.name not in data:
                continue
            value = data[f.name]
            if f.name in ("left", "right"):
                value = Expr.from_json(value)
            elif isinstance(value, list):
                value = tuple(value)
            kwargs[f.name] = value
        try:
            return cls(**kwargs)
        except TypeError as exc:
            raise SelectionError(f"bad selection JSON for {data['op']!r}: {exc}") from exc

    # --- traversal ---------------------------------------------------------------------------
    def children(self) -> tuple[Expr, ...]:
        return ()

    def walk(self) -> Iterator[Expr]:
        """This node and every node below it, parents first."""
        yield self
        for child in self.children():
            yield from child.walk()

    def leaves(self) -> Iterator[Expr]:
        for node in self.walk():
            if not node.children():
                yield node


def _check(other: object) -> Expr:
    if not isinstance(other, Expr):
        raise TypeError(f"selection operators combine selections, not {type(other).__name__}")
    return other


def _args(*parts: str) -> str:
    return ", ".join(parts)


def _str_list(values: Sequence[str]) -> str:
    return "[" + ", ".join(quote(v) for v in values) + "]"


# --- primitives ------------------------------------------------------------------------------


@dataclass(frozen=True)
class All(Expr):
    """U: every chunk (base RAG)."""

    op: ClassVar[str] = "all"

    def to_text(self) -> str:
        return "all()"


@dataclass(frozen=True)
class Entity(Expr):
    """Chunks that mention the entity (by name, alias or id; case-insensitive fallback)."""

    name: str
    op: ClassVar[str] = "entity"

    def to_text(self) -> str:
        return f"entity({quote(self.name)})"


@dataclass(frozen=True)
class Hop(Expr):
    """Chunks mentioning an entity 1..depth hops from ``name`` over the given relation types."""

    name: str
    types: tuple[str, ...]
    depth: int = 1
    direction: str = "both"
    op: ClassVar[str] = "hop"

    def __post_init__(self) -> None:
        if isinstance(self.types, str):
            object.__setattr__(self, "types", (self.types,))
        else:
            object.__setattr__(self, "types", tuple(self.types))
        _check_depth(self.depth, "hop")
        if self.direction not in DIRECTIONS:
            raise SelectionError(
                f"hop direction must be one of {', '.join(DIRECTIONS)}, not {self.direction!r}"
            )

    def to_text(self) -> str:
        parts = [quote(self.name), _str_list(self.types)]
        if self.depth != 1:
            parts.append(f"depth={self.depth}")
        if self.direction != "both":
            parts.append(f"direction={quote(self.direction)}")
        return f"hop({_args(*parts)})"


@dataclass(frozen=True)
class KHop(Expr):
    """Chunks mentioning an entity 1..k hops from ``name`` over every relation type (A_hop)."""

    name: str
    k: int = 1
    op: ClassVar[str] = "khop"

    def __post_init__(self) -> None:
        _check_depth(self.k, "khop")

    def to_text(self) -> str:
        return f"khop({quote(self.name)}, {self.k})"


@dataclass(frozen=True)
class Near(Expr):
    """Chunks reached over co-mention: entity -> its chunks -> their entities -> their chunks."""

    name: str
    depth: int = 1
    op: ClassVar[str] = "near"

    def __post_init__(self) -> None:
        _check_depth(self.depth, "near")

    def to_text(self) -> str:
        if self.depth == 1:
            return f"near({quote(self.name)})"
        return f"near({quote(self.name)}, {self.depth})"


@dataclass(frozen=True)
class Type(Expr):
    """Chunks mentioning an entity whose type property equals ``name``."""

    name: str
    op: ClassVar[str] = "type"

    def to_text(self) -> str:
        return f"type({quote(self.name)})"


@dataclass(frozen=True)
class Category(Expr):
    """Like ``type`` but case-insensitive: the coarse categories of the paper's semantics."""

    name: str
    op: ClassVar[str] = "category"

    def to_text(self) -> str:
        return f"category({quote(self.name)})"


@dataclass(frozen=True)
class Document(Expr):
    """Chunks of the document with this id or, failing that, this exact title."""

    name: str
    op: ClassVar[str] = "document"

    def to_text(self) -> str:
        return f"document({quote(self.name)})"


@dataclass(frozen=True)
class Source(Expr):
    """Chunks of every document whose source equals ``name``."""

    name: str
    op: ClassVar[str] = "source"

    def to_text(self) -> str:
        return f"source({quote(self.name)})"


@dataclass(frozen=True)
class Date(Expr):
    """Chunks whose document date lies in [start, end]; ``None`` leaves a side open.

    Bounds are ISO dates, ``YYYY-MM`` or years: a year ``2002`` as a start means 2002-01-01 and
    as an end 2002-12-31, so ``date(2002, 2026)`` is the paper's "2002–2026 AD".
    """

    start: str | None = None
    end: str | None = None
    op: ClassVar[str] = "date"

    def __post_init__(self) -> None:
        for name in ("start", "end"):
            value = getattr(self, name)
            if isinstance(value, int) and not isinstance(value, bool):
                object.__setattr__(self, name, str(value))
            elif value is not None and not isinstance(value, str):
                raise SelectionError(f"date bounds are strings, years or null, not {value!r}")
        self.bounds()  # fail at construction, where the parser can point at it

    def bounds(self) -> tuple[str, str]:
        """Inclusive ISO bounds; open sides become 0001-01-01 and 9999-12-31 (index-friendly)."""
        return (
            _iso_bound(self.start, first=True) if self.start is not None else "0001-01-01",
            _iso_bound(self.end, first=False) if self.end is not None else "9999-12-31",
        )

    def to_text(self) -> str:
        def bound(value: str | None) -> str:
            return "null" if value is None else quote(value)

        return f"date({bound(self.start)}, {bound(self.end)})"


@dataclass(frozen=True)
class Chunks(Expr):
    """A manual selection of chunk ids."""

    ids: tuple[str, ...]
    op: ClassVar[str] = "chunks"

    def __post_init__(self) -> None:
        object.__setattr__(self, "ids", tuple(self.ids))

    def to_text(self) -> str:
        return f"chunks({', '.join(quote(i) for i in self.ids)})"


def _iso_bound(value: str, *, first: bool) -> str:
    """``2002`` -> 2002-01-01 / 2002-12-31; ``2002-02`` -> 2002-02-01 / 2002-02-28; ISO as is."""
    import calendar
    import datetime as dt

    text = value.strip()
    try:
        if re.fullmatch(r"-?\d{1,4}", text):
            year = int(text)
            return dt.date(year, 1, 1).isoformat() if first else dt.date(year, 12, 31).isoformat()
        if re.fullmatch(r"\d{4}-\d{2}", text):
            year, month = (int(p) for p in text.split("-"))
            day = 1 if first else calendar.monthrange(year, month)[1]
            return dt.date(year, month, day).isoformat()
        return dt.date.fromisoformat(text).isoformat()
    except ValueError:
        raise SelectionError(
            f"bad date bound {value!r}: write a year (2002), a month (2002-05) or a date "
            f"(2002-05-17)"
        ) from None


def _check_depth(value: int, what: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 5:
        raise SelectionError(f"{what} depth must be an integer from 1 to 5, not {value!r}")


# --- set operations --------------------------------------------------------------------------


@dataclass(frozen=True)
class BinaryOp(Expr):
    left: Expr
    right: Expr
    symbol: ClassVar[str] = ""

    def __post_init__(self) -> None:
        for side in (self.left, self.right):
            if isinstance(side, Boost):
                raise SelectionError(
                    f"boost(...) must be the whole selection, not part of {self.symbol!r}"
                )

    def children(self) -> tuple[Expr, ...]:
        return (self.left, self.right)

    def to_text(self) -> str:
        mine = PRECEDENCE[self.symbol]
        left = self.left.to_text()
        right = self.right.to_text()
        # Left-associative: a left child of equal strength needs no parentheses, a right one does.
        if isinstance(self.left, BinaryOp) and PRECEDENCE[self.left.symbol] < mine:
            left = f"({left})"
        if isinstance(self.right, BinaryOp) and PRECEDENCE[self.right.symbol] <= mine:
            right = f"({right})"
        return f"{left} {self.symbol} {right}"


@dataclass(frozen=True)
class Union(BinaryOp):
    op: ClassVar[str] = "union"
    symbol: ClassVar[str] = "|"


@dataclass(frozen=True)
class Intersect(BinaryOp):
    op: ClassVar[str] = "intersect"
    symbol: ClassVar[str] = "&"


@dataclass(frozen=True)
class Difference(BinaryOp):
    op: ClassVar[str] = "difference"
    symbol: ClassVar[str] = "-"


@dataclass(frozen=True)
class SymDiff(BinaryOp):
    op: ClassVar[str] = "symdiff"
    symbol: ClassVar[str] = "^"


# --- weighted tiers (issue 11, /work/coord/BOOST.md) -----------------------------------------


@dataclass(frozen=True)
class Tier:
    """One tier of a ``boost``: a selection, the weight its chunks get, and an optional label.

    Not an ``Expr``: a tier only means something inside a ``Boost``. The name is a display label
    (it defaults to the selection's DSL text) and takes no part in equality or hashing, so
    ``parse(str(e)) == e`` holds although the DSL does not carry names.
    """

    expr: Expr
    weight: float
    name: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.expr, Expr):
            raise SelectionError(f"a boost tier needs a selection, not {type(self.expr).__name__}")
        if isinstance(self.expr, Boost):
            raise SelectionError("boost(...) cannot be a tier of another boost(...)")
        weight = self.weight
        if isinstance(weight, bool) or not isinstance(weight, (int, float)):
            raise SelectionError(f"a boost weight is a number, not {weight!r}")
        if not math.isfinite(weight) or weight < 0:
            raise SelectionError(f"a boost weight must be finite and >= 0, not {weight!r}")
        object.__setattr__(self, "weight", float(weight))
        if self.name is not None and not isinstance(self.name, str):
            raise SelectionError(f"a boost tier name is a string, not {self.name!r}")

    @property
    def label(self) -> str:
        """The name shown in results: the given name, else the selection's DSL text."""
        return self.name if self.name is not None else self.expr.to_text()

    def to_text(self) -> str:
        return f"{self.expr.to_text()}: {self.weight!r}"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"expr": self.expr.to_json(), "weight": self.weight}
        if self.name is not None:
            out["name"] = self.name
        return out


TierLike = Tier | tuple[Expr, float] | tuple[Expr, float, str | None]


@dataclass(frozen=True)
class Boost(Expr):
    """Weighted tiers: the set is U (every chunk); ranking adds to each chunk's score the largest
    weight of the tiers whose selection holds it (0 if none). Only valid as a whole selection."""

    tiers: tuple[Tier, ...]
    op: ClassVar[str] = "boost"

    def __post_init__(self) -> None:
        tiers = self.tiers
        if isinstance(tiers, (Tier, Expr)) or not isinstance(tiers, (tuple, list)):
            raise SelectionError("boost(...) takes a sequence of tiers")
        object.__setattr__(self, "tiers", tuple(_as_tier(t) for t in tiers))
        if not self.tiers:
            raise SelectionError("boost(...) needs at least one tier, e.g. boost(entity('x'): 0.2)")

    def children(self) -> tuple[Expr, ...]:
        return tuple(t.expr for t in self.tiers)

    def to_text(self) -> str:
        return "boost(" + ", ".join(t.to_text() for t in self.tiers) + ")"

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, "tiers": [t.to_json() for t in self.tiers]}

    def ordered(self) -> list[tuple[int, Tier]]:
        """(original position, tier) by weight descending, ties in written order: the first
        tier of this order that holds a chunk is that chunk's best tier."""
        return sorted(enumerate(self.tiers), key=lambda it: (-it[1].weight, it[0]))


def _as_tier(value: object) -> Tier:
    if isinstance(value, Tier):
        return value
    if isinstance(value, tuple) and len(value) in (2, 3):
        return Tier(*value)
    raise SelectionError(
        f"a boost tier is Tier(expr, weight[, name]) or (expr, weight), not {value!r}"
    )


NODE_TYPES: dict[str, type[Expr]] = {
    cls.op: cls
    for cls in (
        All,
        Entity,
        Hop,
        KHop,
        Near,
        Type,
        Category,
        Document,
        Source,
        Date,
        Chunks,
        Union,
        Intersect,
        Difference,
        SymDiff,
        Boost,
    )
}

# --- builders (the Python form) --------------------------------------------------------------


def all_() -> Expr:
    return All()


def entity(name: str) -> Expr:
    return Entity(name)


def hop(
    name: str, types: Sequence[str] | str, depth: int = 1, direction: Direction = "both"
) -> Expr:
    return Hop(name, tuple([types] if isinstance(types, str) else types), depth, direction)


def khop(name: str, k: int = 1) -> Expr:
    return KHop(name, k)


def near(name: str, depth: int = 1) -> Expr:
    return Near(name, depth)


def type_(name: str) -> Expr:
    return Type(name)


def category(name: str) -> Expr:
    return Category(name)


def document(name: str) -> Expr:
    return Document(name)


def source(name: str) -> Expr:
    return Source(name)


def date(start: str | int | None = None, end: str | int | None = None) -> Expr:
    return Date(
        str(start) if isinstance(start, int) else start, str(end) if isinstance(end, int) else end
    )


def chunks(*ids: str) -> Expr:
    return Chunks(tuple(ids))


def boost(*tiers: TierLike | Mapping[Expr, float]) -> Boost:
    """Weighted tiers: ``boost((entity("x"), 0.2), (near("x"), 0.05))``,
    ``boost({entity("x"): 0.2, near("x"): 0.05})`` or ``boost(Tier(entity("x"), 0.2, "E"))``."""
    out: list[Tier] = []
    for item in tiers:
        if isinstance(item, Mapping):
            out.extend(Tier(expr, weight) for expr, weight in item.items())
        else:
            out.append(_as_tier(item))
    return Boost(tuple(out))
