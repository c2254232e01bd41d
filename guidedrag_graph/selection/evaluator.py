"""A pure-Python reference semantics of the selection algebra over a small in-memory graph.

It exists so the Cypher compiler has something independent to be compared with: the
property-based tests generate graphs and expressions, load the graph into a real Neo4j and require
the Cypher result to equal ``evaluate(expr, graph)``. It follows the same rules as the database
path: name resolution tiers (exact name, id, ``name_key``, aliases), relation-type validation,
breadth-first hops that never return the start entities, and the hop cap.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field

from guidedrag_graph.schema.presets import name_key, relation_type_name
from guidedrag_graph.selection import nodes as A


@dataclass(frozen=True)
class DocumentRec:
    id: str
    title: str = ""
    source: str = ""
    date: dt.date | None = None


@dataclass(frozen=True)
class EntityRec:
    id: str
    name: str
    aliases: tuple[str, ...] = ()
    type: str | None = None


@dataclass
class InMemoryGraph:
    """Documents, chunks (id -> document id), entities, mentions and typed relations."""

    documents: dict[str, DocumentRec] = field(default_factory=dict)
    chunks: dict[str, str] = field(default_factory=dict)
    entities: dict[str, EntityRec] = field(default_factory=dict)
    mentions: set[tuple[str, str]] = field(default_factory=set)  # (chunk id, entity id)
    relations: set[tuple[str, str, str]] = field(default_factory=set)  # (head, TYPE, tail)

    # --- name resolution (mirrors resolver.py) ------------------------------------------------
    def resolve_entity(self, name: str) -> list[str]:
        """Entity ids for a name: exact name, id, name_key, then alias; the first tier wins."""
        key = name_key(name)
        tiers: list[Iterable[str]] = [
            (e.id for e in self.entities.values() if e.name == name),
            (e.id for e in self.entities.values() if e.id == name),
            (e.id for e in self.entities.values() if name_key(e.name) == key),
            (
                e.id
                for e in self.entities.values()
                if name in e.aliases or key in {name_key(a) for a in e.aliases}
            ),
        ]
        for tier in tiers:
            found = sorted(set(tier))
            if found:
                return found
        return []

    def relation_types(self) -> set[str]:
        return {t for _, t, _ in self.relations}

    def resolve_types(self, types: Iterable[str]) -> tuple[list[str], list[str]]:
        """(known types, unknown names): exact type, then its UPPER_SNAKE form."""
        known = self.relation_types()
        found: list[str] = []
        unknown: list[str] = []
        for t in types:
            if t in known:
                found.append(t)
            elif relation_type_name(t) in known:
                found.append(relation_type_name(t))
            else:
                unknown.append(t)
        return sorted(set(found)), unknown

    # --- helpers -------------------------------------------------------------------------------
    def chunks_of_entities(self, entity_ids: set[str]) -> set[str]:
        return {c for c, e in self.mentions if e in entity_ids}

    def neighbours(self, frontier: set[str], types: set[str] | None, direction: str) -> set[str]:
        out: set[str] = set()
        for head, rtype, tail in self.relations:
            if types is not None and rtype not in types:
                continue
            if direction in ("out", "both") and head in frontier:
                out.add(tail)
            if direction in ("in", "both") and tail in frontier:
                out.add(head)
        return out

    def reached(
        self, seeds: set[str], types: set[str] | None, depth: int, direction: str, cap: int
    ) -> tuple[set[str], bool]:
        """Entities 1..depth hops from the seeds (seeds excluded), frontier capped per hop."""
        visited = set(seeds)
        frontier = set(seeds)
        reached: set[str] = set()
        truncated = False
        for _ in range(depth):
            nxt = self.neighbours(frontier, types, direction) - visited
            if len(nxt) > cap:
                truncated = True
                nxt = set(sorted(nxt)[:cap])
            visited |= nxt
            reached |= nxt
            frontier = nxt
        return reached, truncated


def evaluate(expr: A.Expr, graph: InMemoryGraph, *, hop_cap: int = 10_000) -> set[str]:
    """The set of chunk ids ``expr`` denotes in ``graph``."""
    return Evaluator(graph, hop_cap).eval(expr)


def hit_cap(expr: A.Expr, graph: InMemoryGraph, *, hop_cap: int = 10_000) -> bool:
    """Whether the hop cap cut any hop of ``expr`` (what ``Selector.sizes`` flags at the root)."""
    ev = Evaluator(graph, hop_cap)
    ev.eval(expr)
    return ev.truncated


def evaluate_boost(
    expr: A.Boost, graph: InMemoryGraph, *, hop_cap: int = 10_000
) -> dict[str, float]:
    """Chunk id -> boost (the largest weight of the tiers holding it), chunks with boost > 0."""
    return {
        chunk: weight
        for chunk, (weight, _) in evaluate_tiers(expr, graph, hop_cap=hop_cap).items()
        if weight > 0
    }


def evaluate_tiers(
    expr: A.Boost, graph: InMemoryGraph, *, hop_cap: int = 10_000
) -> dict[str, tuple[float, str]]:
    """Chunk id -> (boost, best tier's name) for every chunk of at least one tier; the best tier
    is the heaviest holding the chunk, ties broken by written order."""
    ev = Evaluator(graph, hop_cap)
    out: dict[str, tuple[float, str]] = {}
    for _, tier in expr.ordered():
        for chunk in ev.eval(tier.expr):
            out.setdefault(chunk, (tier.weight, tier.label))
    return out


class Evaluator:
    """One evaluation over ``graph``: each primitive applies its own rule (``Leaf.evaluate``),
    each set operation combines its operands' sets; hops are capped, and ``truncated`` says
    whether the cap cut any."""

    def __init__(self, graph: InMemoryGraph, hop_cap: int) -> None:
        self.graph = graph
        self.cap = hop_cap
        self.truncated = False

    def reached(
        self, seeds: set[str], types: set[str] | None, depth: int, direction: str
    ) -> set[str]:
        """Entities 1..depth hops from the seeds (seeds excluded), frontier capped per hop."""
        reached, truncated = self.graph.reached(seeds, types, depth, direction, self.cap)
        self.truncated = self.truncated or truncated
        return reached

    def eval(self, expr: A.Expr) -> set[str]:
        """Post-order with an explicit stack (no recursion), memoised by node identity."""
        done: dict[int, set[str]] = {}
        stack: list[tuple[A.Expr, bool]] = [(expr, False)]
        while stack:
            node, ready = stack.pop()
            if id(node) in done:
                continue
            if not isinstance(node, A.BinaryOp):  # a primitive, or a boost (U)
                done[id(node)] = node.evaluate(self)
            elif ready:
                done[id(node)] = node.combine(done[id(node.left)], done[id(node.right)])
            else:
                stack.append((node, True))
                stack.extend(((node.right, False), (node.left, False)))
        return done[id(expr)]
