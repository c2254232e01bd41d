"""The steering stage's selection planning: stated semantics → a selection expression.

The paper's Table 2 maps each question's *configuration* (complexity C1/C2, relational or not) to
one selection per approach:

| configuration | RAG | RAG* | GraphRAG          | GraphRAG* |
|---------------|-----|------|-------------------|-----------|
| C1 entity     | U   | E1   | E1                | E1        |
| C2 entity     | U   | E1∩E2| E1∪E2             | E1∩E2     |
| C1 relation   | U   | E1   | E1∪A_hop          | E1∩A_rel  |
| C2 relation   | U   | U    | E1∪A_2hop         | A_rel     |

``A_hop`` is ``khop(E1, 1)`` (every relation type), ``A_2hop`` is ``khop(E1, 2)`` and ``A_rel`` is
``hop(E1, R)`` (only the stated relation types). ``plan_selection`` builds the cell for one
``Approach`` (a column plus how it runs: tagged entities, relaxed ∩, soft steering, widened by the
co-mention neighbourhood ``near(E)``). It lives here, not in ``evaluation/``, because the pipeline's
default selection (``steering="hard"``) is the GraphRAG* column; the harness only lists variants.
The ``auto`` default's graded tiers are built by :mod:`guidedrag_graph.steering.tiers`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from guidedrag_graph.schema.presets import relation_type_name
from guidedrag_graph.selection.nodes import Expr, all_, entity, hop, khop, near
from guidedrag_graph.semantics import Semantics
from guidedrag_graph.vocabulary import Steering


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
    calibrated: bool = False  # auto: tier boosts fitted on the other folds (cross-validated)
    # a door or a peer (evaluation/peers.py): question, retriever, nggr-vector, nggr-hybrid, ppr
    runner: str = ""

    @property
    def guided(self) -> bool:
        """GuidedRAG variants use pre-specified semantics (and abstain when they match nothing)."""
        return self.column.endswith("*")

    @property
    def from_paper(self) -> bool:
        return (
            not self.relaxed
            and not self.neighbourhood
            and self.steering == "hard"
            and not self.runner
        )


# The paper's GuidedRAG mapping (GraphRAG* column): what ``steering="hard"`` runs by default.
PAPER_GUIDED = Approach(
    "graphrag*",
    "graphrag*",
    tagged=False,
    description="pre-specified entities and relation-typed hops",
)


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


@dataclass(frozen=True)
class _Cell:
    """How a Table 2 cell becomes an expression: the entities it needs (``names[:entities]``),
    whether it uses the relation types, and the cell it relaxes to when it holds too little."""

    entities: int
    build: Callable[[tuple[str, ...], list[str]], Expr]
    uses_relations: bool = False
    relaxes_to: str | None = None


_CELLS: dict[str, _Cell] = {
    "U": _Cell(0, lambda n, r: all_()),
    "E1": _Cell(1, lambda n, r: entity(n[0])),
    "E1∪E2": _Cell(2, lambda n, r: entity(n[0]) | entity(n[1])),
    "E1∩E2": _Cell(2, lambda n, r: entity(n[0]) & entity(n[1]), relaxes_to="E1∪E2"),
    "E1∪A_hop": _Cell(1, lambda n, r: entity(n[0]) | khop(n[0], 1)),
    "E1∪A_2hop": _Cell(1, lambda n, r: entity(n[0]) | khop(n[0], 2)),
    "E1∩A_rel": _Cell(
        1, lambda n, r: entity(n[0]) & hop(n[0], r), uses_relations=True, relaxes_to="E1∪A_rel"
    ),
    "E1∪A_rel": _Cell(1, lambda n, r: entity(n[0]) | hop(n[0], r), uses_relations=True),
    "A_rel": _Cell(1, lambda n, r: hop(n[0], r), uses_relations=True),
}


def _runnable_cell(
    cell: str, names: tuple[str, ...], relations: tuple[str, ...], tagged: bool
) -> tuple[str, list[str]]:
    """The nearest cell the semantics can run when they lack what ``cell`` needs, and why."""
    notes: list[str] = []
    if len(names) < _CELLS[cell].entities:
        if not names:
            notes.append("the tagger found no entity" if tagged else "the semantics name no entity")
            cell = "U"
        else:
            notes.append(f"{cell} needs two entities, the question has one")
            cell = "E1"
    if _CELLS[cell].uses_relations and not relations:
        notes.append(f"{cell} needs a relation type, the semantics give none")
        cell = "E1"
    return cell, notes


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
    cell, notes = _runnable_cell(TABLE2[approach.column][config], names, relations, approach.tagged)
    spec = _CELLS[cell]
    expr = spec.build(names, list(relations))
    if approach.relaxed and spec.relaxes_to and size_of is not None and size_of(expr) < k:
        notes.append(f"relaxed: {cell} held fewer than {k} chunks")
        cell, spec = spec.relaxes_to, _CELLS[spec.relaxes_to]
        expr = spec.build(names, list(relations))
    used_entities = names[: spec.entities]
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
        relations=relations if spec.uses_relations else (),
        note="; ".join(notes) or None,
    )
