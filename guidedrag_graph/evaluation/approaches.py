"""The paper's four approaches (Table 2) as expressions of our selection algebra.

Each question's semantics fix its *configuration* (complexity C1/C2, relational or not), and the
configuration picks one cell of Table 2 per approach:

| configuration | RAG | RAG* | GraphRAG          | GraphRAG* |
|---------------|-----|------|-------------------|-----------|
| C1 entity     | U   | E1   | E1                | E1        |
| C2 entity     | U   | E1∩E2| E1∪E2             | E1∩E2     |
| C1 relation   | U   | E1   | E1∪A_hop          | E1∩A_rel  |
| C2 relation   | U   | U    | E1∪A_2hop         | A_rel     |

RAG* and GraphRAG* (the GuidedRAG variants) use the pre-specified semantics; GraphRAG uses the
entities an automatic tagger finds in the question. ``A_hop`` is ``khop(E1, 1)`` (every relation
type), ``A_2hop`` is ``khop(E1, 2)`` and ``A_rel`` is ``hop(E1, R)`` (only the stated relation
types). Beside the paper's mapping we run two variants DESIGN §7 asks for: a *relaxed* policy
that turns an intersection holding fewer than ``k`` chunks into a union (for KGs with one subject
entity per paragraph, where ∩ is nearly always empty), and *soft* steering (rank over U with the
selection boosted, instead of ranking only inside it). A third, *neighbourhood*, widens each
selection with the co-mention neighbourhood ``near(E)`` of its entities (DESIGN §4): on KGs whose
relation triples are sparse, the answer often sits in a paragraph that shares an entity with the
named one rather than in a paragraph about it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from guidedrag_graph.schema import relation_type_name
from guidedrag_graph.selection import Expr, all_, entity, hop, khop, near
from guidedrag_graph.semantics import Semantics

Steering = Literal["hard", "soft"]


class Configuration(StrEnum):
    """A row of Table 2."""

    C1_ENTITY = "C1 entity"
    C2_ENTITY = "C2 entity"
    C1_RELATION = "C1 relation"
    C2_RELATION = "C2 relation"


def configuration_of(semantics: Semantics) -> Configuration:
    """The Table 2 row a question falls in, from its stated complexity and relational flag."""
    if semantics.relational:
        return Configuration.C2_RELATION if semantics.complexity == 2 else Configuration.C1_RELATION
    return Configuration.C2_ENTITY if semantics.complexity == 2 else Configuration.C1_ENTITY


# Table 2 exactly as printed, in the paper's symbols (the report shows this table).
TABLE2: dict[str, dict[Configuration, str]] = {
    "rag": {
        Configuration.C1_ENTITY: "U",
        Configuration.C2_ENTITY: "U",
        Configuration.C1_RELATION: "U",
        Configuration.C2_RELATION: "U",
    },
    "rag*": {
        Configuration.C1_ENTITY: "E1",
        Configuration.C2_ENTITY: "E1∩E2",
        Configuration.C1_RELATION: "E1",
        Configuration.C2_RELATION: "U",
    },
    "graphrag": {
        Configuration.C1_ENTITY: "E1",
        Configuration.C2_ENTITY: "E1∪E2",
        Configuration.C1_RELATION: "E1∪A_hop",
        Configuration.C2_RELATION: "E1∪A_2hop",
    },
    "graphrag*": {
        Configuration.C1_ENTITY: "E1",
        Configuration.C2_ENTITY: "E1∩E2",
        Configuration.C1_RELATION: "E1∩A_rel",
        Configuration.C2_RELATION: "A_rel",
    },
}


@dataclass(frozen=True)
class Approach:
    """One column of the comparison: which Table 2 column it follows and how it runs."""

    name: str
    column: str  # the Table 2 column whose cells it uses
    tagged: bool  # entities from an automatic tagger (GraphRAG) instead of the semantics
    relaxed: bool = False  # ∩ holding fewer than k chunks becomes ∪
    steering: Steering = "hard"
    neighbourhood: bool = False  # widen the selection by near(E) for each of its entities
    description: str = ""

    @property
    def guided(self) -> bool:
        """GuidedRAG variants use pre-specified semantics (and abstain when they match nothing)."""
        return self.column.endswith("*")

    @property
    def from_paper(self) -> bool:
        return not self.relaxed and not self.neighbourhood and self.steering == "hard"


APPROACHES: dict[str, Approach] = {
    a.name: a
    for a in (
        Approach("rag", "rag", tagged=False, description="base RAG: cosine over every chunk (U)"),
        Approach("rag*", "rag*", tagged=False, description="RAG with pre-specified entities"),
        Approach(
            "graphrag",
            "graphrag",
            tagged=True,
            description="tagged entities, union for C2, k-hop over all relation types",
        ),
        Approach(
            "graphrag*",
            "graphrag*",
            tagged=False,
            description="pre-specified entities and relation-typed hops",
        ),
        Approach(
            "rag*-relaxed",
            "rag*",
            tagged=False,
            relaxed=True,
            description="RAG*, with E1∩E2 relaxed to E1∪E2 when it holds fewer than k chunks",
        ),
        Approach(
            "graphrag*-relaxed",
            "graphrag*",
            tagged=False,
            relaxed=True,
            description="GraphRAG*, with each ∩ relaxed to ∪ when it holds fewer than k chunks",
        ),
        Approach(
            "graphrag*-soft",
            "graphrag*",
            tagged=False,
            steering="soft",
            description="GraphRAG*'s selection as a soft boost over U (DESIGN §5)",
        ),
        Approach(
            "graphrag*-near",
            "graphrag*",
            tagged=False,
            neighbourhood=True,
            description="GraphRAG*'s selection widened by the co-mention neighbourhood near(E1)",
        ),
        Approach(
            "graphrag*-near-soft",
            "graphrag*",
            tagged=False,
            neighbourhood=True,
            steering="soft",
            description="GraphRAG*'s selection widened by near(E1), as a soft boost over U",
        ),
    )
}

PAPER_APPROACHES: tuple[str, ...] = ("rag", "rag*", "graphrag", "graphrag*")


def approach_named(name: str) -> Approach:
    """Look an approach up by name, case-insensitively, with the valid names in the error."""
    try:
        return APPROACHES[name.strip().lower()]
    except KeyError:
        raise ValueError(
            f"unknown approach {name!r}; choose from {', '.join(APPROACHES)}"
        ) from None


@dataclass(frozen=True)
class Plan:
    """What one approach runs for one question: the Table 2 cell and its selection expression."""

    approach: str
    configuration: Configuration
    cell: str  # the paper's symbol of the selection that runs (after fallbacks / relaxing)
    expr: Expr
    steering: Steering
    entities: tuple[str, ...]  # the entities the selection was built from
    relations: tuple[str, ...]
    note: str | None = None  # why the cell differs from Table 2's, if it does

    @property
    def is_all(self) -> bool:
        return self.cell == "U"


SizeOf = Callable[[Expr], int]


def plan_selection(
    approach: Approach,
    semantics: Semantics,
    *,
    tags: Sequence[str] = (),
    size_of: SizeOf | None = None,
    k: int = 5,
) -> Plan:
    """Build the selection ``approach`` runs for a question with these ``semantics``.

    ``tags`` are the tagger's entities, best first (used only by tagged approaches). ``size_of``
    counts the chunks of an expression; the relaxed policy needs it to decide whether an
    intersection is too small. When the semantics lack what a cell needs (a C2 question with one
    entity, a relational one with no relation type, a tagger that found nothing), the plan falls
    back to the nearest cell that can run and says so in ``note``.
    """
    if approach.relaxed and size_of is None:
        raise ValueError(f"approach {approach.name!r} needs size_of to relax intersections")
    config = configuration_of(semantics)
    names = tuple(tags) if approach.tagged else tuple(semantics.entities)
    relations = tuple(relation_type_name(r) for r in semantics.relations)
    cell = TABLE2[approach.column][config]
    notes: list[str] = []

    wanted_entities = 2 if cell in ("E1∩E2", "E1∪E2") else (0 if cell == "U" else 1)
    if len(names) < wanted_entities:
        if not names:
            notes.append(
                "the tagger found no entity" if approach.tagged else "the semantics name no entity"
            )
            cell = "U"
        else:
            notes.append(f"{cell} needs two entities, the question has one")
            cell = "E1"
    if cell in ("E1∩A_rel", "A_rel") and not relations:
        notes.append(f"{cell} needs a relation type, the semantics give none")
        cell = "E1"

    e1 = names[0] if names else ""
    used_entities: tuple[str, ...] = ()
    used_relations: tuple[str, ...] = ()
    expr: Expr
    if cell == "U":
        expr = all_()
    elif cell == "E1":
        expr, used_entities = entity(e1), (e1,)
    elif cell in ("E1∩E2", "E1∪E2"):
        e2 = names[1]
        used_entities = (e1, e2)
        if cell == "E1∪E2":
            expr = entity(e1) | entity(e2)
        else:
            expr = entity(e1) & entity(e2)
            if approach.relaxed and size_of is not None and size_of(expr) < k:
                expr, cell = entity(e1) | entity(e2), "E1∪E2"
                notes.append(f"relaxed: E1∩E2 held fewer than {k} chunks")
    elif cell == "E1∪A_hop":
        expr, used_entities = entity(e1) | khop(e1, 1), (e1,)
    elif cell == "E1∪A_2hop":
        expr, used_entities = entity(e1) | khop(e1, 2), (e1,)
    elif cell == "E1∩A_rel":
        used_entities, used_relations = (e1,), relations
        expr = entity(e1) & hop(e1, list(relations))
        if approach.relaxed and size_of is not None and size_of(expr) < k:
            expr, cell = entity(e1) | hop(e1, list(relations)), "E1∪A_rel"
            notes.append(f"relaxed: E1∩A_rel held fewer than {k} chunks")
    elif cell == "A_rel":
        used_entities, used_relations = (e1,), relations
        expr = hop(e1, list(relations))
    else:  # pragma: no cover - TABLE2 holds only the cells above
        raise AssertionError(f"unhandled Table 2 cell {cell!r}")
    if approach.neighbourhood and used_entities:
        for name in used_entities:
            expr = expr | near(name)
        cell = f"{cell}∪N"

    return Plan(
        approach=approach.name,
        configuration=config,
        cell=cell,
        expr=expr,
        steering=approach.steering,
        entities=used_entities,
        relations=used_relations,
        note="; ".join(notes) or None,
    )
