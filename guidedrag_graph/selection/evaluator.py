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

from neo4j import Driver

from guidedrag_graph import templates
from guidedrag_graph.schema import SchemaMapping, name_key, relation_type_name
from guidedrag_graph.selection import ast as A


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

    # --- loading into Neo4j (for differential tests and examples) ------------------------------
    def load_into(self, driver: Driver, schema: SchemaMapping, database: str | None = None) -> None:
        """Write this graph with ``schema``'s names (types or property relation mode), through
        ``cypher/memory_graph_load.cypher``."""
        rows: dict[str, tuple[str, list[dict[str, object]]]] = {
            "documents": (
                "docs",
                [
                    {"id": d.id, "title": d.title, "source": d.source, "date": d.date}
                    for d in self.documents.values()
                ],
            ),
            "chunks": ("chunks", [{"id": c, "doc": d} for c, d in self.chunks.items()]),
            "entities": ("entities", [_entity_row(e) for e in self.entities.values()]),
            "mentions": ("rows", [{"c": c, "e": e} for c, e in sorted(self.mentions)]),
        }
        for part, (parameter, values) in rows.items():
            query = templates.fragment("memory_graph_load", part, schema)
            driver.execute_query(query, {parameter: values}, database_=database)
        self._load_relations(driver, schema, database)

    def _load_relations(self, driver: Driver, schema: SchemaMapping, database: str | None) -> None:
        by_type: dict[str, list[dict[str, str]]] = {}
        for head, rtype, tail in sorted(self.relations):
            by_type.setdefault(rtype, []).append({"h": head, "t": tail, "type": rtype})
        for rtype, rows in by_type.items():
            if schema.relation_mode == "types":
                relation = templates.Relation((rtype,), "out")
                query = templates.fragment(
                    "memory_graph_load", "relations", schema, relation=relation
                )
            else:
                query = templates.fragment("memory_graph_load", "relations_property", schema)
            driver.execute_query(query, {"rows": rows}, database_=database)


def _entity_row(e: EntityRec) -> dict[str, object]:
    return {
        "id": e.id,
        "name": e.name,
        "key": name_key(e.name),
        "aliases": list(e.aliases),
        "alias_keys": [name_key(a) for a in e.aliases],
        "type": e.type,
    }


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
