"""Issue 34 (R3, R4) against the real server: ``migrate`` and ``kb adopt`` touch only the
indexes and constraints they recorded creating, and a killed ``migrate`` cannot break the next.

A kill is simulated deterministically: ``KilledAt`` passes every query to the real driver and,
right after a chosen schema change has run, raises an exception no ``except Exception`` catches,
so no clean-up of the interrupted run happens (as with SIGKILL). The records and objects it
leaves are what a killed process leaves.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.errors import ConfigurationError, MigrationError
from guidedrag_graph.kb.adopt import adopt, unadopt
from guidedrag_graph.migration.run import migrate, status
from guidedrag_graph.schema.presets import PRESETS
from tests.cli_run import run_cli
from tests.conftest import wipe
from tests.full_run import ci_sample
from tests.security import schema_names

pytestmark = pytest.mark.neo4j
GUIDEDRAG = PRESETS["guidedrag"]
# Kill points per prefix in CI (the first, the last, evenly between); all under a full run.
KILL_STEPS_IN_CI = 6


class Killed(BaseException):
    """The process died here."""


class KilledAt:
    """The real driver, until ``when(names)`` holds after a schema change (``names``: every
    index and constraint name then): then the run dies."""

    def __init__(self, driver: Driver, when: Callable[[set[str]], bool]) -> None:
        self._driver = driver
        self._when = when

    def execute_query(self, query: Any, *args: Any, **kwargs: Any) -> Any:
        result = self._driver.execute_query(query, *args, **kwargs)
        if str(query).lstrip().upper().startswith(("CREATE", "DROP")) and self._when(
            _names(self._driver)
        ):
            raise Killed(str(query))
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._driver, name)


def _names(driver: Driver) -> set[str]:
    """Every index and constraint name but the built-in token lookup indexes."""
    return {e.split()[1] for e in schema_names(driver) if not e.endswith(" LOOKUP")}


def _killed(driver: Driver, when: Callable[[set[str]], bool]) -> Driver:
    return cast(Driver, KilledAt(driver, when))


def _states(driver: Driver, settings: Settings) -> dict[int, str]:
    return {s.migration.version: s.state for s in status(driver, settings)}


# R3: a user's index with the name a prefix asks for.


def test_a_users_index_with_the_prefixed_name_is_refused_and_left_alone(
    migrated_db: Driver, settings: Settings
) -> None:
    migrated_db.execute_query("CREATE INDEX myapp_entity_type FOR (c:Customer) ON (c.tier)")
    before = schema_names(migrated_db)
    myapp = settings.model_copy(update={"index_prefix": "myapp"})
    with pytest.raises(MigrationError, match="'myapp_entity_type'") as caught:
        migrate(migrated_db, myapp, GUIDEDRAG)
    message = str(caught.value)
    assert "\n" not in message
    assert "did not create" in message and ":Customer(tier)" in message
    assert "GUIDEDRAG_INDEX_PREFIX" in message and "Nothing was changed" in message
    # Untouched, never recorded, and no guidedrag index was dropped for it.
    assert schema_names(migrated_db) == before
    assert set(_states(migrated_db, settings).values()) <= {"applied", "not-for-this-server"}
    # A later plain migrate has nothing to do and never drops the user's index.
    assert migrate(migrated_db, settings, GUIDEDRAG) == []
    assert schema_names(migrated_db) == before


def test_plain_migrate_never_drops_a_users_index_an_older_version_recorded(
    blank_db: Driver, settings: Settings
) -> None:
    """The upgrade path: records without definitions (an older version) named
    ``myapp_entity_type``; the index of that name now is the user's, on another label."""
    myapp = settings.model_copy(update={"index_prefix": "myapp"})
    migrate(blank_db, myapp, GUIDEDRAG)
    blank_db.execute_query("DROP INDEX myapp_entity_type")
    blank_db.execute_query("CREATE INDEX myapp_entity_type FOR (c:Customer) ON (c.tier)")
    blank_db.execute_query("MATCH (m:__GuidedRAGMigration) REMOVE m.owned")
    migrate(blank_db, settings, GUIDEDRAG)
    names = _names(blank_db)
    assert "myapp_entity_type" in names  # the user's, kept
    assert "guidedrag_entity_type" in names and "myapp_entity_name" not in names
    assert migrate(blank_db, settings, GUIDEDRAG) == []


def test_records_from_an_older_version_still_migrate_and_rename(
    migrated_db: Driver, settings: Settings
) -> None:
    """Records without definitions (the upgrade path) still own what their statements made."""
    before = schema_names(migrated_db)
    migrated_db.execute_query("MATCH (m:__GuidedRAGMigration) REMOVE m.owned")
    assert migrate(migrated_db, settings, GUIDEDRAG) == []
    myapp = settings.model_copy(update={"index_prefix": "myapp"})
    migrate(migrated_db, myapp, GUIDEDRAG)
    assert schema_names(migrated_db) == {n.replace("guidedrag_", "myapp_") for n in before}
    migrate(migrated_db, settings, GUIDEDRAG)
    assert schema_names(migrated_db) == before


def _small_graph(driver: Driver) -> None:
    driver.execute_query(
        "CREATE (:Chunk {id: 'c1', text: 'Paris', embedding: [1.0, 0.0, 0.0, 0.0]})"
        "-[:MENTIONS]->(:Entity {id: 'paris', name: 'Paris'})"
    )


@pytest.mark.parametrize(
    ("user_index", "name", "setting"),
    [
        (
            "CREATE VECTOR INDEX chunk_embedding FOR (o:Other) ON o.embedding OPTIONS "
            "{indexConfig: {`vector.dimensions`: 4, `vector.similarity_function`: 'cosine'}}",
            "chunk_embedding",
            "GUIDEDRAG_VECTOR_INDEX_NAME",
        ),
        (
            "CREATE INDEX guidedrag_entity_name_key FOR (o:Other) ON (o.name_key)",
            "guidedrag_entity_name_key",
            "GUIDEDRAG_INDEX_PREFIX",
        ),
    ],
)
def test_adopt_refuses_a_same_named_index_on_another_label(
    blank_db: Driver, settings: Settings, user_index: str, name: str, setting: str
) -> None:
    _small_graph(blank_db)
    blank_db.execute_query(user_index)
    before = schema_names(blank_db)
    small = settings.model_copy(update={"embedding_dimensions": 4})
    with pytest.raises(ConfigurationError, match=f"'{name}'") as caught:
        adopt(blank_db, small, GUIDEDRAG)
    message = str(caught.value)
    assert "\n" not in message and ":Other" in message and setting in message
    assert schema_names(blank_db) == before  # nothing created, nothing reused
    written = blank_db.execute_query(
        "MATCH (n) WHERE n:__GuidedRAGAdoption OR n.name_key IS NOT NULL RETURN count(n) AS n"
    ).records[0]["n"]
    assert written == 0
    # unadopt has no record to act on: the user's index stays.
    unadopt(blank_db, small, GUIDEDRAG)
    assert schema_names(blank_db) == before


def test_adopt_drop_leaves_an_index_that_replaced_the_one_it_created(
    blank_db: Driver, settings: Settings
) -> None:
    _small_graph(blank_db)
    small = settings.model_copy(update={"embedding_dimensions": 4})
    adopt(blank_db, small, GUIDEDRAG)
    blank_db.execute_query("DROP INDEX guidedrag_entity_name_key")
    blank_db.execute_query("CREATE INDEX guidedrag_entity_name_key FOR (o:Other) ON (o.x)")
    report = unadopt(blank_db, small, GUIDEDRAG)
    assert "guidedrag_entity_name_key" not in report.dropped
    assert {"chunk_embedding", "entity_names"} <= set(report.dropped)
    assert "guidedrag_entity_name_key" in _names(blank_db)


# R4: a killed migrate.


def test_killed_after_the_first_step_status_says_partial_and_migrate_completes(
    blank_db: Driver, settings: Settings, tmp_path: Path
) -> None:
    with pytest.raises(Killed):
        migrate(
            _killed(blank_db, lambda names: "guidedrag_migration_version" in names),
            settings,
            GUIDEDRAG,
        )
    assert _names(blank_db) == {"guidedrag_migration_version"}
    states = {s.migration.version: s for s in status(blank_db, settings)}
    assert states[1].state == "partial"
    assert set(states[1].missing) == {
        "guidedrag_document_id",
        "guidedrag_chunk_id",
        "guidedrag_entity_id",
    }
    assert states[2].state == "pending"
    shown = run_cli(
        ["migrate", "--status"],
        {
            "NEO4J_URI": settings.neo4j_uri,
            "NEO4J_PASSWORD": settings.neo4j_password.get_secret_value(),
        },
        cwd=tmp_path,
    )
    line = next(x for x in shown.stdout.splitlines() if x.startswith("V0001"))
    assert "partial" in line and "guidedrag_chunk_id" in line, shown.stdout + shown.stderr

    applied = migrate(blank_db, settings, GUIDEDRAG)
    assert applied and applied[0].version == 1
    assert set(_states(blank_db, settings).values()) <= {"applied", "not-for-this-server"}
    assert {
        "guidedrag_document_id",
        "guidedrag_chunk_id",
        "guidedrag_entity_id",
        "chunk_embedding",
    } <= _names(blank_db)
    assert migrate(blank_db, settings, GUIDEDRAG) == []


def test_killed_under_another_prefix_the_next_plain_migrate_repairs(
    migrated_db: Driver, settings: Settings
) -> None:
    before = schema_names(migrated_db)
    myapp = settings.model_copy(update={"index_prefix": "myapp"})
    with pytest.raises(Killed):
        migrate(_killed(migrated_db, lambda names: "myapp_document_id" in names), myapp, GUIDEDRAG)
    states = {s.migration.version: s for s in status(migrated_db, settings)}
    assert states[1].state == "partial" and states[1].interrupted_prefix == "myapp"
    assert states[1].missing  # names what the killed run had not made yet

    migrate(migrated_db, settings, GUIDEDRAG)
    assert schema_names(migrated_db) == before
    assert set(_states(migrated_db, settings).values()) <= {"applied", "not-for-this-server"}
    assert migrate(migrated_db, settings, GUIDEDRAG) == []


def test_killed_mid_rename_of_a_later_migration_the_next_plain_migrate_repairs(
    migrated_db: Driver, settings: Settings
) -> None:
    before = schema_names(migrated_db)
    myapp = settings.model_copy(update={"index_prefix": "myapp"})
    with pytest.raises(Killed):
        migrate(_killed(migrated_db, lambda names: "myapp_entity_name" in names), myapp, GUIDEDRAG)
    migrate(migrated_db, settings, GUIDEDRAG)
    assert schema_names(migrated_db) == before
    assert migrate(migrated_db, settings, GUIDEDRAG) == []


class _Counter:
    """Kill after the ``kill_at``-th schema change (never, for None: it only counts)."""

    def __init__(self, kill_at: int | None) -> None:
        self.seen = 0
        self.kill_at = kill_at

    def __call__(self, names: set[str]) -> bool:
        self.seen += 1
        return self.seen == self.kill_at


@pytest.mark.slow
@pytest.mark.parametrize("prefix", ["guidedrag", "myapp"])
def test_a_kill_at_any_step_is_repaired_by_the_next_plain_migrate(
    driver: Driver, settings: Settings, prefix: str
) -> None:
    """Every schema change of a first migrate (prefix guidedrag) or of a switch to another
    prefix (myapp) in turn is the last one before the kill; the next plain migrate always ends
    with the schema a clean run makes, and its records agree.

    CI kills at a deterministic sample of the steps (the first, the last, and ones spread
    evenly between: ``tests/full_run.py``); ``GUIDEDRAG_TESTS_FULL=1`` kills at every step."""
    run = settings.model_copy(update={"index_prefix": prefix})
    switch = prefix != "guidedrag"

    def start() -> None:
        wipe(driver)
        if switch:
            migrate(driver, settings, GUIDEDRAG)

    wipe(driver)
    migrate(driver, settings, GUIDEDRAG)
    clean = schema_names(driver)
    counted = _Counter(None)
    start()
    migrate(_killed(driver, counted), run, GUIDEDRAG)
    assert counted.seen > 3
    for step in ci_sample(range(1, counted.seen + 1), KILL_STEPS_IN_CI):
        start()
        with pytest.raises(Killed):
            migrate(_killed(driver, _Counter(step)), run, GUIDEDRAG)
        migrate(driver, settings, GUIDEDRAG)
        assert schema_names(driver) == clean, f"killed after schema change {step}"
        assert migrate(driver, settings, GUIDEDRAG) == [], f"killed after schema change {step}"
