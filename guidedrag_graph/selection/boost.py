"""Weighted tiers (docs/steering.md): ``boost(entity('x'): 0.2, near('x'): 0.05)``.

The set of a ``Boost`` is U (every chunk); ranking adds to each chunk's score the largest weight
of the tiers whose selection holds it. It is only valid as a whole selection.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from guidedrag_graph.errors import SelectionError
from guidedrag_graph.selection.core import Expr

if TYPE_CHECKING:
    from guidedrag_graph.selection.evaluator import Evaluator


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
        if self.expr.whole_selection_only:
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


@dataclass(frozen=True, eq=False, repr=False)
class Boost(Expr):
    """Weighted tiers: the set is U (every chunk); ranking adds to each chunk's score the largest
    weight of the tiers whose selection holds it (0 if none). Only valid as a whole selection."""

    tiers: tuple[Tier, ...]
    op: ClassVar[str] = "boost"
    whole_selection_only: ClassVar[bool] = True

    def __post_init__(self) -> None:
        tiers = self.tiers
        if isinstance(tiers, (Tier, Expr)) or not isinstance(tiers, (tuple, list)):
            raise SelectionError("boost(...) takes a sequence of tiers")
        object.__setattr__(self, "tiers", tuple(as_tier(t) for t in tiers))
        if not self.tiers:
            raise SelectionError("boost(...) needs at least one tier, e.g. boost(entity('x'): 0.2)")

    def fields_items(self) -> Iterator[tuple[str, Any]]:
        return iter(())  # its data are its tiers

    def identity(self) -> tuple[Any, ...]:
        return (type(self), tuple(t.weight for t in self.tiers))  # names are labels only

    def limited_values(self) -> Iterator[tuple[str, Any]]:
        for tier in self.tiers:
            if tier.name is not None:
                yield "a boost tier name", tier.name

    def children(self) -> tuple[Expr, ...]:
        return tuple(t.expr for t in self.tiers)

    def evaluate(self, ev: Evaluator) -> set[str]:
        return set(ev.graph.chunks)  # a boost denotes U; its tiers only rank

    def _text(self, kids: list[str]) -> str:
        pairs = zip(kids, self.tiers, strict=True)
        return "boost(" + ", ".join(f"{k}: {t.weight!r}" for k, t in pairs) + ")"

    def _json(self, kids: list[dict[str, Any]]) -> dict[str, Any]:
        tiers: list[dict[str, Any]] = []
        for k, t in zip(kids, self.tiers, strict=True):
            named = {"name": t.name} if t.name is not None else {}
            tiers.append({"expr": k, "weight": t.weight} | named)
        return {"op": self.op, "tiers": tiers}

    def ordered(self) -> list[tuple[int, Tier]]:
        """(original position, tier) by weight descending, ties in written order: the first
        tier of this order that holds a chunk is that chunk's best tier."""
        return sorted(enumerate(self.tiers), key=lambda it: (-it[1].weight, it[0]))


def as_tier(value: object) -> Tier:
    if isinstance(value, Tier):
        return value
    if isinstance(value, tuple) and len(value) in (2, 3):
        return Tier(*value)
    raise SelectionError(
        f"a boost tier is Tier(expr, weight[, name]) or (expr, weight), not {value!r}"
    )


def boost(*tiers: TierLike | Mapping[Expr, float]) -> Boost:
    """Weighted tiers: ``boost((entity("x"), 0.2), (near("x"), 0.05))``,
    ``boost({entity("x"): 0.2, near("x"): 0.05})`` or ``boost(Tier(entity("x"), 0.2, "E"))``."""
    out: list[Tier] = []
    for item in tiers:
        if isinstance(item, Mapping):
            out.extend(Tier(expr, weight) for expr, weight in item.items())
        else:
            out.append(as_tier(item))
    return Boost(tuple(out))
