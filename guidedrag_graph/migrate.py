"""Versioned schema migrations: ``migrations/V0001__name.cypher``, applied in order, once each.

Each applied file is recorded on a ``(:__GuidedRAGMigration)`` node with the checksum of its text,
so an edited, already-applied file is caught instead of silently diverging between databases.
Files may say ``// requires: neo4j >= 2026.06`` on a line of their own: they stay pending on older
servers and apply after an upgrade.

Labels and property names come from the schema mapping as ``{{chunk_label}}`` placeholders
(escaped identifiers); index and constraint names from the settings as ``{{index:vector}}``,
``{{index:entity_fulltext}}``, ``{{index:entity_vector}}`` or ``{{index:<what>}}`` (the settings'
``index_prefix`` + ``_<what>``); values such as the vector dimensions are Cypher parameters.
A statement about an id mapped to ``elementId()`` is skipped: there is no property to index.

The checksum is taken over the file with its index names at their defaults, so files written
before names were configurable keep their checksums. Each applied migration also records the
statements it ran (``m.statements``): when the mapping or the names change (another preset on
the same database), ``migrate`` drops the objects the old statements made and runs the file again
for the new mapping instead of answering "up to date" over indexes on the old labels.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.db import ServerInfo, escape_identifier, server_info
from guidedrag_graph.errors import MigrationError
from guidedrag_graph.query_templates import render
from guidedrag_graph.resources import migrations_dir
from guidedrag_graph.schema import ELEMENT_ID, PRESETS, SchemaMapping

_FILE_RE = re.compile(r"^V(\d{4})__([A-Za-z0-9_]+)\.cypher$")
_REQUIRES_RE = re.compile(r"^//\s*requires:\s*neo4j\s*(>=|<)\s*([\d.]+)\s*$", re.MULTILINE)
_PLACEHOLDER_RE = re.compile(r"\{\{(\w+)\}\}")
_NAME_RE = re.compile(r"\{\{index:(\w+)\}\}")
_OBJECT_RE = re.compile(
    r"^\s*CREATE\s+(?:\w+\s+)?(INDEX|CONSTRAINT)\s+(`(?:[^`]|``)+`|\w+)", re.IGNORECASE
)
_DEFAULT_NAMES = {
    "vector": "chunk_embedding",
    "entity_fulltext": "entity_names",
    "entity_vector": "entity_name_embedding",
    "prefix": "guidedrag",
}


def index_names(settings: Settings | None) -> dict[str, str]:
    """The index names migrations use: from the settings, else the defaults."""
    if settings is None:
        return dict(_DEFAULT_NAMES)
    return {
        "vector": settings.vector_index_name,
        "entity_fulltext": settings.entity_fulltext_index_name,
        "entity_vector": settings.entity_vector_index_name,
        "prefix": getattr(settings, "index_prefix", _DEFAULT_NAMES["prefix"]),
    }


def _name(key: str, names: dict[str, str]) -> str:
    if key in ("vector", "entity_fulltext", "entity_vector"):
        return names[key]
    return f"{names['prefix']}_{key}"


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    path: Path
    text: str

    @property
    def checksum(self) -> str:
        canonical = _NAME_RE.sub(lambda m: _name(m.group(1), _DEFAULT_NAMES), self.text)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def applies_to(self, server: ServerInfo) -> bool:
        for op, version in _REQUIRES_RE.findall(self.text):
            wanted = tuple(int(p) for p in version.split("."))
            have = server.version_tuple[: len(wanted)]
            if op == ">=" and have < wanted:
                return False
            if op == "<" and have >= wanted:
                return False
        return True

    def statements(
        self, schema: SchemaMapping, names: dict[str, str] | None = None
    ) -> list[str]:
        names = names or index_names(None)
        skipped = "\x00skip\x00"

        def fill(match: re.Match[str]) -> str:
            key = match.group(1)
            value = getattr(schema, key, None)
            if value == ELEMENT_ID:
                return skipped
            if not isinstance(value, str):
                raise MigrationError(f"{self.path.name}: unknown placeholder {{{{{key}}}}}")
            return schema.q(value)

        body = "\n".join(
            line for line in self.text.splitlines() if not line.lstrip().startswith("//")
        )
        body = _NAME_RE.sub(lambda m: escape_identifier(_name(m.group(1), names)), body)
        body = _PLACEHOLDER_RE.sub(fill, body)
        return [
            stmt.strip() for stmt in body.split(";") if stmt.strip() and skipped not in stmt
        ]


def created_objects(statements: list[str]) -> list[str]:
    """Names of the indexes and constraints that ``statements`` create (unescaped)."""
    names: list[str] = []
    for statement in statements:
        match = _OBJECT_RE.match(statement)
        if match:
            raw = match.group(2)
            names.append(raw[1:-1].replace("``", "`") if raw.startswith("`") else raw)
    return names


def discover(folder: Path | None = None) -> list[Migration]:
    folder = folder or migrations_dir()
    found: list[Migration] = []
    for path in sorted(folder.glob("*.cypher")):
        match = _FILE_RE.match(path.name)
        if not match:
            raise MigrationError(
                f"{path}: migration files must be named V0001__what_it_does.cypher"
            )
        found.append(
            Migration(int(match.group(1)), match.group(2), path, path.read_text(encoding="utf-8"))
        )
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise MigrationError(f"two migration files share a version number in {folder}")
    return sorted(found, key=lambda m: m.version)


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
    records, _, _ = driver.execute_query(
        "MATCH (m:__GuidedRAGMigration) RETURN m.version AS version, m.checksum AS checksum, "
        "toString(m.applied_at) AS applied_at, m.schema_preset AS schema_preset, "
        "m.statements AS statements",
        database_=database,
    )
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
                "applied" if record["checksum"] == migration.checksum else "modified"
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
    """Apply pending migrations in order; returns those applied (empty on a rerun)."""
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
    done: list[Migration] = []
    for state in states:
        migration = state.migration
        statements = migration.statements(schema, names)
        if state.state == "applied":
            before = _recorded_statements(migration, applied[migration.version])
            if before is None or before == statements:
                continue
            # The mapping or the names changed since this file ran (another preset): the old
            # statements' indexes sit on labels this mapping does not use. Replace them.
            _drop_objects(driver, database, created_objects(before) + created_objects(statements))
        elif state.state != "pending":
            continue
        for statement in statements:
            # Schema commands cannot share a transaction with writes: one auto-commit each.
            used = {k: v for k, v in params.items() if f"${k}" in statement}
            try:
                driver.execute_query(statement, used, database_=database)
            except Exception as exc:
                raise MigrationError(
                    f"{migration.path.name} failed on Neo4j {server.version}: {exc}"
                ) from exc
        driver.execute_query(
            "MERGE (m:__GuidedRAGMigration {version: $version}) "
            "SET m.name = $name, m.checksum = $checksum, m.applied_at = $applied_at, "
            "m.schema_preset = $preset, m.statements = $statements",
            {
                "version": migration.version,
                "name": migration.name,
                "checksum": migration.checksum,
                "applied_at": datetime.now(UTC),
                "preset": schema.preset,
                "statements": statements,
            },
            database_=database,
        )
        done.append(migration)
    driver.execute_query(f"CALL db.awaitIndexes({int(await_timeout_s)})", database_=database)
    return done


def _recorded_statements(migration: Migration, record: dict[str, Any]) -> list[str] | None:
    """What an applied migration ran; for records from before that was stored, its preset's
    rendering with the default names (``None`` when that cannot be known: leave it alone)."""
    if record.get("statements") is not None:
        return [str(s) for s in record["statements"]]
    preset = PRESETS.get(str(record.get("schema_preset")))
    return migration.statements(preset) if preset is not None else None


def _drop_objects(driver: Driver, database: str, names: list[str]) -> None:
    """Drop the named indexes/constraints (ours by name) that exist; constraints first."""
    plain = PRESETS["guidedrag"]
    kinds = {
        str(r["name"]): kind
        for kind, template in (("index", "schema_indexes"), ("constraint", "schema_constraints"))
        for r in driver.execute_query(render(template, plain), database_=database).records
    }
    for name in dict.fromkeys(names):
        kind = kinds.get(name)
        if kind is None:
            continue
        query = "drop_constraint" if kind == "constraint" else "drop_index"
        driver.execute_query(render(query, plain), {"name": name}, database_=database)
