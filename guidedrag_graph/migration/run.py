"""Versioned schema migrations: ``migrations/V0001__name.cypher``, applied in order, once each.

Each applied file is recorded on a ``(:__GuidedRAGMigration)`` node with a checksum, so an edited,
already-applied file is caught instead of silently diverging between databases. Files may say
``// requires: neo4j >= 2026.06`` on a line of their own: they stay pending on older servers and
apply after an upgrade.

The files are two-way templates like ``cypher/`` (see cypher/README.md): labels and properties
are schema slots (``(c:/*chunk_label*/Chunk)``, ``/*chunk_id*/c.id``), index and constraint names
are name slots filled from the settings (``/*vector_index*/chunk_embedding``, or the settings'
``index_prefix`` + ``_<what>`` for ``/*<what>_index*/guidedrag_<what>``); values such as the
vector dimensions are Cypher parameters. A statement about an id mapped to ``elementId()`` is
skipped: there is no property to index.

The checksum is taken over the canonical statements (default schema and names) and the
``requires`` lines, so comments may change; databases migrated before the files became two-way
recorded a checksum of the file text, accepted while the canonical form is what it was then
(``_RELEASED``). Each applied migration also records the statements it ran (``m.statements``):
when the mapping or the names change (another preset on the same database), ``migrate`` drops
the objects the old statements made and runs the file again for the new mapping instead of
answering "up to date" over indexes on the old labels.

Issue 34: an object is the project's only while a record names it with its live definition
(``schema_objects``): ``m.owned`` holds the definitions, written before each object is created,
and records from older versions count through their statements. A run is marked in progress
(``m.pending_statements``, ``m.pending_prefix``) until its last step, so a killed run shows as
``partial`` and the next run completes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.db.connection import ServerInfo, server_info
from guidedrag_graph.errors import MigrationError
from guidedrag_graph.migration.files import SETTING_NAMES, Migration, created_objects, index_names
from guidedrag_graph.migration.files import discover as discover
from guidedrag_graph.migration.objects import (
    Definition,
    created_definition,
    dropped_object,
    from_records,
    live_definitions,
    owned,
)
from guidedrag_graph.migration.steps import apply_steps, await_indexes, write_record
from guidedrag_graph.schema.presets import PRESETS, SchemaMapping
from guidedrag_graph.templates import queries as templates

State = Literal["applied", "pending", "not-for-this-server", "modified", "partial"]


@dataclass(frozen=True)
class MigrationState:
    """``partial``: a run that did not complete (killed, or a step failed and could not be
    undone), or an applied migration whose objects are gone; ``missing`` names what is absent
    and ``interrupted_prefix`` the index prefix of a run that did not complete."""

    migration: Migration
    state: State
    applied_at: str | None = None
    missing: tuple[str, ...] = ()
    interrupted_prefix: str | None = None


def vector_index_config(settings: Settings, server: ServerInfo) -> dict[str, Any]:
    config: dict[str, Any] = {
        "vector.dimensions": settings.embedding_dimensions,
        "vector.similarity_function": "cosine",
    }
    # Quantization is on by default (5.26: int8, 2026.08: binary). Measured here on 5.26 with
    # 4-d vectors it reordered neighbours outright; exact ranks matter more than index memory.
    if server.supports_vector_quantization_option:
        config["vector.quantization.type"] = "none"
    elif server.supports_vector_quantization_enabled:
        config["vector.quantization.enabled"] = False
    return config


def _applied(driver: Driver, database: str) -> dict[int, dict[str, Any]]:
    records, _, _ = driver.execute_query(templates.query("migration_records"), database_=database)
    return {int(r["version"]): r.data() for r in records}


def status(driver: Driver, settings: Settings, folder: Path | None = None) -> list[MigrationState]:
    return _states(driver, settings, server_info(driver, settings.neo4j_database), folder)


def _states(
    driver: Driver, settings: Settings, server: ServerInfo, folder: Path | None
) -> list[MigrationState]:
    applied = _applied(driver, settings.neo4j_database)
    live = live_definitions(driver, settings.neo4j_database)
    out: list[MigrationState] = []
    for migration in discover(folder):
        record = applied.get(migration.version)
        if record is not None:
            out.append(_state_of(migration, record, live))
        elif not migration.applies_to(server):
            out.append(MigrationState(migration, "not-for-this-server"))
        else:
            out.append(MigrationState(migration, "pending"))
    return out


def _state_of(
    migration: Migration, record: dict[str, Any], live: dict[str, Definition]
) -> MigrationState:
    """A recorded migration's state: ``partial`` when its run did not complete or one of the
    objects its statements create is gone, naming what is missing."""
    when = record["applied_at"]
    if record["checksum"] is not None and not migration.accepts(record["checksum"]):
        return MigrationState(migration, "modified", when)
    pending = record.get("pending_statements")
    expected = pending if pending is not None else _recorded_statements(migration, record)
    missing = tuple(n for n in created_objects([str(s) for s in expected or []]) if n not in live)
    if pending is not None or record["checksum"] is None:
        prefix = record.get("pending_prefix")
        return MigrationState(migration, "partial", when, missing, str(prefix) if prefix else None)
    if missing:
        return MigrationState(migration, "partial", when, missing)
    return MigrationState(migration, "applied", when)


def _ownership(migrations: list[Migration], applied: dict[int, dict[str, Any]]) -> list[Definition]:
    """Every definition the records say the project created: the ``owned`` entries written as
    each object was created, and, for records from before those existed, the objects their
    recorded statements create (the upgrade path: still only what was recorded by name, and
    only while the live definition is the one those statements make)."""
    out: list[Definition] = []
    for migration in migrations:
        record = applied.get(migration.version)
        if record is None:
            continue
        out += from_records(record.get("owned"))
        if record["checksum"] is not None:
            for statement in _recorded_statements(migration, record) or []:
                definition = created_definition(statement)
                if definition is not None:
                    out.append(definition)
    return out


def migrate(
    driver: Driver,
    settings: Settings,
    schema: SchemaMapping,
    folder: Path | None = None,
    *,
    await_timeout_s: int | None = 600,
) -> list[Migration]:
    """Apply pending migrations in order; returns those applied (empty on a rerun).

    Nothing changes before the whole plan is checked (``_check_plan``: no two name slots share
    a name, every name the plan creates or drops is free or held by an object the project
    recorded creating with that very definition, and no object the project did not create
    would silently stand in for one it needs). Each run is marked in progress before its first
    schema change and records each object before creating it, so a killed run leaves records
    that say so (``--status``: partial) and let the next run complete it, whatever prefix the
    killed run had. A migration re-run for a changed mapping or names puts the previous objects
    back if it fails. An applied migration whose objects are missing is run again: ``migrate``
    never answers "up to date" over them.

    ``await_timeout_s``: how long to wait for the indexes to come ONLINE at the end; ``None``
    leaves the wait to the caller (``load --bulk`` waits with progress: a vector index over a
    million imported chunks populates for longer than any one ``db.awaitIndexes`` should).
    """
    database = settings.neo4j_database
    server = server_info(driver, database)
    states = _states(driver, settings, server, folder)
    modified = [s.migration.path.name for s in states if s.state == "modified"]
    if modified:
        raise MigrationError(
            f"applied migration(s) changed since they ran: {', '.join(modified)}. Restore the "
            f"original file(s) and add a new V<next>__*.cypher migration for the change instead"
        )
    params = {"vector_index_config": vector_index_config(settings, server)}
    names = index_names(settings)
    applied = _applied(driver, database)
    recorded = _ownership([s.migration for s in states], applied)
    plan: list[tuple[Migration, list[str], list[str] | None]] = []
    for state in states:
        migration = state.migration
        statements = migration.statements(schema, names)
        record = applied.get(migration.version)
        if state.state == "applied" and record is not None:
            before = _recorded_statements(migration, record)
            if before is not None and before != statements:
                plan.append((migration, statements, before))
        elif state.state == "partial" and record is not None:
            done = record["checksum"] is not None
            plan.append(
                (migration, statements, _recorded_statements(migration, record) if done else None)
            )
        elif state.state == "pending":
            plan.append((migration, statements, None))
    if plan:
        interrupted = {
            s.migration.version: s.interrupted_prefix for s in states if s.state == "partial"
        }
        _check_plan(driver, database, names, plan, recorded, interrupted)
    ran: list[Migration] = []
    for migration, statements, before in plan:
        record = applied.get(migration.version) or {}
        apply_steps(
            driver,
            database,
            server,
            migration,
            statements,
            before,
            params,
            recorded,
            from_records(record.get("owned")),
            settings.index_prefix,
        )
        _record(driver, database, migration, schema, statements)
        ran.append(migration)
    if await_timeout_s is not None:
        await_indexes(driver, database, await_timeout_s)
    return ran


# Which setting fills a name slot, for the collision message.
def _setting_of(slot: str) -> str:
    field = SETTING_NAMES.get(slot)
    return f"GUIDEDRAG_{field.upper()}" if field else f"GUIDEDRAG_INDEX_PREFIX (+ {slot})"


def _check_plan(
    driver: Driver,
    database: str,
    names: dict[str, str],
    plan: list[tuple[Migration, list[str], list[str] | None]],
    recorded: list[Definition],
    interrupted: dict[int, str | None],
) -> None:
    """Refuse, before anything changes, a plan that would reuse, replace or drop an object that
    is not the project's own: two name slots with one name; a name an existing index or
    constraint of another kind has (IF NOT EXISTS would keep that object, and a re-run would
    drop it); a name held by an object the project did not create, or whose definition is no
    longer the recorded one (a user's ``myapp_entity_type`` on ``:Customer(tier)``); an object
    the project did not create that already covers what a statement creates (IF NOT EXISTS
    would silently skip the statement)."""
    by_name: dict[str, list[str]] = {}
    for slot, name in names.items():
        by_name.setdefault(name, []).append(slot)
    for name, slots in by_name.items():
        if len(slots) > 1:
            raise MigrationError(
                f"the index/constraint name {name!r} is set for {len(slots)} objects ("
                + ", ".join(f"{slot} via {_setting_of(slot)}" for slot in slots)
                + "); give each its own name. Nothing was changed"
            )
    live = live_definitions(driver, database)
    for migration, statements, _ in plan:
        hint = ""
        if interrupted.get(migration.version):
            hint = (
                f" (an interrupted run used GUIDEDRAG_INDEX_PREFIX={interrupted[migration.version]}"
                f": rerun with it to complete that run)"
            )
        for statement in statements:
            dropped = dropped_object(statement)
            if dropped is not None and dropped[1] in live and not owned(recorded, live[dropped[1]]):
                have = live[dropped[1]]
                raise MigrationError(
                    f"{migration.path.name} would drop {have.kind} {have.name!r} "
                    f"({have.describe()}), which guidedrag did not create: rename or drop it "
                    f"yourself, or set "
                    f"{_setting_of(_slot(names, have.name))} to another name. Nothing was changed"
                )
            wanted = created_definition(statement)
            if wanted is None:
                continue
            slot = _slot(names, wanted.name)
            have_ = live.get(wanted.name)
            if have_ is not None:
                clash = have_.kind != wanted.kind or (
                    wanted.kind == "index" and have_.type != wanted.type
                )
                if clash:
                    raise MigrationError(
                        f"{migration.path.name} would create {wanted.type.lower()} {wanted.kind} "
                        f"{wanted.name!r}, but Neo4j already has a {have_.type} {have_.kind} of "
                        f"that name: set {_setting_of(slot)} to another name. Nothing was changed"
                    )
                if not owned(recorded, have_):
                    raise MigrationError(
                        f"{migration.path.name} would create {wanted.kind} {wanted.name!r} on "
                        f"{wanted.where()}, but Neo4j already has a {have_.type} {have_.kind} of "
                        f"that name on {have_.where()} that guidedrag did not create: rename "
                        f"or drop it, or set {_setting_of(slot)} to another name{hint}. Nothing "
                        f"was changed"
                    )
                continue
            stand_in = next(
                (o for o in live.values() if o.same_as(wanted) and not owned(recorded, o)), None
            )
            if stand_in is not None:
                raise MigrationError(
                    f"{migration.path.name} would create {wanted.kind} {wanted.name!r} on "
                    f"{wanted.where()}, but {stand_in.kind} {stand_in.name!r}, which guidedrag "
                    f"did not create, already covers it (Neo4j keeps one, so it would not be "
                    f"created): drop {stand_in.name!r}{hint}. Nothing was changed"
                )


def _slot(names: dict[str, str], name: str) -> str:
    return next((s for s, n in names.items() if n == name), "a name")


def _record(
    driver: Driver,
    database: str,
    migration: Migration,
    schema: SchemaMapping,
    statements: list[str],
) -> None:
    """The run completed: its statements, and the live definitions of what they created."""
    live = live_definitions(driver, database)
    made = [live[n].to_json() for n in created_objects(statements) if n in live]
    record = {
        "version": migration.version,
        "name": migration.name,
        "checksum": migration.checksum,
        "applied_at": datetime.now(UTC),
        "preset": schema.preset,
        "statements": statements,
        "owned": made,
    }
    write_record(driver, database, "migration_record_write", record)


def _recorded_statements(migration: Migration, record: dict[str, Any]) -> list[str] | None:
    """What an applied migration ran; for records from before that was stored, its preset's
    rendering with the default names (``None`` when that cannot be known: leave it alone)."""
    if record.get("statements") is not None:
        return [str(s) for s in record["statements"]]
    preset = PRESETS.get(str(record.get("schema_preset")))
    return migration.statements(preset) if preset is not None else None
