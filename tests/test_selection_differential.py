"""Differential, property-based: the compiled Cypher selects exactly what the reference does.

Hypothesis draws a small graph and an expression; the graph is loaded into the real Neo4j (one
database reused across examples: nodes wiped, indexes kept), and ``Selector.chunk_ids`` must
equal ``evaluate`` from the pure-Python evaluator. Names are drawn from a small pool with case,
space, alias and id collisions, plus unknown names and types, so resolution tiers, unknown terms
and every operator are exercised. Runs in all three schema variants.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.migration.run import migrate
from guidedrag_graph.schema.presets import PRESETS, SchemaMapping
from guidedrag_graph.selection import (
    Difference,
    Expr,
    Intersect,
    Selector,
    SymDiff,
    Union,
    all_,
    category,
    chunks,
    date,
    document,
    entity,
    hop,
    khop,
    near,
    source,
    type_,
)
from guidedrag_graph.selection.evaluator import DocumentRec, EntityRec, InMemoryGraph, evaluate
from guidedrag_graph.testing.memory_graph import load_graph
from tests.conftest import _wipe_nodes, wipe

pytestmark = pytest.mark.slow

NAMES = ["Rome", "rome", " ROME", "Gaul", "e1", "Caesar", "Ω omega", "`x`", "", "Atlantis"]
TYPES = ["CITY", "city", "PERSON"]
RELS = ["R", "S", "t u"]  # "t u" is stored as T_U and asked for by its text
SOURCES = ["wiki", "news"]
DATES = [None, dt.date(1999, 5, 1), dt.date(2005, 1, 1), dt.date(2020, 12, 31)]


@st.composite
def graphs(draw: st.DrawFn) -> InMemoryGraph:
    g = InMemoryGraph()
    n_docs = draw(st.integers(1, 3))
    for i in range(n_docs):
        g.documents[f"d{i}"] = DocumentRec(
            f"d{i}",
            draw(st.sampled_from(["T1", "T2"])),
            draw(st.sampled_from(SOURCES)),
            draw(st.sampled_from(DATES)),
        )
    for i in range(draw(st.integers(1, 8))):
        g.chunks[f"c{i}"] = f"d{draw(st.integers(0, n_docs - 1))}"
    n_ents = draw(st.integers(1, 6))
    for i in range(n_ents):
        g.entities[f"e{i}"] = EntityRec(
            f"e{i}",
            draw(st.sampled_from(NAMES[:-1])),
            tuple(draw(st.lists(st.sampled_from(NAMES[:-1]), max_size=2, unique=True))),
            draw(st.sampled_from([*TYPES, None])),
        )
    pairs = [(c, e) for c in g.chunks for e in g.entities]
    g.mentions = set(draw(st.lists(st.sampled_from(pairs), max_size=12)))
    ents = sorted(g.entities)
    triples = st.tuples(
        st.sampled_from(ents), st.sampled_from(["R", "S", "T_U"]), st.sampled_from(ents)
    )
    g.relations = set(draw(st.lists(triples, max_size=8)))
    return g


name = st.sampled_from(NAMES)
leaf: st.SearchStrategy[Expr] = st.one_of(
    st.builds(entity, name),
    st.builds(entity, name),  # twice as likely: unions of entities compile to one list
    st.builds(entity, st.lists(name, min_size=1, max_size=3)),
    st.builds(
        hop,
        name,
        st.lists(st.sampled_from([*RELS, "NOPE"]), min_size=1, max_size=2),
        st.integers(1, 3),
        st.sampled_from(["both", "out", "in"]),
    ),
    st.builds(khop, name, st.integers(1, 3)),
    st.builds(near, name, st.integers(1, 2)),
    st.builds(type_, st.sampled_from(TYPES)),
    st.builds(category, st.sampled_from(TYPES)),
    st.builds(document, st.sampled_from(["d0", "d1", "T1", "zz"])),
    st.builds(source, st.sampled_from(SOURCES)),
    st.builds(
        date, st.sampled_from([None, 2000, "2005-01-01"]), st.sampled_from([None, 2005, 2030])
    ),
    st.lists(st.sampled_from(["c0", "c1", "c2", "c9"]), max_size=3).map(lambda ids: chunks(*ids)),
    st.just(all_()),
)
expressions = st.recursive(
    leaf,
    lambda inner: st.one_of(
        st.builds(Union, inner, inner),
        st.builds(Intersect, inner, inner),
        st.builds(Difference, inner, inner),
        st.builds(SymDiff, inner, inner),
    ),
    max_leaves=5,
)

VARIANTS: dict[str, tuple[SchemaMapping, int]] = {
    "guidedrag-types": (PRESETS["guidedrag"], 150),
    "guidedrag-property": (
        PRESETS["guidedrag"].model_copy(update={"relation_mode": "property"}),
        40,
    ),
    "graphrag-types": (PRESETS["neo4j-graphrag"], 30),
}


@pytest.fixture(scope="module")
def fresh_db(driver: Driver) -> Iterator[Driver]:
    wipe(driver)
    yield driver
    wipe(driver)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_cypher_equals_evaluator(fresh_db: Driver, settings: Settings, variant: str) -> None:
    schema, examples = VARIANTS[variant]
    wipe(fresh_db)
    migrate(fresh_db, settings, schema)
    seen = {"examples": 0}

    @settings_for(examples)
    @given(graph=graphs(), exprs=st.lists(expressions, min_size=1, max_size=3))
    def check(graph: InMemoryGraph, exprs: list[Expr]) -> None:
        _wipe_nodes(fresh_db)
        load_graph(graph, fresh_db, schema)
        selector = Selector(GraphContext.open(settings, fresh_db, schema))
        for expr in exprs:
            expected = evaluate(expr, graph, hop_cap=settings.hop_cap)
            got = set(selector.chunk_ids(expr))
            assert got == expected, (expr.to_text(), selector.prepare(expr).compiled.cypher)
            if len(exprs) == 1:
                assert selector.sizes(expr).size == len(expected)
        seen["examples"] += 1

    check()
    assert seen["examples"] >= examples


def settings_for(examples: int):  # type: ignore[no-untyped-def]
    return hsettings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
