"""Index names come from the settings, and switching preset on a migrated database re-creates the
indexes on the new labels instead of answering "up to date" over the old ones."""

from __future__ import annotations

from dataclasses import replace

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.migration.run import discover, migrate, status
from guidedrag_graph.schema.presets import PRESETS

pytestmark = pytest.mark.neo4j


def _indexes(driver: Driver) -> dict[str, list[str]]:
    rows = driver.execute_query(
        "SHOW INDEXES YIELD name, type, labelsOrTypes WHERE type <> 'LOOKUP' "
        "RETURN name, labelsOrTypes AS labels"
    ).records
    return {r["name"]: list(r["labels"]) for r in rows}


def test_switching_preset_recreates_indexes_on_the_new_labels(
    blank_db: Driver, settings: Settings
) -> None:
    first = migrate(blank_db, settings, PRESETS["guidedrag"])
    assert _indexes(blank_db)["guidedrag_entity_name_key"] == ["Entity"]
    switched = settings.model_copy(update={"schema_preset": "neo4j-graphrag"})
    again = migrate(blank_db, switched, PRESETS["neo4j-graphrag"])
    # the files whose statements differ under the new mapping ran again; the chunk vector index
    # (V0003/V0005: :Chunk(embedding) in both presets) was left alone
    assert [m.version for m in again] == [1, 2, 4, 6]
    assert {m.version for m in first} >= {1, 2, 4, 6}
    indexes = _indexes(blank_db)
    assert indexes["guidedrag_entity_name_key"] == ["__Entity__"]
    assert indexes["entity_names"] == ["__Entity__"]
    assert indexes["chunk_embedding"] == ["Chunk"]
    assert all(s.state in ("applied", "not-for-this-server") for s in status(blank_db, switched))
    assert migrate(blank_db, switched, PRESETS["neo4j-graphrag"]) == []  # now up to date


def test_index_names_follow_the_settings(blank_db: Driver, settings: Settings) -> None:
    named = settings.model_copy(
        update={
            "vector_index_name": "my_chunks",
            "entity_fulltext_index_name": "my_names",
            "entity_vector_index_name": "my_entity_vectors",
            "index_prefix": "kg",
        }
    )
    migrate(blank_db, named, PRESETS["guidedrag"])
    names = set(_indexes(blank_db))
    assert {"my_chunks", "my_names", "my_entity_vectors", "kg_entity_name_key"} <= names
    assert not {n for n in names if n.startswith("guidedrag_") or n == "chunk_embedding"}
    # renaming later replaces the indexes rather than leaving both
    renamed = named.model_copy(update={"vector_index_name": "chunks_v2"})
    migrate(blank_db, renamed, PRESETS["guidedrag"])
    names = set(_indexes(blank_db))
    assert "chunks_v2" in names and "my_chunks" not in names


# sha256 of the files as released before they became two-way templates (and, for 1-6, before
# index names became placeholders): databases migrated then recorded these.
RELEASED_CHECKSUMS = {
    1: "1f3faecf094c59368ec2c7318762de14d0bf553f8fe6f3e53b42bf021c943afd",
    2: "cdfb9742762d9320a7256cb0e698080408a7d6d42140c79a67d0342178c96499",
    3: "17f1be8b9a98e753036b116a873aaa30d9edd4278497b7c2d46b61b094872f8a",
    4: "2589e6b150d4cb8678bac37aa0a205fafc5910e1c0188e252b192734758fde85",
    5: "1473df48504bddfb2cb18e018157ba078425b8210226a61f4f1ab242a87af26c",
    6: "de0f394d87c07538487daac4350768db7769aa35a1ce8fcaf9968c166af2477f",
}


def test_released_checksums_are_accepted_for_the_unchanged_files() -> None:
    migrations = {m.version: m for m in discover()}
    for version, checksum in RELEASED_CHECKSUMS.items():
        migration = migrations[version]
        assert migration.checksum != checksum, version  # now over the canonical statements
        assert migration.accepts(checksum), version
        assert migration.accepts(migration.checksum), version
        assert not migration.accepts(RELEASED_CHECKSUMS[version % 6 + 1]), version
    v2 = migrations[2]
    edited = replace(v2, text=v2.text.replace("IF NOT EXISTS", "IF  NOT EXISTS", 1))
    assert not edited.accepts(RELEASED_CHECKSUMS[2])  # a released record of an edited file


def test_a_database_migrated_before_the_two_way_files_shows_applied(
    blank_db: Driver, settings: Settings
) -> None:
    migrate(blank_db, settings, PRESETS["guidedrag"])
    blank_db.execute_query(
        "UNWIND $rows AS row MATCH (m:__GuidedRAGMigration {version: row.v}) "
        "SET m.checksum = row.c",
        rows=[{"v": v, "c": c} for v, c in RELEASED_CHECKSUMS.items()],
    )
    states = status(blank_db, settings)
    assert all(s.state in ("applied", "not-for-this-server") for s in states)
    assert any(s.state == "applied" for s in states)
    assert migrate(blank_db, settings, PRESETS["guidedrag"]) == []


def test_element_id_fields_skip_their_constraints() -> None:
    v1 = next(m for m in discover() if m.version == 1)
    statements = v1.statements(PRESETS["neo4j-graphrag-builder"])
    assert len(statements) == 1 and "__GuidedRAGMigration" in statements[0]
