"""Issue 22, item 3 against the real server: migrations check their plan before they drop
anything, a failed re-run puts the previous indexes and constraints back, and ``migrate`` never
answers "up to date" over a missing index."""

from __future__ import annotations

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.errors import MigrationError
from guidedrag_graph.migration.run import migrate, status
from guidedrag_graph.schema.presets import PRESETS
from tests.security import schema_names

pytestmark = pytest.mark.neo4j
GUIDEDRAG = PRESETS["guidedrag"]


def test_an_index_name_of_an_existing_constraint_is_refused_before_any_drop(
    migrated_db: Driver, settings: Settings
) -> None:
    before = schema_names(migrated_db)
    clashing = settings.model_copy(update={"vector_index_name": "guidedrag_chunk_id"})
    with pytest.raises(MigrationError, match="guidedrag_chunk_id") as caught:
        migrate(migrated_db, clashing, GUIDEDRAG)
    message = str(caught.value)
    assert "GUIDEDRAG_VECTOR_INDEX_NAME" in message and "Nothing was changed" in message
    assert "\n" not in message
    assert schema_names(migrated_db) == before  # the uniqueness constraint is still there
    assert migrate(migrated_db, settings, GUIDEDRAG) == []  # and the records agree


def test_a_name_an_unrelated_object_holds_is_refused(
    migrated_db: Driver, settings: Settings
) -> None:
    migrated_db.execute_query("CREATE INDEX users_own_index FOR (p:Person) ON (p.name)")
    before = schema_names(migrated_db)
    clashing = settings.model_copy(update={"vector_index_name": "users_own_index"})
    with pytest.raises(MigrationError, match="already has a RANGE index of that name"):
        migrate(migrated_db, clashing, GUIDEDRAG)
    assert schema_names(migrated_db) == before


def test_a_failed_rerun_puts_the_previous_objects_back(
    migrated_db: Driver, settings: Settings
) -> None:
    # Two chunks share a position, so a uniqueness constraint on it cannot be created.
    migrated_db.execute_query(
        "CREATE (:Chunk {id: 'a', position: 1}), (:Chunk {id: 'b', position: 1})"
    )
    before = schema_names(migrated_db)
    remapped = GUIDEDRAG.model_copy(update={"chunk_id": "position"})
    with pytest.raises(MigrationError, match="previous indexes and constraints were put back"):
        migrate(migrated_db, settings, remapped)
    assert schema_names(migrated_db) == before
    states = status(migrated_db, settings)
    assert all(s.state in ("applied", "not-for-this-server") for s in states)
    assert migrate(migrated_db, settings, GUIDEDRAG) == []


def test_migrate_recreates_a_missing_index_instead_of_saying_up_to_date(
    migrated_db: Driver, settings: Settings
) -> None:
    before = schema_names(migrated_db)
    migrated_db.execute_query("DROP INDEX chunk_embedding")
    migrated_db.execute_query("DROP CONSTRAINT guidedrag_entity_id")
    again = migrate(migrated_db, settings, GUIDEDRAG)
    assert {m.version for m in again} >= {1, 3}
    assert schema_names(migrated_db) == before
    assert migrate(migrated_db, settings, GUIDEDRAG) == []


def test_renaming_an_index_creates_the_new_one_and_drops_the_old(
    migrated_db: Driver, settings: Settings
) -> None:
    renamed = settings.model_copy(update={"vector_index_name": "chunks_v2"})
    migrate(migrated_db, renamed, GUIDEDRAG)
    names = schema_names(migrated_db)
    assert "index chunks_v2 VECTOR" in names
    assert not any(n.startswith("index chunk_embedding ") for n in names)
    assert "constraint guidedrag_chunk_id NODE_PROPERTY_UNIQUENESS" in names
    migrate(migrated_db, settings, GUIDEDRAG)  # and back
    assert schema_names(migrated_db) == {n.replace("chunks_v2", "chunk_embedding") for n in names}
