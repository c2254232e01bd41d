"""The Table 2 mapping, cell by cell, and the relaxed / fallback policies (no database needed)."""

from __future__ import annotations

import pytest

from guidedrag_graph.evaluation.approaches import (
    APPROACHES,
    TABLE2,
    Configuration,
    approach_named,
    configuration_of,
    plan_selection,
)
from guidedrag_graph.selection import Expr, all_, entity, hop, khop, parse
from guidedrag_graph.semantics import Semantics

C1E = Semantics(entities=("Rome",), complexity=1, relational=False)
C2E = Semantics(entities=("Rome", "Carthage"), complexity=2, relational=False)
C1R = Semantics(entities=("Rome",), relations=("fought in",), complexity=1, relational=True)
C2R = Semantics(
    entities=("Rome", "Carthage"), relations=("FOUGHT_IN",), complexity=2, relational=True
)
TAGS = ("Hannibal", "Spain")


def test_configuration_of() -> None:
    assert configuration_of(C1E) is Configuration.C1_ENTITY
    assert configuration_of(C2E) is Configuration.C2_ENTITY
    assert configuration_of(C1R) is Configuration.C1_RELATION
    assert configuration_of(C2R) is Configuration.C2_RELATION


def test_table2_cells_as_printed_in_the_paper() -> None:
    rows = [
        Configuration.C1_ENTITY,
        Configuration.C2_ENTITY,
        Configuration.C1_RELATION,
        Configuration.C2_RELATION,
    ]
    assert [TABLE2["rag"][r] for r in rows] == ["U", "U", "U", "U"]
    assert [TABLE2["rag*"][r] for r in rows] == ["E1", "E1∩E2", "E1", "U"]
    assert [TABLE2["graphrag"][r] for r in rows] == ["E1", "E1∪E2", "E1∪A_hop", "E1∪A_2hop"]
    assert [TABLE2["graphrag*"][r] for r in rows] == ["E1", "E1∩E2", "E1∩A_rel", "A_rel"]


EXPECTED: list[tuple[str, Semantics, str, Expr]] = [
    ("rag", C1E, "U", all_()),
    ("rag", C2E, "U", all_()),
    ("rag", C1R, "U", all_()),
    ("rag", C2R, "U", all_()),
    ("rag*", C1E, "E1", entity("Rome")),
    ("rag*", C2E, "E1∩E2", entity("Rome") & entity("Carthage")),
    ("rag*", C1R, "E1", entity("Rome")),
    ("rag*", C2R, "U", all_()),
    # GraphRAG ignores the stated entities and uses the tagger's
    ("graphrag", C1E, "E1", entity("Hannibal")),
    ("graphrag", C2E, "E1∪E2", entity("Hannibal") | entity("Spain")),
    ("graphrag", C1R, "E1∪A_hop", entity("Hannibal") | khop("Hannibal", 1)),
    ("graphrag", C2R, "E1∪A_2hop", entity("Hannibal") | khop("Hannibal", 2)),
    ("graphrag*", C1E, "E1", entity("Rome")),
    ("graphrag*", C2E, "E1∩E2", entity("Rome") & entity("Carthage")),
    # free-text predicates become relationship type names
    ("graphrag*", C1R, "E1∩A_rel", entity("Rome") & hop("Rome", ["FOUGHT_IN"])),
    ("graphrag*", C2R, "A_rel", hop("Rome", ["FOUGHT_IN"])),
]


@pytest.mark.parametrize(("name", "semantics", "cell", "expr"), EXPECTED)
def test_plan_follows_table2(name: str, semantics: Semantics, cell: str, expr: Expr) -> None:
    plan = plan_selection(APPROACHES[name], semantics, tags=TAGS)
    assert plan.cell == cell
    assert plan.expr == expr
    assert plan.note is None
    assert plan.steering == "hard"
    assert plan.configuration is configuration_of(semantics)
    assert plan.is_all == (cell == "U")


def test_selection_text_round_trips() -> None:
    # the report prints plan.expr.to_text(); it must be a selection a user can paste back
    for name, semantics, _cell, _expr in EXPECTED:
        plan = plan_selection(APPROACHES[name], semantics, tags=TAGS)
        assert parse(plan.expr.to_text()) == plan.expr


def test_relaxed_keeps_a_large_enough_intersection() -> None:
    plan = plan_selection(APPROACHES["graphrag*-relaxed"], C2E, size_of=lambda e: 5, k=5)
    assert plan.cell == "E1∩E2"
    assert plan.expr == entity("Rome") & entity("Carthage")


def test_relaxed_turns_a_small_intersection_into_a_union() -> None:
    seen: list[Expr] = []

    def size_of(expr: Expr) -> int:
        seen.append(expr)
        return 4

    plan = plan_selection(APPROACHES["graphrag*-relaxed"], C2E, size_of=size_of, k=5)
    assert seen == [entity("Rome") & entity("Carthage")]
    assert plan.cell == "E1∪E2"
    assert plan.expr == entity("Rome") | entity("Carthage")
    assert plan.note is not None and "relaxed" in plan.note

    rel = plan_selection(APPROACHES["graphrag*-relaxed"], C1R, size_of=lambda e: 0, k=5)
    assert rel.cell == "E1∪A_rel"
    assert rel.expr == entity("Rome") | hop("Rome", ["FOUGHT_IN"])

    rag = plan_selection(APPROACHES["rag*-relaxed"], C2E, size_of=lambda e: 0, k=5)
    assert rag.expr == entity("Rome") | entity("Carthage")


def test_relaxed_leaves_cells_without_intersection_alone() -> None:
    def never(expr: Expr) -> int:
        raise AssertionError("no intersection to size")

    plan = plan_selection(APPROACHES["graphrag*-relaxed"], C2R, size_of=never)
    assert plan.cell == "A_rel"
    assert plan_selection(APPROACHES["rag*-relaxed"], C1R, size_of=never).cell == "E1"


def test_relaxed_needs_a_size_function() -> None:
    with pytest.raises(ValueError, match="size_of"):
        plan_selection(APPROACHES["rag*-relaxed"], C2E)


def test_soft_steering_keeps_the_selection() -> None:
    plan = plan_selection(APPROACHES["graphrag*-soft"], C1R)
    assert plan.steering == "soft"
    assert plan.expr == entity("Rome") & hop("Rome", ["FOUGHT_IN"])


def test_fallbacks_are_explained() -> None:
    lone = Semantics(entities=("Rome",), complexity=2, relational=False)
    plan = plan_selection(APPROACHES["rag*"], lone)
    assert (plan.cell, plan.expr) == ("E1", entity("Rome"))
    assert plan.note is not None and "two entities" in plan.note

    no_rel = Semantics(entities=("Rome",), complexity=1, relational=True)
    plan = plan_selection(APPROACHES["graphrag*"], no_rel)
    assert (plan.cell, plan.expr) == ("E1", entity("Rome"))
    assert plan.note is not None and "relation type" in plan.note

    untagged = plan_selection(APPROACHES["graphrag"], C1R, tags=())
    assert (untagged.cell, untagged.expr) == ("U", all_())
    assert untagged.note == "the tagger found no entity"

    one_tag = plan_selection(APPROACHES["graphrag"], C2E, tags=("Hannibal",))
    assert one_tag.expr == entity("Hannibal")


def test_approach_named() -> None:
    assert approach_named(" RAG* ").name == "rag*"
    assert approach_named("graphrag").tagged
    assert APPROACHES["graphrag*"].guided and not APPROACHES["graphrag"].guided
    assert APPROACHES["graphrag*"].from_paper and not APPROACHES["graphrag*-soft"].from_paper
    with pytest.raises(ValueError, match="graphrag\\*"):
        approach_named("hybridrag")


def test_neighbourhood_variants_widen_every_cell_by_near() -> None:
    from guidedrag_graph.selection import near

    plan = plan_selection(APPROACHES["graphrag*-near"], C1E)
    assert plan.cell == "E1∪N" and plan.steering == "hard"
    assert plan.expr == entity("Rome") | near("Rome")
    rel = plan_selection(APPROACHES["graphrag*-near-soft"], C1R)
    assert rel.cell == "E1∩A_rel∪N" and rel.steering == "soft"
    assert rel.expr == (entity("Rome") & hop("Rome", ["FOUGHT_IN"])) | near("Rome")
    two = plan_selection(APPROACHES["graphrag*-near"], C2E)
    assert two.expr == (entity("Rome") & entity("Carthage")) | near("Rome") | near("Carthage")
    assert plan_selection(APPROACHES["graphrag*-near"], Semantics()).cell == "U"
    assert not APPROACHES["graphrag*-near"].from_paper
