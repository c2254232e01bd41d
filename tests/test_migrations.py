"""Migrations against the real server: once each, reruns are no-ops, edits are caught."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.db.connection import server_info
from guidedrag_graph.errors import MigrationError
from guidedrag_graph.migration.run import discover, migrate, status
from guidedrag_graph.resources import migrations_dir
from guidedrag_graph.schema.presets import PRESETS

GUIDEDRAG = PRESETS["guidedrag"]


def _index_states(driver: Driver) -> dict[str, str]:
    records = driver.execute_query("SHOW INDEXES YIELD name, state").records
    return {r["name"]: r["state"] for r in records}


def test_migrations_apply_once_and_rerun_is_noop(blank_db: Driver, settings: Settings) -> None:
    first = migrate(blank_db, settings, GUIDEDRAG)
    states = status(blank_db, settings)
    applicable = [s for s in states if s.state != "not-for-this-server"]
    assert [m.version for m in first] == [s.migration.version for s in applicable]
    assert all(s.state == "applied" for s in applicable)
    recorded = blank_db.execute_query(
        "MATCH (m:__GuidedRAGMigration) RETURN m.version AS v, m.checksum AS c ORDER BY v"
    ).records
    assert [r["v"] for r in recorded] == [m.version for m in first]
    assert [r["c"] for r in recorded] == [m.checksum for m in first]

    assert migrate(blank_db, settings, GUIDEDRAG) == []
    again = blank_db.execute_query("MATCH (m:__GuidedRAGMigration) RETURN count(m) AS n")
    assert again.records[0]["n"] == len(first)

    indexes = _index_states(blank_db)
    assert indexes["chunk_embedding"] == "ONLINE"
    assert indexes["entity_names"] == "ONLINE"


def test_edited_applied_migration_is_an_error_naming_the_file(
    blank_db: Driver, settings: Settings, tmp_path: Path
) -> None:
    folder = tmp_path / "migrations"
    shutil.copytree(migrations_dir(), folder)
    migrate(blank_db, settings, GUIDEDRAG, folder)
    edited = folder / "V0002__entity_lookup_indexes.cypher"
    original = edited.read_text()
    # The checksum is over the statements: a comment is not an edit, a changed statement is.
    edited.write_text(original + "\n// an innocent-looking comment\n")
    assert {s.migration.version: s.state for s in status(blank_db, settings, folder)}[2] == (
        "applied"
    )
    edited.write_text(original.replace("IF NOT EXISTS", "IF  NOT EXISTS", 1))
    with pytest.raises(MigrationError, match=r"V0002__entity_lookup_indexes\.cypher"):
        migrate(blank_db, settings, GUIDEDRAG, folder)
    assert {s.migration.version: s.state for s in status(blank_db, settings, folder)}[2] == (
        "modified"
    )


def test_migration_files_run_as_written(blank_db: Driver) -> None:
    """Two-way files: after their ``:param`` lines each statement runs in Browser as written
    (slot comments and all), on the default schema."""
    server = server_info(blank_db)
    for migration in discover():
        if not migration.applies_to(server):
            continue
        lines = migration.text.splitlines()
        params = {
            name: blank_db.execute_query(f"RETURN {value} AS v").records[0]["v"]
            for name, value in (
                re.match(r":param (\w+) => (.*);$", line).groups()  # type: ignore[union-attr]
                for line in lines
                if line.startswith(":param")
            )
        }
        body = "\n".join(line for line in lines if not line.startswith((":param", "//")))
        for statement in filter(None, (s.strip() for s in body.split(";"))):
            blank_db.execute_query(statement, params)


def test_migration_files_are_well_formed() -> None:
    migrations = discover()
    assert [m.version for m in migrations] == sorted({m.version for m in migrations})
    for migration in migrations:
        for statement in migration.statements(GUIDEDRAG):
            assert "{{" not in statement and "}}" not in statement


def _nearest(driver: Driver, query: list[float]) -> tuple[str, str]:
    # With the server's default quantization (5.26: int8) this returned 'north' for a query
    # next to 'down'; the migration turns quantization off, which this test guards.
    by_index = driver.execute_query(
        "CALL db.index.vector.queryNodes('chunk_embedding', 1, $q) YIELD node, score "
        "RETURN node.id AS id",
        q=query,
    ).records[0]["id"]
    by_cosine = driver.execute_query(
        "MATCH (c:Chunk) RETURN c.id AS id "
        "ORDER BY vector.similarity.cosine(c.embedding, $q) DESC LIMIT 1",
        q=query,
    ).records[0]["id"]
    return str(by_index), str(by_cosine)


def test_vector_index_and_cosine_find_the_nearest_neighbour(
    blank_db: Driver, settings: Settings
) -> None:
    small = settings.model_copy(update={"embedding_dimensions": 4})
    migrate(blank_db, small, GUIDEDRAG)
    vectors = {
        "north": [0.0, 1.0, 0.0, 0.0],
        "east": [1.0, 0.0, 0.0, 0.0],
        "up": [0.0, 0.0, 1.0, 0.0],
        "northeast": [0.7, 0.7, 0.0, 0.1],
        "down": [0.0, 0.0, -1.0, 0.0],
    }
    blank_db.execute_query(
        "UNWIND $rows AS row CREATE (:Chunk {id: row.id, embedding: row.v})",
        rows=[{"id": k, "v": v} for k, v in vectors.items()],
    )
    blank_db.execute_query("CALL db.awaitIndexes(60)")
    assert _nearest(blank_db, [0.1, 0.9, 0.0, 0.0]) == ("north", "north")
    assert _nearest(blank_db, [0.6, 0.5, 0.05, 0.1]) == ("northeast", "northeast")
    assert _nearest(blank_db, [0.0, 0.1, -0.9, 0.0]) == ("down", "down")
    score = blank_db.execute_query(
        "RETURN vector.similarity.cosine([1.0, 0.0, 0.0, 0.0], [0.0, 0.0, -1.0, 0.0]) AS s"
    ).records[0]["s"]
    assert score == pytest.approx(0.5)  # Neo4j reports (1 + cos) / 2


class _Recording:
    """The real driver, keeping every query it was handed (text or ``neo4j.Query``)."""

    def __init__(self, driver: Driver) -> None:
        self._driver = driver
        self.sent: list[object] = []

    def execute_query(self, query: object, *args: object, **kwargs: object) -> object:
        self.sent.append(query)
        return self._driver.execute_query(query, *args, **kwargs)  # type: ignore[arg-type]

    def __getattr__(self, name: str) -> object:
        return getattr(self._driver, name)


def test_the_index_wait_runs_in_a_transaction_allowed_the_whole_wait(
    blank_db: Driver, settings: Settings
) -> None:
    """The managed server ends a transaction with no timeout of its own at the query timeout
    + 1 s (db.transaction.timeout): migrate's wait for index population (up to
    ``await_timeout_s``) must carry its own, or a vector index still populating after 31 s
    fails the migration."""
    from neo4j import Query

    recording = _Recording(blank_db)
    migrate(recording, settings, PRESETS["guidedrag"], await_timeout_s=600)  # type: ignore[arg-type]
    waits = [q for q in recording.sent if "awaitIndexes" in str(getattr(q, "text", q))]
    assert len(waits) == 1
    assert isinstance(waits[0], Query) and (waits[0].timeout or 0) >= 600
