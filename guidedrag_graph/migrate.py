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
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from neo4j import Driver

from guidedrag_graph import templates
from guidedrag_graph.config import Settings
from guidedrag_graph.db import ServerInfo, server_info
from guidedrag_graph.errors import MigrationError
from guidedrag_graph.migration_files import SETTING_NAMES, Migration, created_objects, index_names
from guidedrag_graph.migration_files import discover as discover
from guidedrag_graph.schema import PRESETS, SchemaMapping


@dataclass(frozen=True)
class MigrationState:
    migration: Migration
    state: Literal["applied", "pending", "not-for-this-server", "modified"]
    applied_at: str | None = None


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
    out: list[MigrationState] = []
    for migration in discover(folder):
        record = applied.get(migration.version)
        if record is not None:
            state: Literal["applied", "pending", "not-for-this-server", "modified"] = (
                "applied" if migration.accepts(record["checksum"]) else "modified"
            )
            out.append(MigrationState(migration, state, record["applied_at"]))
        elif not migration.applies_to(server):
            out.append(MigrationState(migration, "not-for-this-server"))
        else:
            out.append(MigrationState(migration, "pending"))
    return out


def migrate(
    driver: Driver,
    settings: Settings,
    schema: SchemaMapping,
    folder: Path | None = None,
    *,
    await_timeout_s: int = 600,
) -> list[Migration]:
    """Apply pending migrations in order; returns those applied (empty on a rerun).

    Nothing is dropped before the whole plan is checked (``_check_plan``: no two name slots
    share a name, no name the plan creates belongs to an existing object of another kind), and
    a migration re-run for a changed mapping or names creates before it drops where it can and
    puts the previous objects back if it fails, so a failed run leaves the previous indexes,
    constraints and migration records as they were. An applied migration whose
    objects are missing is run again: ``migrate`` never answers "up to date" over them.
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
    plan: list[tuple[Migration, list[str], list[str] | None]] = []
    for state in states:
        migration = state.migration
        statements = migration.statements(schema, names)
        if state.state == "applied":
            before = _recorded_statements(migration, applied[migration.version])
            if before is None:
                continue
            if before == statements:
                present = _existing_objects(driver, database)
                if all(name in present for name in created_objects(statements)):
                    continue
            plan.append((migration, statements, before))
        elif state.state == "pending":
            plan.append((migration, statements, None))
    if plan:
        _check_plan(driver, database, names, plan)
    done: list[Migration] = []
    for migration, statements, before in plan:
        _apply(driver, database, server, migration, statements, before, params)
        _record(driver, database, migration, schema, statements)
        done.append(migration)
    driver.execute_query(
        templates.query("await_indexes"),
        {"timeout_s": int(await_timeout_s)},
        database_=database,
    )
    return done


# Which setting fills a name slot, for the collision message.
def _setting_of(slot: str) -> str:
    field = SETTING_NAMES.get(slot)
    return f"GUIDEDRAG_{field.upper()}" if field else f"GUIDEDRAG_INDEX_PREFIX (+ {slot})"


_KIND_RE = re.compile(r"^\s*CREATE\s+(?:(\w+)\s+)?(INDEX|CONSTRAINT)\b", re.IGNORECASE)


def _created_kind(statement: str) -> tuple[str, str] | None:
    """("index", "VECTOR"|"FULLTEXT"|"RANGE"|...) or ("constraint", "") for a CREATE statement."""
    match = _KIND_RE.match(statement)
    if match is None:
        return None
    if match.group(2).upper() == "CONSTRAINT":
        return ("constraint", "")
    return ("index", (match.group(1) or "RANGE").upper())


def _existing_objects(driver: Driver, database: str) -> dict[str, tuple[str, str]]:
    """Every index and constraint by name: ("constraint", type) or ("index", type). A
    constraint's own index shares its name and is reported as the constraint."""
    out: dict[str, tuple[str, str]] = {}
    for r in driver.execute_query(templates.query("schema_indexes"), database_=database).records:
        out[str(r["name"])] = ("index", str(r["type"]))
    for r in driver.execute_query(
        templates.query("schema_constraints"), database_=database
    ).records:
        out[str(r["name"])] = ("constraint", str(r["type"]))
    return out


def _check_plan(
    driver: Driver,
    database: str,
    names: dict[str, str],
    plan: list[tuple[Migration, list[str], list[str] | None]],
) -> None:
    """Refuse, before anything changes, a plan that would reuse or replace an object that is
    not the one it means: two name slots with one name, or a name that an existing index or
    constraint of another kind already has (Neo4j's IF NOT EXISTS would keep that object, and
    a re-run would drop it: GUIDEDRAG_VECTOR_INDEX_NAME=guidedrag_chunk_id and the constraint)."""
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
    existing = _existing_objects(driver, database)
    for migration, statements, _ in plan:
        for statement in statements:
            kind = _created_kind(statement)
            created = created_objects([statement])
            if kind is None or not created or created[0] not in existing:
                continue
            have = existing[created[0]]
            clash = have[0] != kind[0] or (kind[0] == "index" and have[1] != kind[1])
            if clash:
                slot = next((s for s, n in names.items() if n == created[0]), "a name")
                raise MigrationError(
                    f"{migration.path.name} would create {kind[1].lower() or 'a'} {kind[0]} "
                    f"{created[0]!r}, but Neo4j already has a {have[1]} {have[0]} of that name: "
                    f"set {_setting_of(slot)} to another name. Nothing was changed"
                )


def _apply(
    driver: Driver,
    database: str,
    server: ServerInfo,
    migration: Migration,
    statements: list[str],
    before: list[str] | None,
    params: dict[str, Any],
) -> None:
    """Run one migration's statements; for a re-run, replace ``before``'s objects safely.

    Objects whose name stays are dropped first (Neo4j keeps one object per name); renamed ones
    are dropped only after their successors exist, and if a successor was not created (an
    equivalent index under the old name blocks it) the old one goes and the statement runs
    again. On any failure the objects this run created are dropped and ``before`` is run again,
    so the database is left as the migration record describes it."""
    old = created_objects(before) if before is not None else []
    new = created_objects(statements)
    # Only what this run creates may be dropped on failure, never an object that was there.
    keep = set(_existing_objects(driver, database)) - {n for n in new if n in old}
    try:
        if before is not None:
            _drop_objects(driver, database, [n for n in old if n in new])
        _run(driver, database, statements, params)
        if before is not None:
            renamed = [n for n in old if n not in new]
            if any(n not in _existing_objects(driver, database) for n in new):
                _drop_objects(driver, database, renamed)
                _run(driver, database, statements, params)
            _drop_objects(driver, database, renamed)
            missing = [n for n in new if n not in _existing_objects(driver, database)]
            if missing:
                raise MigrationError(f"it did not create {', '.join(missing)}")
    except Exception as exc:
        restored = _restore(driver, database, [n for n in new if n not in keep], before, params)
        detail = str(exc) if isinstance(exc, MigrationError) else f"{exc}"
        raise MigrationError(
            f"{migration.path.name} failed on Neo4j {server.version}: {' '.join(detail.split())}"
            f"; {restored}"
        ) from exc


def _run(driver: Driver, database: str, statements: list[str], params: dict[str, Any]) -> None:
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
) -> str:
    """Undo a failed migration run (drop ``created``, run ``before`` again); what the message
    says about the database afterwards."""
    try:
        _drop_objects(driver, database, created)
        if before is not None:
            _run(driver, database, before, params)
    except Exception as exc:  # the server went away mid-run: say what to do
        return (
            f"restoring the previous objects failed too ({exc.__class__.__name__}): fix the "
            f"cause and rerun `guidedrag migrate`"
        )
    if before is None:
        return "nothing it created was kept; fix the cause and rerun `guidedrag migrate`"
    return "the previous indexes and constraints were put back; fix the cause and rerun"


def _record(
    driver: Driver,
    database: str,
    migration: Migration,
    schema: SchemaMapping,
    statements: list[str],
) -> None:
    record = {
        "version": migration.version,
        "name": migration.name,
        "checksum": migration.checksum,
        "applied_at": datetime.now(UTC),
        "preset": schema.preset,
        "statements": statements,
    }
    driver.execute_query(templates.query("migration_record_write"), record, database_=database)


def _recorded_statements(migration: Migration, record: dict[str, Any]) -> list[str] | None:
    """What an applied migration ran; for records from before that was stored, its preset's
    rendering with the default names (``None`` when that cannot be known: leave it alone)."""
    if record.get("statements") is not None:
        return [str(s) for s in record["statements"]]
    preset = PRESETS.get(str(record.get("schema_preset")))
    return migration.statements(preset) if preset is not None else None


def _drop_objects(driver: Driver, database: str, names: list[str]) -> None:
    """Drop the named indexes/constraints (ours by name) that exist; constraints first."""
    kinds = {
        str(r["name"]): kind
        for kind, template in (("index", "schema_indexes"), ("constraint", "schema_constraints"))
        for r in driver.execute_query(templates.query(template), database_=database).records
    }
    for name in dict.fromkeys(names):
        kind = kinds.get(name)
        if kind is None:
            continue
        drop = templates.query("drop_schema_object", variant={"kind": kind})
        driver.execute_query(drop, {"name": name}, database_=database)
