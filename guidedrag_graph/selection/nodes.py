"""The selection algebra as immutable expression nodes (paper §3.2; docs/selections.md).

Every node denotes a set of chunks. Three forms round-trip: the Python builders below, the text
DSL (``to_text()`` / ``parse()``) and a JSON form (``to_json()`` / ``from_json()``). This
module gathers the nodes (``core.py``: ``Expr`` and the set operations; ``primitives.py``: the
leaves, with ``entity_primitives.py`` and ``document_primitives.py``; ``boost.py``: weighted
tiers) and registers every kind in ``NODE_TYPES``.

    >>> expr = entity("Rome") & hop("Rome", ["FOUGHT_IN"])
    >>> str(expr)
    "entity('Rome') & hop('Rome', ['FOUGHT_IN'])"
"""

from __future__ import annotations

from collections.abc import Sequence

from guidedrag_graph.selection.boost import Boost, Tier, TierLike, as_tier, boost
from guidedrag_graph.selection.core import (
    PRECEDENCE,
    BinaryOp,
    Difference,
    Expr,
    Intersect,
    SymDiff,
    Union,
    fold,
    quote,
)
from guidedrag_graph.selection.document_primitives import Date, Document, DocumentScoped, Source
from guidedrag_graph.selection.entity_primitives import (
    DIRECTIONS,
    Category,
    Direction,
    Entities,
    Entity,
    EntityAnchored,
    EntityProperty,
    Hop,
    KHop,
    Near,
    Type,
)
from guidedrag_graph.selection.primitives import All, Chunks, Leaf, Named

__all__ = [
    "DIRECTIONS",
    "LEAF_TYPES",
    "NODE_TYPES",
    "PRECEDENCE",
    "SET_TYPES",
    "All",
    "BinaryOp",
    "Boost",
    "Category",
    "Chunks",
    "Date",
    "Difference",
    "Direction",
    "Document",
    "DocumentScoped",
    "Entities",
    "Entity",
    "EntityAnchored",
    "EntityProperty",
    "Expr",
    "Hop",
    "Intersect",
    "KHop",
    "Leaf",
    "Named",
    "Near",
    "Source",
    "SymDiff",
    "Tier",
    "TierLike",
    "Type",
    "Union",
    "all_",
    "as_tier",
    "boost",
    "category",
    "chunks",
    "date",
    "document",
    "entity",
    "fold",
    "hop",
    "khop",
    "near",
    "quote",
    "source",
    "type_",
]

# Every primitive, in the order the DSL lists them (its "unknown selection" error names them so).
LEAF_TYPES: tuple[type[Leaf], ...] = (
    All,
    Entity,
    Entities,
    Hop,
    KHop,
    Near,
    Type,
    Category,
    Document,
    Source,
    Date,
    Chunks,
)
SET_TYPES: tuple[type[BinaryOp], ...] = (Union, Intersect, Difference, SymDiff)
_KINDS: tuple[type[Expr], ...] = (*LEAF_TYPES, *SET_TYPES, Boost)
NODE_TYPES: dict[str, type[Expr]] = {cls.op: cls for cls in _KINDS}

# --- builders (the Python form) --------------------------------------------------------------


def all_() -> Expr:
    return All()


def entity(name: str | Sequence[str]) -> Expr:
    """``entity("Rome")``, or one term for several names: ``entity(["Rome", "Gaul"])``."""
    return Entity(name) if isinstance(name, str) else Entities(tuple(name))


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
