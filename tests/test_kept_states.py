"""The fixtures' kept states (``tests/kept_states.py``): a state is handed out again only while
the database is exactly as its last build left it, and emptying a migrated database keeps
exactly what ``migrate`` made."""

from __future__ import annotations

from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.migration.run import migrate
from guidedrag_graph.schema.presets import PRESETS
from tests.conftest import wipe
from tests.kept_states import KeptStates, delete_all_but_migration_records, graph_state

# Each change a test could leave behind, and the statement that makes it.
CHANGES = {
    "a node property": "MATCH (n:KeptProbe {k: 1}) SET n.v = 'other'",
    "a label": "MATCH (n:KeptProbe {k: 1}) SET n:Extra",
    "a relationship property": "MATCH (:KeptProbe)-[r:NEXT]->() SET r.w = 2.5",
    "a relationship's end": "MATCH (a:KeptProbe {k: 1}), (c:KeptProbe {k: 3}) "
    "MATCH (a)-[r:NEXT]->() DELETE r CREATE (a)-[:NEXT {w: 1.5}]->(c)",
    "a new node": "CREATE (:KeptProbe {k: 4, v: 'd'})",
    "an index": "CREATE INDEX kept_probe_extra IF NOT EXISTS FOR (n:KeptProbe) ON (n.v)",
}


def _build(driver: Driver, builds: list[int]) -> None:
    wipe(driver)
    driver.execute_query(
        "CREATE (a:KeptProbe {k: 1, v: 'a', vec: [0.5, 0.25]})-[:NEXT {w: 1.5}]->"
        "(:KeptProbe {k: 2, v: 'b'}), (:KeptProbe {k: 3, v: 'c'})"
    )
    driver.execute_query("CREATE INDEX kept_probe_k IF NOT EXISTS FOR (n:KeptProbe) ON (n.k)")
    driver.execute_query("CALL db.awaitIndexes(60)")
    builds.append(1)


def test_a_kept_state_is_handed_out_again_only_while_nothing_changed(
    blank_db: Driver, settings: Settings
) -> None:
    kept, builds = KeptStates(), []

    def ensure() -> bool:
        return kept.ensure("probe", settings.neo4j_uri, blank_db, lambda: _build(blank_db, builds))

    assert ensure() is False and len(builds) == 1  # nothing kept yet: built
    assert ensure() is True and len(builds) == 1  # as left: reused
    for what, change in CHANGES.items():
        blank_db.execute_query(change)
        assert ensure() is False, f"{what} changed, yet the kept state was reused"
        assert ensure() is True, what  # rebuilt, and kept again
    assert len(builds) == 1 + len(CHANGES)
    assert kept.builds == {"probe": 1 + len(CHANGES)}
    # Another server's state, or another name, is another state.
    assert kept.ensure("probe", "bolt://elsewhere:7687", blank_db, lambda: None) is False
    wipe(blank_db)


def test_emptying_a_migrated_database_leaves_what_migrate_made(
    blank_db: Driver, settings: Settings
) -> None:
    migrate(blank_db, settings, PRESETS["guidedrag"])
    migrated = graph_state(blank_db)
    blank_db.execute_query(
        "UNWIND range(1, 25) AS i CREATE (:Document {id: 'd' + i})-[:HAS_CHUNK]->"
        "(:Chunk {id: 'c' + i, text: 'x'})"
    )
    assert graph_state(blank_db) != migrated
    delete_all_but_migration_records(blank_db)
    assert graph_state(blank_db) == migrated
