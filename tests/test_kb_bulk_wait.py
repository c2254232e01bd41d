"""``load --bulk``'s wait for its indexes: progress while they populate, one line when the wait
runs out (the data is in; the index goes on populating), at once when one FAILED."""

from __future__ import annotations

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.kb import bulk
from guidedrag_graph.schema.presets import PRESETS
from tests.conftest import wipe


def test_index_population_lists_the_indexes_not_yet_online() -> None:
    rows = [
        {"name": "guidedrag_chunk_id", "state": "ONLINE", "percent": 100.0},
        {"name": "chunk_embedding", "state": "POPULATING", "percent": 41.5},
        {"name": "entity_names", "state": "POPULATING", "percent": None},
    ]
    assert bulk.index_population(rows) == [("chunk_embedding", 41.5), ("entity_names", 0.0)]
    assert bulk.index_population(rows[:1]) == []


def test_a_failed_index_ends_the_wait_at_once() -> None:
    rows = [
        {"name": "chunk_embedding", "state": "FAILED", "percent": 12.0},
        {"name": "entity_names", "state": "POPULATING", "percent": 50.0},
    ]
    with pytest.raises(ConfigurationError, match="index 'chunk_embedding' FAILED"):
        bulk.index_population(rows)


def test_the_wait_running_out_is_one_line_that_says_how_to_check() -> None:
    line = bulk.still_populating([("chunk_embedding", 63.4)], 3600.2)
    assert "\n" not in line
    assert "'chunk_embedding' (63%)" in line and "after 3600s" in line
    assert "imported" in line and "guidedrag kb stats" in line


def test_index_names_from_the_database_are_quoted_in_every_line() -> None:
    hostile = "idx\nCREATE (:Pwned)"
    line = bulk.still_populating([(hostile, 5.0)], 10.0)
    assert "\n" not in line and "'idx\\x0aCREATE (:Pwned)' (5%)" in line
    with pytest.raises(ConfigurationError) as failed:
        bulk.index_population([{"name": hostile, "state": "FAILED", "percent": 1.0}])
    assert "\n" not in str(failed.value) and "'idx\\x0aCREATE (:Pwned)'" in str(failed.value)


def test_wait_online_returns_once_a_new_vector_index_is_online(
    driver: Driver, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a real server: a vector index created over a few thousand vectors is waited for (a
    progress line at every look while it populates) until SHOW INDEXES says ONLINE."""
    wipe(driver)
    driver.execute_query(
        "UNWIND range(1, 3000) AS i CREATE (:WaitProbe {v: [j IN range(1, 64) | sin(i * j)]})"
    )
    driver.execute_query(
        "CREATE VECTOR INDEX wait_probe FOR (n:WaitProbe) ON n.v "
        "OPTIONS {indexConfig: {`vector.dimensions`: 64, `vector.similarity_function`: 'cosine'}}"
    )
    lines: list[str] = []
    monkeypatch.setattr(bulk, "PROGRESS_S", 0.0)
    waited = bulk._wait_online(driver, settings, PRESETS["guidedrag"], progress=lines.append)
    states = driver.execute_query("SHOW INDEXES YIELD name, state WHERE name = 'wait_probe'")
    assert [r["state"] for r in states.records] == ["ONLINE"]
    assert waited >= 0 and all(line.startswith("indexes populating after") for line in lines)
    wipe(driver)
