"""Issue 10 against the real server: the transaction timeout stops a runaway query server-side
(D1), many entity names run as one list, entity([...]) resolves each name, and hostile text is
refused before the driver sees it (D4)."""

from __future__ import annotations

import time

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.db.connection import (
    DEFAULT_QUERY_TIMEOUT,
    query_timeout,
    read_query,
    set_query_timeout,
)
from guidedrag_graph.errors import QueryTimeoutError, SelectionError
from guidedrag_graph.selection import Selector, entity, parse
from guidedrag_graph.selection.evaluator import evaluate
from tests.conftest import sample_bundle
from tests.test_selection_templates import sample_graph

# Counts to 2e9 in Cypher: minutes of CPU, unless the server stops it.
SLOW = "UNWIND range(1, 2000000000) AS x WITH x WHERE x % 7 = 1234567 RETURN count(*) AS n"


def running(driver: Driver, marker: str) -> list[str]:
    rows = driver.execute_query(
        "SHOW TRANSACTIONS YIELD transactionId, currentQuery, status "
        "RETURN transactionId, currentQuery, status"
    ).records
    return [str(r["transactionId"]) for r in rows if marker in (r["currentQuery"] or "")]


def test_runaway_query_dies_server_side(driver: Driver) -> None:
    started = time.monotonic()
    with pytest.raises(QueryTimeoutError, match="GUIDEDRAG_QUERY_TIMEOUT"):
        read_query(driver, SLOW, database="neo4j", timeout=1.0)
    assert time.monotonic() - started < 30
    deadline = time.monotonic() + 10
    while running(driver, "2000000000") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert running(driver, "2000000000") == []


def test_driver_timeout_applies_without_an_argument(driver: Driver) -> None:
    assert query_timeout(driver) == DEFAULT_QUERY_TIMEOUT
    set_query_timeout(driver, 1.0)
    try:
        with pytest.raises(QueryTimeoutError):
            read_query(driver, SLOW, database="neo4j")
    finally:
        set_query_timeout(driver, DEFAULT_QUERY_TIMEOUT)


def test_a_call_budget_bounds_its_queries_together(driver: Driver) -> None:
    """Inside a call budget each read gets what is left, as its server timeout too: the slow
    query is stopped at the budget's end, not a whole timeout after it began, and a call that
    spent its budget does not send its next query."""
    from guidedrag_graph.db.deadline import GRACE_S, call_budget

    started = time.monotonic()
    with call_budget(1.5), pytest.raises(QueryTimeoutError):
        time.sleep(0.5)
        read_query(driver, SLOW, database="neo4j", timeout=30)
    assert time.monotonic() - started < 1.5 + GRACE_S + 0.5
    with call_budget(0.2), pytest.raises(QueryTimeoutError, match="spent its"):
        time.sleep(0.3)
        read_query(driver, "RETURN 'budget-spent-marker' AS x", database="neo4j")
    deadline = time.monotonic() + 10
    while running(driver, "2000000000") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert running(driver, "2000000000") == []


def test_selector_runs_are_budgeted_as_one_call(sample_db: Driver, settings: Settings) -> None:
    """``Selector.chunk_ids`` resolves names, counts degrees and runs the selection: all of it
    within GUIDEDRAG_QUERY_TIMEOUT (here the resolution alone outlasts a tiny budget)."""
    tiny = settings.model_copy(update={"query_timeout": 0.001})
    graph = GraphContext.open(tiny, sample_db)
    with pytest.raises(QueryTimeoutError):
        Selector(graph).chunk_ids(entity(sorted(e.name for e in sample_bundle().entities)[0]))


def test_many_entity_names_run_as_one_list(sample_db: Driver, settings: Settings) -> None:
    names = sorted({e.name for e in sample_bundle().entities})[:300]
    roomy = settings.model_copy(update={"max_terms": 400})
    selector = Selector(GraphContext.open(roomy, sample_db))
    union = parse(" | ".join(entity(n).to_text() for n in names), selector.limits)
    prep = selector.prepare(union)
    assert prep.compiled.cypher.count("CALL ()") == 1
    graph = sample_graph()
    expected = evaluate(union, graph)
    assert set(selector.chunk_ids(prep)) == expected
    listed = entity(names)
    assert set(selector.chunk_ids(listed)) == expected == evaluate(listed, graph)


def test_entity_list_resolves_each_name(sample_db: Driver, settings: Settings) -> None:
    selector = Selector(GraphContext.open(settings, sample_db))
    graph = sample_graph()
    expr = entity(["euro", "EURO", "no such entity at all"])
    prep = selector.prepare(expr)
    assert prep.empty is None
    assert [w.term for w in prep.warnings] == ["entity('no such entity at all')"]
    assert set(selector.chunk_ids(prep)) == evaluate(expr, graph) != set()
    nothing = selector.prepare(entity(["no such entity", "nor this"]))
    assert nothing.empty is not None and nothing.empty.kind == "unknown_entity"
    assert selector.chunk_ids(nothing) == []


def test_hostile_text_never_reaches_the_driver(sample_db: Driver, settings: Settings) -> None:
    selector = Selector(GraphContext.open(settings, sample_db))
    for bad in ("entity('\udcff')", entity("\ud800"), entity(["ok", "\ud800"])):
        with pytest.raises(SelectionError, match="lone surrogate"):
            selector.chunk_ids(bad)
    with pytest.raises(SelectionError, match="lone surrogate"):
        selector.resolver.entity_ids("\ud800")
    with pytest.raises(SelectionError, match="GUIDEDRAG_MAX_STRING"):
        selector.sizes("category('" + "A" * 100_000 + "')")
