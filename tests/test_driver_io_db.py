"""What ``driver_io`` relies on in the pinned neo4j driver, on a real server: a running read is
cut off through its session's connection (and the server ends its transaction), long lists go
over Bolt unchanged but unformatted, and ``row`` is ``Record.data()`` for every kind of value.
A driver release that moves what these rely on fails here, not silently in production."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import pytest
from neo4j import READ_ACCESS, Driver, Query, Record
from neo4j.exceptions import DriverError, Neo4jError

from guidedrag_graph.config import Settings
from guidedrag_graph.db import connection as db
from guidedrag_graph.db.deadline import TICK_S, DeadlinePassed
from guidedrag_graph.db.driver_io import _CUT_THREADS, ReadCut, UnloggedList, cut_off, row, unlogged
from guidedrag_graph.testing.selection_fuzz import running_transactions

# Runs for minutes unless it is stopped: what a read looks like to a client whose server is late.
LONG = "UNWIND range(1, 2000000000) AS x WITH x WHERE x < 0 RETURN count(*) AS n"
MARK = "guidedrag-deadline-probe"


def _running(driver: Driver) -> list[dict[str, Any]]:
    return [t for t in running_transactions(driver) if MARK in (t["query"] or "")]


def _gone(driver: Driver, within_s: float = 10.0) -> bool:
    until = time.monotonic() + within_s
    while time.monotonic() < until:
        if not _running(driver):
            return True
        time.sleep(0.1)
    return False


def test_a_running_read_is_cut_off_through_its_session(driver: Driver) -> None:
    with driver.session(default_access_mode=READ_ACCESS) as session, ReadCut() as read:
        read.session = session
        cut: list[bool] = []

        def cut_once_running() -> None:  # the server runs it: the session holds its connection
            until = time.monotonic() + 10
            while not _running(driver) and time.monotonic() < until:
                time.sleep(0.05)
            cut.append(cut_off(read))

        cutter = threading.Thread(target=cut_once_running, daemon=True)
        cutter.start()
        t0 = time.monotonic()
        with pytest.raises((DriverError, Neo4jError, OSError)):  # what _read_once catches
            list(session.run(Query(f"{LONG} // {MARK}", timeout=60)))
        took = time.monotonic() - t0
        cutter.join(5)
    assert cut == [True], "cut_off found no socket: the driver moved its session's connection"
    assert not _CUT_THREADS, "the read's thread stayed quieted after it returned"
    assert took < 12, took
    assert _gone(driver), "the server kept the transaction of a client that went away"
    assert driver.execute_query("RETURN 1 AS x").records[0]["x"] == 1


def test_a_read_past_its_deadline_is_deadline_passed(
    driver: Driver, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """The server would run it for 60 s; the read's own deadline (0.5 s) cuts it off, and the
    driver's ERROR line about the connection we cut is not printed beside our error."""
    query = Query(f"{LONG} // {MARK}", timeout=60)
    t0 = time.monotonic()
    with caplog.at_level(logging.WARNING), pytest.raises(DeadlinePassed):
        db._read_once(driver, query, {}, settings.neo4j_database, 0.5)
    took = time.monotonic() - t0
    assert 0.45 <= took < 0.5 + 20 * TICK_S, took
    assert not [r.getMessage() for r in caplog.records if r.name.startswith("neo4j")]
    assert not _CUT_THREADS, "a cut read's thread stayed quieted"
    assert _gone(driver)
    assert db.read_query(driver, "RETURN 2 AS x", database=settings.neo4j_database) == [{"x": 2}]


def test_cut_off_before_any_connection_finds_nothing(driver: Driver) -> None:
    with ReadCut() as read:
        assert cut_off(read) is False  # no session yet
        with driver.session() as session:  # no query yet: no connection held
            read.session = session
            assert cut_off(read) is False


def test_long_lists_go_over_bolt_unchanged_and_unformatted(
    driver: Driver, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    vector = [i / 7 for i in range(384)]
    params = unlogged({"v": vector, "ids": ("a", "b"), "k": 5})
    assert type(params["v"]) is UnloggedList and params["v"] == vector
    assert params["ids"] == ("a", "b") and params["k"] == 5  # short: as they were
    assert repr(params["v"]) == "<list of 384>"
    with caplog.at_level(logging.DEBUG, logger="neo4j"):
        rows = db.read_query(
            driver,
            "RETURN $v AS v, size($v) AS n",
            {"v": vector},
            database=settings.neo4j_database,
        )
    assert rows == [{"v": vector, "n": 384}]
    runs = [r.getMessage() for r in caplog.records if " RUN " in r.getMessage()]
    assert runs and all("<list of 384>" in m for m in runs), runs
    assert not any(repr(vector[1]) in m for m in runs), "the vector was formatted for the log"


def test_row_is_record_data_for_every_kind_of_value(driver: Driver) -> None:
    query = """
    CREATE (a:DriverIoProbe {name: 'a', tags: ['x', 'y']})-[r:PROBES {w: 0.5}]->(b:DriverIoProbe)
    WITH a, r, b
    MATCH p = (a)-[:PROBES]->(b)
    RETURN 'text' AS s, 1 AS i, 0.25 AS f, true AS t, null AS z, [1, 2] AS ints, [] AS empty,
           [[1], [2]] AS nested, {k: 'v', n: [1]} AS map, date('2024-01-02') AS day,
           [date('2024-01-02')] AS days, a AS node, r AS rel, p AS path, [a] AS nodes
    """
    try:
        records, _, _ = driver.execute_query(query)
        record = records[0]
        assert row(record) == record.data()
        for key, value in record.items():  # each alone: the short way or data(), one dict
            single = Record([(key, value)])
            assert row(single) == single.data(), key
        scalars = driver.execute_query("RETURN 'a' AS s, [1, 2.5, null] AS l").records[0]
        assert row(scalars) == scalars.data() == {"s": "a", "l": [1, 2.5, None]}
    finally:
        driver.execute_query("MATCH (n:DriverIoProbe) DETACH DELETE n")


def test_a_write_batch_goes_unformatted(
    driver: Driver, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """The loader's batches (chunk rows with their embeddings) are handed over unlogged too."""
    from guidedrag_graph.kb.batch_writes import BatchWriter
    from guidedrag_graph.kb.load_report import LoadReport

    report = LoadReport(bundle="probe", schema_preset="default", counts={})
    writer = BatchWriter(driver, settings.neo4j_database, report)
    rows = [{"name": f"probe {i}", "v": [i / 3] * 8} for i in range(40)]
    try:
        with caplog.at_level(logging.DEBUG, logger="neo4j"):
            writer.write(
                "UNWIND $rows AS row CREATE (:DriverIoProbe {name: row.name, v: row.v})", rows
            )
        runs = [r.getMessage() for r in caplog.records if " RUN " in r.getMessage()]
        assert runs and all("<list of 40>" in m for m in runs), runs
        assert not any("probe 7" in m for m in runs), "the batch was formatted for the log"
        assert report.nodes_created == 40
    finally:
        driver.execute_query("MATCH (n:DriverIoProbe) DETACH DELETE n")
