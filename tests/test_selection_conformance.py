"""The selection conformance suite (``guidedrag_graph.testing``) against both backends:
the pure-Python evaluator (the fast loop, no Neo4j) and the Cypher backend (each graph loaded
into the real Neo4j, every expression resolved and compiled through ``Selector``), the latter in
the three schema variants. The property-based comparison of the two is
``tests/test_selection_differential.py``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.migration.run import migrate
from guidedrag_graph.schema.presets import PRESETS, SchemaMapping
from guidedrag_graph.selection import Boost, Expr, Selector
from guidedrag_graph.selection import nodes as A
from guidedrag_graph.selection.evaluator import evaluate, evaluate_tiers, hit_cap
from guidedrag_graph.testing.memory_graph import load_graph
from guidedrag_graph.testing.selection_conformance import (
    CASES,
    GRAPHS,
    TIER_CASES,
    SelectionAlgebraConformance,
)
from tests.conftest import _wipe_nodes, wipe

SCHEMAS: dict[str, SchemaMapping] = {
    "guidedrag-types": PRESETS["guidedrag"],
    "guidedrag-property": PRESETS["guidedrag"].model_copy(update={"relation_mode": "property"}),
    "graphrag-types": PRESETS["neo4j-graphrag"],
}


class EvaluatorBackend:
    def select(self, graph: str, expr: Expr, hop_cap: int) -> set[str]:
        return evaluate(expr, GRAPHS[graph](), hop_cap=hop_cap)

    def size(self, graph: str, expr: Expr, hop_cap: int) -> tuple[int, bool]:
        g = GRAPHS[graph]()
        return len(evaluate(expr, g, hop_cap=hop_cap)), hit_cap(expr, g, hop_cap=hop_cap)

    def tiers(self, graph: str, expr: Boost, hop_cap: int) -> dict[str, tuple[float, str]]:
        return evaluate_tiers(expr, GRAPHS[graph](), hop_cap=hop_cap)


class CypherBackend:
    """Loads a case's graph when it differs from the one in the database (cases are grouped by
    graph, so that is rare), then asks a ``Selector`` with the case's hop cap."""

    def __init__(self, driver: Driver, settings: Settings, schema: SchemaMapping) -> None:
        self.driver, self.settings, self.schema = driver, settings, schema
        self.loaded: str | None = None
        self.selectors: dict[int, Selector] = {}

    def selector(self, graph: str, hop_cap: int) -> Selector:
        if graph != self.loaded:
            _wipe_nodes(self.driver)
            load_graph(GRAPHS[graph](), self.driver, self.schema)
            self.loaded = graph
            self.selectors = {}
        if hop_cap not in self.selectors:  # one per graph and cap: its resolver caches types
            settings = self.settings.model_copy(update={"hop_cap": hop_cap})
            graph = GraphContext.open(settings, self.driver, self.schema)
            self.selectors[hop_cap] = Selector(graph)
        return self.selectors[hop_cap]

    def select(self, graph: str, expr: Expr, hop_cap: int) -> set[str]:
        return set(self.selector(graph, hop_cap).chunk_ids(expr))

    def size(self, graph: str, expr: Expr, hop_cap: int) -> tuple[int, bool]:
        tree = self.selector(graph, hop_cap).sizes(expr)
        return tree.size, tree.truncated

    def tiers(self, graph: str, expr: Boost, hop_cap: int) -> dict[str, tuple[float, str]]:
        return self.selector(graph, hop_cap).boosts(expr)


class TestEvaluator(SelectionAlgebraConformance):
    @pytest.fixture
    def backend(self) -> EvaluatorBackend:
        return EvaluatorBackend()


@pytest.fixture(scope="module", params=sorted(SCHEMAS))
def cypher_backend(
    request: pytest.FixtureRequest, driver: Driver, main_settings: Settings
) -> Iterator[CypherBackend]:
    schema = SCHEMAS[request.param]
    wipe(driver)
    migrate(driver, main_settings, schema)
    yield CypherBackend(driver, main_settings, schema)
    wipe(driver)


class TestCypher(SelectionAlgebraConformance):
    @pytest.fixture
    def backend(self, cypher_backend: CypherBackend) -> CypherBackend:
        return cypher_backend


def test_every_node_kind_has_a_case() -> None:
    """A new primitive or operator is not done until the table holds a case for it."""
    seen = {node.op for c in CASES for node in c.expression().walk()}
    seen |= {node.op for c in TIER_CASES for node in c.expression().walk()}
    assert seen >= set(A.NODE_TYPES), sorted(set(A.NODE_TYPES) - seen)


def test_cases_are_grouped_by_graph() -> None:
    """The Cypher backend loads a graph when the next case needs another one."""
    order = [c.graph for c in CASES]
    assert order == sorted(order, key=order.index)
