"""One migration run, step by step: what ``migrate`` executes once its plan is checked.

Split out of ``migration/run.py`` (planning and status stay there) so that the part a kill can cut
short reads as one unit: the run is marked in progress on its record first, each object's
definition is recorded before the statement that creates it, every step is checked to have
made what it asked for, and every drop goes through ``drop_owned`` — only objects the records
prove the project's (see ``schema_objects``) are ever dropped.
"""

from __future__ import annotations

from typing import Any

from neo4j import Driver

from guidedrag_graph.db.connection import ServerInfo, timed
from guidedrag_graph.errors import MigrationError
from guidedrag_graph.migration.files import Migration, created_objects
from guidedrag_graph.migration.objects import (
    Definition,
    created_definition,
    dropped_object,
    live_definitions,
    owned,
)
from guidedrag_graph.templates import queries as templates


def apply_steps(
    driver: Driver,
    database: str,
    server: ServerInfo,
    migration: Migration,
    statements: list[str],
    before: list[str] | None,
    params: dict[str, Any],
    recorded: list[Definition],
    previously_owned: list[Definition],
    prefix: str,
) -> None:
    """Run one migration's statements, one recorded step at a time; for a re-run, replace
    ``before``'s objects safely.

    The run is marked in progress first (``migration_record_begin``); each object's definition
    is recorded before the statement that creates it runs. An object of the project's that
    holds a wanted name with another definition is dropped first (Neo4j keeps one object per
    name); one that already covers what a statement creates under another name (the previous
    name, or a killed run's prefix) is dropped and the statement runs again. Renamed objects and
    what an interrupted run of this migration left are dropped at the end, only while they are
    the project's. On any failure the objects this run created are dropped and ``before`` is run
    again, so the database is left as the migration record describes it."""
    old = created_objects(before) if before is not None else []
    new = created_objects(statements)
    # Only what this run creates may be dropped on failure, never an object that was there.
    keep = set(live_definitions(driver, database)) - {n for n in new if n in old}
    write_record(
        driver,
        database,
        "migration_record_begin",
        {
            "version": migration.version,
            "name": migration.name,
            "statements": statements,
            "prefix": prefix,
        },
    )
    try:
        for statement in statements:
            _step(driver, database, migration, statement, params, recorded)
        leftovers = [n for n in old if n not in new]
        leftovers += [d.name for d in previously_owned if d.name not in new]
        drop_owned(driver, database, leftovers, recorded)
    except Exception as exc:
        restored, ok = _restore(
            driver, database, [n for n in new if n not in keep], before, params, recorded
        )
        if ok:
            write_record(
                driver,
                database,
                "migration_record_abandon",
                {"version": migration.version, "owned": [d.to_json() for d in previously_owned]},
            )
        detail = str(exc) if isinstance(exc, MigrationError) else f"{exc}"
        raise MigrationError(
            f"{migration.path.name} failed on Neo4j {server.version}: {' '.join(detail.split())}"
            f"; {restored}"
        ) from exc


def _step(
    driver: Driver,
    database: str,
    migration: Migration,
    statement: str,
    params: dict[str, Any],
    recorded: list[Definition],
) -> None:
    """One statement of a migration, checked: what it creates exists afterwards with the
    definition it asks for."""
    wanted = created_definition(statement)
    if wanted is None:
        dropped = dropped_object(statement)
        if dropped is not None:
            drop_owned(driver, database, [dropped[1]], recorded)
        else:
            run_statements(driver, database, [statement], params)
        return
    live = live_definitions(driver, database)
    have = live.get(wanted.name)
    if have is not None and not have.same_as(wanted):
        drop_owned(driver, database, [wanted.name], recorded)
        have = None
    if have is None:
        write_record(
            driver,
            database,
            "migration_record_own",
            {"version": migration.version, "definition": wanted.to_json()},
        )
        recorded.append(wanted)
    run_statements(driver, database, [statement], params)
    live = live_definitions(driver, database)
    if wanted.name not in live:
        stand_in = next((o for o in live.values() if o.same_as(wanted)), None)
        if stand_in is not None and owned(recorded, stand_in):
            drop_owned(driver, database, [stand_in.name], recorded)
            run_statements(driver, database, [statement], params)
            live = live_definitions(driver, database)
    made = live.get(wanted.name)
    if made is None or not made.same_as(wanted):
        raise MigrationError(f"it did not create {wanted.name}")


def write_record(driver: Driver, database: str, template: str, params: dict[str, Any]) -> None:
    driver.execute_query(templates.query(template), params, database_=database)


def run_statements(
    driver: Driver, database: str, statements: list[str], params: dict[str, Any]
) -> None:
    for statement in statements:
        # Schema commands cannot share a transaction with writes: one auto-commit each.
        used = {k: v for k, v in params.items() if f"${k}" in statement}
        driver.execute_query(statement, used, database_=database)


def _restore(
    driver: Driver,
    database: str,
    created: list[str],
    before: list[str] | None,
    params: dict[str, Any],
    recorded: list[Definition],
) -> tuple[str, bool]:
    """Undo a failed migration run (drop ``created``, run ``before`` again); what the message
    says about the database afterwards, and whether the undo succeeded."""
    try:
        drop_owned(driver, database, created, recorded)
        if before is not None:
            run_statements(driver, database, before, params)
    except Exception as exc:  # the server went away mid-run: say what to do
        return (
            f"restoring the previous objects failed too ({exc.__class__.__name__}): fix the "
            f"cause and rerun `guidedrag migrate`",
            False,
        )
    if before is None:
        return "nothing it created was kept; fix the cause and rerun `guidedrag migrate`", True
    return "the previous indexes and constraints were put back; fix the cause and rerun", True


def drop_owned(driver: Driver, database: str, names: list[str], recorded: list[Definition]) -> None:
    """Drop the named indexes/constraints that exist AND are the project's (recorded with the
    definition they have now); a name a constraint and its own index share is dropped as the
    constraint. Anything else is left alone."""
    live = live_definitions(driver, database)
    for name in dict.fromkeys(names):
        have = live.get(name)
        if have is None or not owned(recorded, have):
            continue
        drop = templates.query("drop_schema_object", variant={"kind": have.kind})
        driver.execute_query(drop, {"name": name}, database_=database)


def await_indexes(driver: Driver, database: str, timeout_s: int) -> None:
    """Wait up to ``timeout_s`` for every index to be ONLINE, in a transaction allowed that long.

    The managed server ends a transaction that carries no timeout of its own at the query
    timeout + 1 s (``db.transaction.timeout``, a backstop for other clients): without one, a
    vector index still populating after 31 s would fail ``migrate`` and ``kb embed-entities``
    instead of being waited for."""
    query = timed(templates.query("await_indexes"), driver, timeout=float(timeout_s) + 30.0)
    driver.execute_query(query, {"timeout_s": int(timeout_s)}, database_=database)
