"""``guidedrag kb adopt``: give an existing graph what guided retrieval needs, and nothing else.

A graph written by a KG builder or by hand already has its chunks, embeddings and entities;
``guidedrag migrate`` would add uniqueness constraints (which fail on, or constrain, the user's
data) and indexes the loader needs. Adoption creates only:

- the full-text index over entity names and aliases (suggestions, full-text tagger);
- ``name_key`` on entities that lack it, with its range index (case-insensitive names); each
  entity it writes one on gets the ``:__GuidedRAGNameKey`` label, so ``--drop`` removes exactly
  those keys (a key the user had is never touched);
- the chunk vector index, declared ``WITH [c.<id>]`` where the server supports filters
  (2026.06+) and the chunk id is a property, unless a vector index on the chunk embeddings
  already exists: then that one is reused and its name reported (GUIDEDRAG_VECTOR_INDEX_NAME).

What it created or found is recorded on one ``(:__GuidedRAGAdoption)`` node: the indexes it made
and the keys it wrote, so ``--drop`` removes exactly that; and the names every command needs —
the chunk vector index (created, or the builder's own), the full-text index, the schema preset or
mapping file and with it the id mode — which ``GraphContext`` reads whenever a command connects,
so no variable has to be set by hand afterwards. No other property, node or relationship of the
user's is touched.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.db.connection import read_query, server_info
from guidedrag_graph.db.fit import (
    ADOPTED_NAME_KEY_LABEL,
    readable_title_property,
    vector_index_over,
)
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.kb.batch_writes import progress_bar
from guidedrag_graph.migration.objects import (
    Definition,
    created_definition,
    from_records,
    live_definitions,
    owned,
)
from guidedrag_graph.migration.run import vector_index_config
from guidedrag_graph.migration.steps import await_indexes
from guidedrag_graph.schema.presets import ELEMENT_ID, SchemaMapping, name_key
from guidedrag_graph.templates import queries as templates

_BATCH = 5_000


@dataclass
class AdoptReport:
    """What adopt created, reused or removed; ``lines()`` is what the CLI prints."""

    created: list[str] = field(default_factory=list)
    reused: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    created_definitions: list[str] = field(default_factory=list)
    name_keys_written: int = 0
    name_keys_removed: int = 0
    vector_index_name: str | None = None
    vector_index_filtered: bool = False
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "created_definitions"}

    def lines(self) -> list[str]:
        out = [f"created index {name}" for name in self.created]
        out += [f"reused index {name}" for name in self.reused]
        out += [f"dropped index {name}" for name in self.dropped]
        if self.name_keys_written:
            out.append(f"wrote name_key on {self.name_keys_written} entities")
        if self.name_keys_removed:
            out.append(f"removed name_key from {self.name_keys_removed} entities")
        out += [f"note: {note}" for note in self.notes]
        return out


def _indexes(driver: Driver, database: str) -> list[dict[str, Any]]:
    return read_query(driver, templates.query("schema_indexes"), database=database)


def adopt(
    driver: Driver, settings: Settings, schema: SchemaMapping, *, progress: bool = False
) -> AdoptReport:
    """Create what guided retrieval needs on an existing graph (idempotent), and record it with
    the names later commands read (``context.with_adoption``). ``progress``: a bar over the
    name keys written."""
    database = settings.neo4j_database
    report = AdoptReport()
    existing = {str(i["name"]): i for i in _indexes(driver, database)}
    live = live_definitions(driver, database)
    created: list[str] = []

    def create(query: str, name: str, params: dict[str, Any] | None = None) -> None:
        if name in existing:
            report.reused.append(name)
            return
        driver.execute_query(query, params or {}, database_=database)
        created.append(name)
        report.created.append(name)
        made = live_definitions(driver, database).get(name)
        if made is not None:
            report.created_definitions.append(made.to_json())

    fulltext = settings.entity_fulltext_index_name
    names = {"entity_fulltext_index": fulltext}
    fulltext_ddl = templates.query("adopt_fulltext_index", schema, names=names)
    key_index = f"{settings.index_prefix}_entity_name_key"
    names = {"entity_name_key_index": key_index}
    key_ddl = templates.query("adopt_name_key_index", schema, names=names)
    # Every name is checked before anything is written: a name held by another index is refused.
    _refuse_other_indexes(
        live,
        [
            (fulltext_ddl, "GUIDEDRAG_ENTITY_FULLTEXT_INDEX_NAME"),
            (key_ddl, "GUIDEDRAG_INDEX_PREFIX"),
            *_vector_name_check(settings, schema, existing),
        ],
    )
    create(fulltext_ddl, fulltext)
    create(key_ddl, key_index)
    report.name_keys_written = _write_name_keys(driver, database, schema, progress)

    _adopt_vector_index(driver, settings, schema, existing, report, create)
    previous = _record(driver, database)
    record: dict[str, Any] = {
        "indexes": sorted(set(previous.get("indexes", [])) | set(created)),
        # the definitions of the indexes it created: --drop drops only what still matches
        "index_definitions": sorted(
            set(previous.get("index_definitions", [])) | set(report.created_definitions)
        ),
        "name_key_property": schema.entity_key,
        "entity_label": schema.entity_label,
        "name_keys_written": int(previous.get("name_keys_written", 0)) + report.name_keys_written,
        **_name_key_marking(previous),
        # what every later command reads (context.ADOPTED_SETTINGS and the schema)
        "entity_fulltext_index_name": fulltext,
        "schema_preset": schema.preset,
        "schema_file": str(Path(settings.schema_file).resolve()) if settings.schema_file else "",
        "chunk_id_mode": "elementId" if schema.chunk_id == ELEMENT_ID else "property",
    }
    if report.vector_index_name:
        record["vector_index_name"] = report.vector_index_name
    title = readable_title_property(driver, database, schema)
    record["document_title"] = title or ""
    if title:
        report.notes.append(
            f"documents have no {schema.document_title!r}: results show their {title!r} as the "
            f"title (recorded)"
        )
    driver.execute_query(
        templates.query("adoption_record_write"), {"record": record}, database_=database
    )
    await_indexes(driver, database, 600)
    return report


def _refuse_other_indexes(live: dict[str, Definition], wanted: list[tuple[str, str]]) -> None:
    """Refuse (one line, before anything is written) a name adopt would create or reuse that an
    index of another definition holds: IF NOT EXISTS would keep it, adopt would report it as
    the index retrieval needs, and ``--drop`` might drop it. An index of exactly the wanted
    definition is reused (a builder's own); anything else is the user's to rename."""
    for ddl, setting in wanted:
        want = created_definition(ddl)
        if want is None or want.name not in live:
            continue
        have = live[want.name]
        if not have.same_as(want):
            raise ConfigurationError(
                f"an index named {want.name!r} already exists as a {have.describe()}, not the "
                f"{want.describe()} kb adopt needs (it is not guidedrag's): rename or drop that "
                f"index, or set {setting} to another name. Nothing was changed"
            )


def _vector_name_check(
    settings: Settings, schema: SchemaMapping, existing: dict[str, dict[str, Any]]
) -> list[tuple[str, str]]:
    """The vector index adopt would create, for ``_refuse_other_indexes``: none when a vector
    index over the chunk embeddings exists (that one is reused, whatever its name)."""
    wanted = settings.vector_index_name
    if vector_index_over(existing.values(), schema.chunk_label, schema.chunk_embedding, wanted):
        return []
    ddl = templates.query(
        "adopt_vector_index", schema, names={"vector_index": wanted}, variant={"filter": "none"}
    )
    return [(ddl, "GUIDEDRAG_VECTOR_INDEX_NAME")]


def _adopt_vector_index(
    driver: Driver,
    settings: Settings,
    schema: SchemaMapping,
    existing: dict[str, dict[str, Any]],
    report: AdoptReport,
    create: Any,
) -> None:
    database = settings.neo4j_database
    wanted = settings.vector_index_name
    index = vector_index_over(existing.values(), schema.chunk_label, schema.chunk_embedding, wanted)
    if index is not None:
        report.vector_index_name = str(index["name"])
        report.vector_index_filtered = schema.chunk_id in list(index["properties"])[1:]
        report.reused.append(str(index["name"]))
        if index["name"] != wanted:
            report.notes.append(
                f"the chunk embeddings already have the vector index {index['name']!r} (Neo4j "
                f"allows one per property): recorded, so every command uses it"
            )
        return
    rows = read_query(driver, templates.query("adopt_embedding_size", schema), database=database)
    if not rows:
        report.notes.append(
            f"no :{schema.chunk_label} node has {schema.chunk_embedding!r}: embed the chunks "
            f"first; no vector index created"
        )
        return
    dimensions = int(rows[0]["dimensions"])
    if dimensions != settings.embedding_dimensions:
        raise ConfigurationError(
            f"the chunk embeddings have {dimensions} dimensions but the configured embedder "
            f"gives {settings.embedding_dimensions}: set GUIDEDRAG_EMBEDDING_DIMENSIONS and the "
            f"embedder that made them (questions must be embedded by the same model)"
        )
    server = server_info(driver, database)
    filtered = server.supports_search_in_filter and schema.chunk_id != ELEMENT_ID
    ddl = templates.query(
        "adopt_vector_index",
        schema,
        names={"vector_index": wanted},
        variant={"filter": "ids" if filtered else "none"},
    )
    create(ddl, wanted, {"vector_index_config": vector_index_config(settings, server)})
    report.vector_index_name = wanted
    report.vector_index_filtered = filtered
    if not filtered:
        why = (
            "chunks are addressed by elementId()"
            if schema.chunk_id == ELEMENT_ID
            else f"Neo4j {server.version} has no vector filters (2026.06+)"
        )
        report.notes.append(
            f"vector index without filter properties ({why}): large selections rank by "
            f"post-filtering the index, not inside it"
        )


def _name_key_marking(previous: dict[str, Any]) -> dict[str, Any]:
    """The record's note of how adopt marked the keys it wrote (``ADOPTED_NAME_KEY_LABEL``), and
    how many keys an adoption before the mark existed wrote unmarked (``--drop`` cannot tell
    those from the user's own, so it leaves them and says so)."""
    return {"name_key_marker": ADOPTED_NAME_KEY_LABEL, "name_keys_unmarked": _unmarked(previous)}


def _unmarked(record: dict[str, Any]) -> int:
    """How many name keys an adoption wrote without marking them: every key of a record from
    before the mark existed (``name_key_marker`` absent), else what the record carried over."""
    if record and "name_key_marker" not in record:
        return int(record.get("name_keys_written", 0))
    return int(record.get("name_keys_unmarked", 0))


def _write_name_keys(
    driver: Driver, database: str, schema: SchemaMapping, progress: bool = False
) -> int:
    rows = read_query(driver, templates.query("adopt_name_keys_read", schema), database=database)
    write = templates.query("adopt_name_keys_write", schema)
    written = 0
    batch = [{"eid": r["eid"], "key": name_key(str(r["name"]))} for r in rows]
    with progress_bar(len(batch), "name keys", progress and bool(batch)) as bar:
        for start in range(0, len(batch), _BATCH):
            part = batch[start : start + _BATCH]
            records = driver.execute_query(write, {"rows": part}, database_=database).records
            written += int(records[0]["written"]) if records else 0
            bar.update(len(part))
    return written


def _record(driver: Driver, database: str) -> dict[str, Any]:
    rows = read_query(driver, templates.query("adoption_record"), database=database)
    return dict(rows[0]["record"]) if rows else {}


def _droppable(
    driver: Driver, database: str, schema: SchemaMapping, record: dict[str, Any]
) -> list[str]:
    """The recorded indexes ``--drop`` may drop: those that exist with the definition adoption
    recorded creating. Records from before definitions were kept (names only) drop an index
    of that name only while it is on the recorded entity label or the chunk label (a name
    recorded without its definition: by an older version)."""
    live = live_definitions(driver, database)
    recorded = from_records(record.get("index_definitions"))
    labels = {str(record.get("entity_label", schema.entity_label)), schema.chunk_label}
    out: list[str] = []
    for name in record.get("indexes", []):
        have = live.get(str(name))
        if have is None or have.kind != "index":
            continue
        if any(d.name == have.name for d in recorded):
            if owned(recorded, have):
                out.append(have.name)
        elif set(have.labels) & labels:
            out.append(have.name)
    return out


def unadopt(driver: Driver, settings: Settings, schema: SchemaMapping) -> AdoptReport:
    """Undo ``adopt``: drop the indexes it created and the name keys it wrote, nothing else.

    A name key is removed only from an entity adopt marked when it wrote the key (it writes one
    only where there was none), so a key the user had before adopt stays."""
    database = settings.neo4j_database
    report = AdoptReport()
    record = _record(driver, database)
    if not record:
        report.notes.append("this database has no adoption record: nothing to undo")
        return report
    for name in _droppable(driver, database, schema, record):
        drop = templates.query("drop_schema_object", variant={"kind": "index"})
        driver.execute_query(drop, {"name": name}, database_=database)
        report.dropped.append(name)
    unmarked = _unmarked(record)
    if unmarked:
        report.notes.append(
            f"left {unmarked} name keys an older guidedrag's adopt wrote unmarked: they cannot be "
            f"told from keys you set yourself (remove them by hand if they are not yours)"
        )
    if int(record.get("name_keys_written", 0)) and "name_key_marker" in record:
        keyed = schema.model_copy(
            update={
                "entity_label": str(record.get("entity_label", schema.entity_label)),
                "entity_key": str(record.get("name_key_property", schema.entity_key)),
            }
        )
        remove = templates.query("adopt_name_keys_remove", keyed)
        while True:
            rows = driver.execute_query(remove, database_=database).records
            removed = int(rows[0]["removed"]) if rows else 0
            report.name_keys_removed += removed
            if removed == 0:
                break
    driver.execute_query(templates.query("adoption_record_delete"), database_=database)
    return report
