"""Weighted tiers (``boost``, issue 11): the AST, its three forms, validation, compilation, and a
differential test of the Cypher tier lists against the pure-Python evaluator on generated graphs.
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.errors import SelectionError, SelectionSyntaxError
from guidedrag_graph.migration.run import migrate
from guidedrag_graph.schema.presets import PRESETS
from guidedrag_graph.selection import (
    Boost,
    Selector,
    Tier,
    all_,
    boost,
    entity,
    from_json,
    hop,
    near,
    parse,
)
from guidedrag_graph.selection.compiler import compile_plan
from guidedrag_graph.selection.evaluator import (
    InMemoryGraph,
    evaluate,
    evaluate_boost,
    evaluate_tiers,
)
from guidedrag_graph.testing.memory_graph import load_graph
from tests.conftest import _wipe_nodes, wipe
from tests.test_selection_compile import identity_resolution
from tests.test_selection_differential import expressions, graphs, settings_for

E, N = entity("x"), near("x")


def test_builders_and_equality() -> None:
    a = boost((E, 0.2), (N, 0.05))
    assert a == boost({E: 0.2, N: 0.05}) == boost(Tier(E, 0.2, "E"), Tier(N, 0.05, "near"))
    assert a == Boost((Tier(E, 0.2), Tier(N, 0.05)))
    assert a.tiers[0].weight == 0.2 and isinstance(boost((E, 1)).tiers[0].weight, float)
    assert boost(Tier(E, 0.2, "E")).tiers[0].label == "E"
    assert boost((E, 0.2)).tiers[0].label == "entity('x')"
    assert hash(boost(Tier(E, 0.2, "E"))) == hash(boost((E, 0.2)))  # names are not identity
    assert a.children() == (E, N)


def test_dsl_text_and_json_round_trip() -> None:
    text = "boost(entity('x'): 0.2, near('x'): 0.05)"
    expr = parse(text)
    assert expr == boost((E, 0.2), (N, 0.05))
    assert expr.to_text() == text
    assert parse("boost(entity('x') | hop('x', ['R']): 1, all(): 0.0,)") == boost(
        (E | hop("x", ["R"]), 1.0), (all_(), 0.0)
    )
    assert parse("boost(entity('x'): 1e-05)").to_text() == "boost(entity('x'): 1e-05)"
    named = boost(Tier(E, 0.2, "E"), (N, 0.05))
    data = json.loads(json.dumps(named.to_json()))
    assert data == {
        "op": "boost",
        "tiers": [
            {"expr": {"op": "entity", "name": "x"}, "weight": 0.2, "name": "E"},
            {"expr": {"op": "near", "name": "x", "depth": 1}, "weight": 0.05},
        ],
    }
    back = from_json(data)
    assert back == named and isinstance(back, Boost) and back.tiers[0].label == "E"


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        (lambda: boost((E, 0.2)) & E, "must be the whole selection, not part of '&'"),
        (lambda: E | boost((E, 0.2)), "must be the whole selection, not part of '|'"),
        (lambda: boost((boost((E, 0.2)), 0.1)), "cannot be a tier of another boost"),
        (lambda: boost((E, -0.1)), "finite and >= 0"),
        (lambda: boost((E, math.nan)), "finite and >= 0"),
        (lambda: boost((E, math.inf)), "finite and >= 0"),
        (lambda: boost((E, True)), "is a number"),
        (lambda: boost((E, "0.2")), "is a number"),
        (lambda: boost(), "at least one tier"),
    ],
)
def test_validation(make: object, fragment: str) -> None:
    with pytest.raises(SelectionError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        make()  # type: ignore[operator]


@pytest.mark.parametrize(
    ("text", "column", "fragment"),
    [
        ("boost(entity('x'): 0.2) & entity('y')", 25, "must be the whole selection"),
        ("entity('y') | boost(entity('x'): 0.2)", 13, "must be the whole selection"),
        ("boost(entity('x'))", 18, "expected ':'"),
        ("boost(entity('x'): 'a')", 20, "expected a weight"),
        ("boost()", 1, "at least one tier"),
        ("boost(boost(entity('x'): 1): 1)", 7, "cannot be a tier"),
    ],
)
def test_dsl_errors_point_at_the_problem(text: str, column: int, fragment: str) -> None:
    with pytest.raises(SelectionSyntaxError) as info:
        parse(text)
    assert info.value.column == column, str(info.value)
    assert fragment in str(info.value)


def test_json_rejects_bad_tiers() -> None:
    for bad in (
        {"op": "boost"},
        {"op": "boost", "tiers": []},
        {"op": "boost", "tiers": [{"expr": {"op": "all"}}]},
        {"op": "boost", "tiers": [{"expr": {"op": "all"}, "weight": -1}]},
        {"op": "boost", "tiers": "x"},
    ):
        with pytest.raises(SelectionError):
            from_json(bad)


def test_compiles_each_tier_once_ordered_by_weight() -> None:
    schema = PRESETS["guidedrag"]
    expr = boost((N, 0.05), (E, 0.2), (E | N, 0.1), (E, 0.0))
    plan = compile_plan(expr, identity_resolution(expr), schema, hop_cap=100)
    compiled = plan.selection(schema)
    assert compiled.is_boost and not compiled.is_all
    assert [t.weight for t in compiled.tiers] == [0.2, 0.1, 0.05, 0.0]
    assert [t.name for t in compiled.tiers] == [
        "entity('x')",
        "entity('x') | near('x')",
        "near('x')",
        "entity('x')",
    ]
    # E and N each once, their union once: three subquery results, four tiers sharing them.
    assert compiled.prelude.count("CALL ()") == 2
    assert compiled.tiers[0].list_variable == compiled.tiers[3].list_variable
    assert compiled.params["sel_boost_weights"] == [0.2, 0.1, 0.05, 0.0]
    assert compiled.params["sel_boost_names"] == [t.name for t in compiled.tiers]
    lists = ", ".join(t.list_variable for t in compiled.tiers)
    assert f"UNWIND [{lists}][boost_i] AS c" in compiled.boosted
    assert compiled.cypher.startswith(compiled.prelude)
    assert compiled.cypher.rstrip().endswith("MATCH (c:`Chunk`)")


def test_evaluator_reference() -> None:
    g = InMemoryGraph()
    g.chunks = {"c1": "d", "c2": "d", "c3": "d"}
    from guidedrag_graph.selection.evaluator import EntityRec

    g.entities = {"x": EntityRec("x", "x"), "y": EntityRec("y", "y")}
    g.mentions = {("c1", "x"), ("c2", "y"), ("c1", "y")}
    expr = boost((entity("y"), 0.1), (entity("x"), 0.3), (entity("x"), 0.3), (all_(), 0.0))
    assert evaluate(expr, g) == {"c1", "c2", "c3"}
    assert evaluate_boost(expr, g) == {"c1": 0.3, "c2": 0.1}
    assert evaluate_tiers(expr, g) == {
        "c1": (0.3, "entity('x')"),
        "c2": (0.1, "entity('y')"),
        "c3": (0.0, "all()"),
    }


# --- database: the Cypher tier lists equal the evaluator ---------------------------------------

weights = st.sampled_from([0.0, 0.05, 0.1, 0.2, 0.2, 1.0])
boosts = st.lists(st.tuples(expressions, weights), min_size=1, max_size=4).map(
    lambda tiers: Boost(tuple(Tier(e, w) for e, w in tiers))
)


@pytest.mark.slow
def test_boost_cypher_equals_evaluator(driver: Driver, settings: Settings) -> None:
    schema = PRESETS["guidedrag"]
    wipe(driver)
    migrate(driver, settings, schema)
    seen = {"examples": 0}

    @settings_for(60)
    @given(graph=graphs(), expr=boosts)
    def check(graph: InMemoryGraph, expr: Boost) -> None:
        _wipe_nodes(driver)
        load_graph(graph, driver, schema)
        selector = Selector(GraphContext.open(settings, driver, schema))
        got = selector.boosts(expr)
        expected = evaluate_tiers(expr, graph, hop_cap=settings.hop_cap)
        assert got == expected, (expr.to_text(), selector.prepare(expr).compiled.boosted)
        assert {c: b for c, (b, _) in got.items() if b > 0} == evaluate_boost(
            expr, graph, hop_cap=settings.hop_cap
        )
        assert set(selector.chunk_ids(expr)) == set(graph.chunks)  # the set is U
        assert selector.sizes(expr).size == len(graph.chunks)
        seen["examples"] += 1

    check()
    wipe(driver)
    assert seen["examples"] >= 60


@hsettings(max_examples=200, deadline=None)
@given(boosts)
def test_boost_round_trips(expr: Boost) -> None:
    assert parse(expr.to_text()) == expr
    assert from_json(json.loads(json.dumps(expr.to_json()))) == expr
