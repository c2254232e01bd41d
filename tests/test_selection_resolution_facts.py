"""Name resolution decided from facts alone (issue 37): a ``Resolution`` handed its facts answers
with no reader, no graph and no driver anywhere; one that lacks a fact says which, by name, before
it records anything; and the edge (``NameResolution``) reads each fact once, in the order the
answers need them. The import side (``selection/resolution.py`` imports no driver, database
layer or context) is the "Planning is pure" contract, run by ``tests/test_architecture.py``."""

from __future__ import annotations

import pytest

from guidedrag_graph.selection import EmptySelection, parse
from guidedrag_graph.selection.name_reads import NameResolution
from guidedrag_graph.selection.primitives import Leaf
from guidedrag_graph.selection.resolution import MissingNameFact, Resolution

NO_SUCH = "(by name, id, case-insensitive name or alias)"


def leaf(text: str) -> Leaf:
    expr = parse(text)
    assert isinstance(expr, Leaf)
    return expr


def test_a_resolution_handed_its_facts_answers_without_any_reader() -> None:
    hop = leaf("hop('Rome', ['fought in', 'NOPE'])")
    res = Resolution(
        ids={"Rome": ["rome"], "Gaul": ["gaul"], "Rme": []},
        facts={
            ("relation_types", hop): (("FOUGHT_IN",), ("NOPE",)),
            ("close_types", "NOPE"): ("NOTE",),
            ("document_ids", "d1"): ("d1",),
            ("suggestions", 0): ("Rome",),
            ("schema_mismatch", 0): None,
        },
        diagnose=True,
    )
    assert leaf("entity(['Rome', 'Gaul'])").resolve(res).ids == ("rome", "gaul")
    assert leaf("document('d1')").resolve(res).ids == ("d1",)
    assert hop.resolve(res).empty
    assert res.reasons[hop] == EmptySelection(
        "unknown_relation_type",
        "hop('Rome', ['fought in', 'NOPE'])",
        "unknown relation type(s) 'NOPE': the graph has no such relationships; "
        "did you mean 'NOTE'?",
        ("NOTE",),
    )
    rme = leaf("entity('Rme')")
    assert rme.resolve(res).empty and res.explained == 1
    assert res.reasons[rme] == EmptySelection(
        "unknown_entity",
        "entity('Rme')",
        f"no entity named 'Rme' {NO_SUCH}; did you mean 'Rome'?",
        ("Rome",),
    )


@pytest.mark.parametrize(
    ("text", "kind", "ask"),
    [
        ("entity('Atlantis')", "entity_ids", "Atlantis"),
        ("hop('Rome', ['FOUGHT_IN'])", "relation_types", ("FOUGHT_IN",)),
        ("document('d1')", "document_ids", "d1"),
        ("entity('Rme')", "suggestions", "Rme"),
        ("entity(['Rome', 'Rme'])", "suggestions", "Rme"),
    ],
)
def test_a_missing_fact_is_reported_by_name_before_anything_is_recorded(
    text: str, kind: str, ask: object
) -> None:
    res = Resolution(ids={"Rome": ["rome"], "Rme": []})
    with pytest.raises(MissingNameFact) as raised:
        leaf(text).resolve(res)
    assert (raised.value.kind, raised.value.ask) == (kind, ask)
    assert kind in str(raised.value) and repr(ask) in str(raised.value)
    assert (res.reasons, res.partial, res.explained) == ({}, [], 0)


def test_a_diagnosed_explanation_names_the_diagnosis_it_lacks() -> None:
    res = Resolution(ids={"Rme": []}, facts={("suggestions", 0): ()}, diagnose=True)
    with pytest.raises(MissingNameFact) as raised:
        res.first_unknown(["Rme"])
    assert (raised.value.kind, raised.value.key) == ("schema_mismatch", 0)
    res.facts[("schema_mismatch", 0)] = None
    with pytest.raises(MissingNameFact) as raised:
        res.first_unknown(["Rme"])
    assert (raised.value.kind, raised.value.key) == ("fulltext_missing", 0)
    res.facts[("fulltext_missing", 0)] = "no full-text index"
    why = res.first_unknown(["Rme"])
    assert why is not None and why.message == f"no entity named 'Rme' {NO_SUCH}; no full-text index"


class Reader:
    """A reader that records what it is asked, in order."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, object]] = []

    def entity_ids_many(self, names: list[str]) -> dict[str, list[str]]:
        self.asked.append(("entity_ids_many", tuple(names)))
        return {n: ["rome"] if n == "Rome" else [] for n in names}

    def resolve_types(self, types: tuple[str, ...]) -> tuple[list[str], list[str]]:
        self.asked.append(("resolve_types", types))
        return [], list(types)

    def close_types(self, name: str) -> list[str]:
        self.asked.append(("close_types", name))
        return ["FOUGHT_IN"]

    def document_ids(self, name: str) -> list[str]:
        self.asked.append(("document_ids", name))
        return []

    def suggestions(self, name: str) -> list[str]:
        self.asked.append(("suggestions", name))
        return []


def test_the_edge_reads_each_fact_as_the_answers_need_it_in_their_order() -> None:
    reader = Reader()
    text = "hop('Rome', ['NOPE']) | document('d9') | entity('Xy') | near('Xy')"
    leaves = list(dict.fromkeys(parse(text).leaves()))
    res = NameResolution.fetch(reader, ["Rome", "Xy"])
    resolved = [res.resolve(lf) for lf in leaves]
    assert all(r.empty for r in resolved) and len(res.reasons) == 4
    assert reader.asked == [
        ("entity_ids_many", ("Rome", "Xy")),
        ("resolve_types", ("NOPE",)),
        ("close_types", "NOPE"),
        ("document_ids", "d9"),
        ("suggestions", "Xy"),  # per explanation, as before: the Resolver keeps the answer
        ("suggestions", "Xy"),
    ]
    again = NameResolution.fetch(reader, ["Rome"])
    asked = len(reader.asked)
    assert leaves[0].resolve(again).empty  # a leaf resolves itself through the edge too
    assert reader.asked[asked:] == [("resolve_types", ("NOPE",)), ("close_types", "NOPE")]
    assert res.first_unknown(["Rome", "Zz"]) is not None  # a name not fetched: read then
    assert reader.asked[-2:] == [("entity_ids_many", ("Zz",)), ("suggestions", "Zz")]
