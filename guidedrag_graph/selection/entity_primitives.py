"""Entity-anchored primitives (the chunks around the entities one name resolves to: entity, hop,
khop, near; and entity([...])) and entity-property ones (type, category)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import Field

from guidedrag_graph.errors import SelectionError
from guidedrag_graph.selection.core import quote
from guidedrag_graph.selection.primitives import Args, Leaf, Named, Resolved, check_depth

if TYPE_CHECKING:
    from guidedrag_graph.selection.evaluator import Evaluator
    from guidedrag_graph.selection.resolution import Answers

Direction = Literal["both", "out", "in"]
DIRECTIONS: tuple[str, ...] = ("both", "out", "in")


@dataclass(frozen=True, eq=False, repr=False)
class EntityAnchored(Named):
    def entity_names(self) -> tuple[str, ...]:
        return (self.name,)

    def resolve(self, by: Answers) -> Resolved:
        return by.entity(self)

    def template_values(self, res: Resolved) -> dict[str, Any]:
        return {"ids": list(res.ids)}

    def seeds(self, ev: Evaluator) -> set[str]:
        return set(ev.graph.resolve_entity(self.name))


@dataclass(frozen=True, eq=False, repr=False)
class Entity(EntityAnchored):
    """Chunks that mention the entity (by name, alias or id; case-insensitive fallback)."""

    op: ClassVar[str] = "entity"
    template: ClassVar[str] = "select_entity"
    entity_list: ClassVar[bool] = True

    def evaluate(self, ev: Evaluator) -> set[str]:
        return ev.graph.chunks_of_entities(self.seeds(ev))


@dataclass(frozen=True, eq=False, repr=False)
class Hop(EntityAnchored):
    """Chunks mentioning an entity 1..depth hops from ``name`` over the given relation types."""

    types: tuple[str, ...]
    depth: int = 1
    direction: str = "both"
    op: ClassVar[str] = "hop"
    template: ClassVar[str] = "select_hop"
    variant: ClassVar[Mapping[str, str]] = {"types": "listed"}
    args: ClassVar[Args] = {
        "name": (str, ...),
        "types": (str | list[str], ...),
        "depth": (int, 1),
        "direction": (Direction, "both"),
    }

    def __post_init__(self) -> None:
        if isinstance(self.types, str):
            object.__setattr__(self, "types", (self.types,))
        else:
            object.__setattr__(self, "types", tuple(self.types))
        check_depth(self.depth, "hop")
        if self.direction not in DIRECTIONS:
            raise SelectionError(
                f"hop direction must be one of {', '.join(DIRECTIONS)}, not {self.direction!r}"
            )

    @property
    def hops(self) -> int:
        return self.depth

    def resolve(self, by: Answers) -> Resolved:
        anchor = by.entity(self)
        return anchor if anchor.empty else by.relation_types(self, anchor)

    def template_values(self, res: Resolved) -> dict[str, Any]:
        return {"ids": list(res.ids), "types": list(res.types)}

    def slots(self, res: Resolved) -> dict[str, Any]:
        return {"relation_types": res.types, "direction": self.direction}

    def evaluate(self, ev: Evaluator) -> set[str]:
        types, unknown = ev.graph.resolve_types(self.types)
        if unknown or not types:
            return set()
        reached = ev.reached(self.seeds(ev), set(types), self.depth, self.direction)
        return ev.graph.chunks_of_entities(reached)

    def _text(self, kids: list[str]) -> str:
        parts = [quote(self.name), "[" + ", ".join(quote(t) for t in self.types) + "]"]
        if self.depth != 1:
            parts.append(f"depth={self.depth}")
        if self.direction != "both":
            parts.append(f"direction={quote(self.direction)}")
        return f"hop({', '.join(parts)})"


@dataclass(frozen=True, eq=False, repr=False)
class KHop(EntityAnchored):
    """Chunks mentioning an entity 1..k hops from ``name`` over every relation type (A_hop)."""

    k: int = 1
    op: ClassVar[str] = "khop"
    template: ClassVar[str] = "select_hop"  # the same breadth-first steps, over every type
    variant: ClassVar[Mapping[str, str]] = {"types": "any"}
    args: ClassVar[Args] = {"name": (str, ...), "k": (int, 1)}

    def __post_init__(self) -> None:
        check_depth(self.k, "khop")

    @property
    def hops(self) -> int:
        return self.k

    def evaluate(self, ev: Evaluator) -> set[str]:
        return ev.graph.chunks_of_entities(ev.reached(self.seeds(ev), None, self.k, "both"))

    def _text(self, kids: list[str]) -> str:
        return f"khop({quote(self.name)}, {self.k})"


@dataclass(frozen=True, eq=False, repr=False)
class Near(EntityAnchored):
    """Chunks reached over co-mention: entity -> its chunks -> their entities -> their chunks."""

    depth: int = 1
    op: ClassVar[str] = "near"
    template: ClassVar[str] = "select_near"
    args: ClassVar[Args] = {"name": (str, ...), "depth": (int, 1)}

    def __post_init__(self) -> None:
        check_depth(self.depth, "near")

    @property
    def hops(self) -> int:
        return self.depth

    def evaluate(self, ev: Evaluator) -> set[str]:
        # As select_near: each step grows the entity list by the co-mentioned entities and keeps
        # its first ``cap`` (the seeds first, then new ones; the reference takes them sorted, the
        # database in its own order, so the conformance graphs make either choice select alike).
        g = ev.graph
        ents = sorted(self.seeds(ev))
        for _ in range(self.depth):
            around = g.chunks_of_entities(set(ents))
            known = set(ents)
            grown = ents + sorted({e for c, e in g.mentions if c in around} - known)
            ev.truncated = ev.truncated or len(grown) > ev.cap
            ents = grown[: ev.cap]
        return g.chunks_of_entities(set(ents))

    def _text(self, kids: list[str]) -> str:
        if self.depth == 1:
            return f"near({quote(self.name)})"
        return f"near({quote(self.name)}, {self.depth})"


@dataclass(frozen=True, eq=False, repr=False)
class Entities(Leaf):
    """Chunks that mention any of the named entities: ``entity(['a', 'b'])``.

    The same set as ``entity('a') | entity('b')``, but one term: every name resolves on its own
    and all their ids go to ONE subquery as one list parameter, so a hundred names cost one
    index seek per id, not a hundred subqueries for the planner.
    """

    names: tuple[str, ...]
    op: ClassVar[str] = "entities"
    in_dsl: ClassVar[bool] = False  # the DSL writes it entity([...])
    args: ClassVar[Args] = {"names": (Annotated[list[str], Field(min_length=1)], ...)}
    template: ClassVar[str] = "select_entity"
    entity_list: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if isinstance(self.names, str) or not isinstance(self.names, (tuple, list)):
            raise SelectionError("entity([...]) takes a list of names")
        object.__setattr__(self, "names", tuple(self.names))
        if not self.names:
            raise SelectionError("entity([...]) needs at least one name")
        if not all(isinstance(n, str) for n in self.names):
            raise SelectionError("entity([...]) takes names as strings")

    def entity_names(self) -> tuple[str, ...]:
        return self.names

    def resolve(self, by: Answers) -> Resolved:
        return by.entities(self)

    def template_values(self, res: Resolved) -> dict[str, Any]:
        return {"ids": list(res.ids)}

    def evaluate(self, ev: Evaluator) -> set[str]:
        g = ev.graph
        return g.chunks_of_entities({i for n in self.names for i in g.resolve_entity(n)})

    def _text(self, kids: list[str]) -> str:
        return "entity([" + ", ".join(quote(n) for n in self.names) + "])"


# --- entity-property: the chunks mentioning entities of a type ------------------------------


@dataclass(frozen=True, eq=False, repr=False)
class EntityProperty(Named):
    def matches(self, entity_type: str) -> bool:
        raise NotImplementedError

    def evaluate(self, ev: Evaluator) -> set[str]:
        g = ev.graph
        return g.chunks_of_entities(
            {e.id for e in g.entities.values() if e.type is not None and self.matches(e.type)}
        )


@dataclass(frozen=True, eq=False, repr=False)
class Type(EntityProperty):
    """Chunks mentioning an entity whose type property equals ``name``."""

    op: ClassVar[str] = "type"
    template: ClassVar[str] = "select_type"

    def template_values(self, res: Resolved) -> dict[str, Any]:
        return {"type": self.name}

    def matches(self, entity_type: str) -> bool:
        return entity_type == self.name


@dataclass(frozen=True, eq=False, repr=False)
class Category(EntityProperty):
    """Like ``type`` but case-insensitive: the coarse categories of the paper's semantics."""

    op: ClassVar[str] = "category"
    template: ClassVar[str] = "select_category"

    def template_values(self, res: Resolved) -> dict[str, Any]:
        return {"category": self.name.lower()}  # once here, not per entity in Cypher

    def matches(self, entity_type: str) -> bool:
        return entity_type.lower() == self.name.lower()
