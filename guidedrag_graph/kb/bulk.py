"""``guidedrag load --bulk``: a first load through Neo4j's offline importer, same graph as ``load``.

The transactional loader pays a Bolt round trip and a transaction per batch; for a large first
load Neo4j's own ``neo4j-admin database import full`` writes the store files directly. It needs
the database offline, so this path drives the *managed* server (``guidedrag neo4j start``): it
refuses a database that holds data, writes the bundle as the importer's CSV files, stops the
server, imports (replacing the empty database), starts it again and applies the migrations, which
create the constraints and the vector index over the imported chunks.

The graph is the one ``load_bundle`` writes: the same labels, relationship types and directions
from the schema mapping, the same properties (embeddings as float arrays holding the same float32
values widened to float64, ``name_key``/``alias_keys``, predicate text, ``source_chunk``), and
predicates that would collide with structural types prefixed the same way.
"""

from __future__ import annotations

import csv
import datetime as dt
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.db import connect
from guidedrag_graph.errors import BundleError, ConfigurationError, EmbeddingError
from guidedrag_graph.kb.bundle import RESERVED_PREFIX, Bundle
from guidedrag_graph.kb.bundle_reader import read_bundle
from guidedrag_graph.kb.loader import LoadReport, _next_chunk_pairs, loader_query
from guidedrag_graph.migrate import migrate as apply_migrations
from guidedrag_graph.runtime import LocalNeo4j
from guidedrag_graph.schema import SchemaMapping

ARRAY_DELIMITER = ";"
_CSV_TYPES = {bool: "boolean", int: "long", float: "double", str: "string"}


def _header_name(name: str) -> str:
    """A property key as the importer's header takes it (no escaping there: refuse oddities)."""
    if not name or any(ch in name for ch in ':,"\n\r;'):
        raise ConfigurationError(
            f"property or label {name!r} cannot be written in an import header; use the "
            f"transactional `guidedrag load` (without --bulk)"
        )
    return name


def _metadata_columns(rows: Iterable[dict[str, Any]], where: str) -> dict[str, str]:
    """``key -> importer type`` for the metadata of a file, one type per key."""
    types: dict[str, str] = {}
    for metadata in rows:
        for key, value in metadata.items():
            if value is None:
                continue
            if isinstance(value, list):
                inner = {type(v) for v in value} or {str}
                kind = _CSV_TYPES.get(inner.pop(), "") + "[]" if len(inner) <= 1 else ""
            else:
                kind = _CSV_TYPES.get(type(value), "")
            if kind in ("", "[]") or types.setdefault(key, kind) != kind:
                raise BundleError(
                    f"{where}: metadata {key!r} mixes value types; --bulk needs one type per "
                    f"key (or load without --bulk)"
                )
    return types


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        items = [_cell(v) for v in value]
        if any(ARRAY_DELIMITER in str(v) for v in items):
            raise BundleError(
                f"a list value contains {ARRAY_DELIMITER!r} (the import array delimiter): "
                f"load without --bulk"
            )
        return ARRAY_DELIMITER.join(str(v) for v in items)
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def _write(path: Path, header: list[str], rows: Iterator[list[Any]]) -> int:
    count = 0
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
        writer.writerow(header)
        for row in rows:
            writer.writerow([_cell(v) for v in row])
            count += 1
    return count


def write_import_files(bundle: Bundle, schema: SchemaMapping, out: Path) -> list[str]:
    """The bundle as importer CSV files; returns the ``--nodes``/``--relationships`` arguments."""
    s, h = schema, _header_name
    out.mkdir(parents=True, exist_ok=True)
    args: list[str] = []

    doc_meta = _metadata_columns((d.metadata for d in bundle.documents), "documents.jsonl")
    _write(
        out / "documents.csv",
        [
            f"{h(s.document_id)}:ID(Document)",
            h(s.document_title),
            h(s.document_source),
            f"{h(s.document_date)}:date",
            *(f"{h(k)}:{t}" for k, t in doc_meta.items()),
            ":LABEL",
        ],
        (
            [
                d.id,
                d.title,
                d.source,
                d.date,
                *(d.metadata.get(k) for k in doc_meta),
                s.document_label,
            ]
            for d in bundle.documents
        ),
    )
    args.append(f"--nodes={out / 'documents.csv'}")
    _write(
        out / "entities.csv",
        [
            f"{h(s.entity_id)}:ID(Entity)",
            h(s.entity_name),
            h(s.entity_key),
            f"{h(s.entity_aliases)}:string[]",
            f"{h(s.entity_alias_keys)}:string[]",
            h(s.entity_type),
            h(s.entity_description),
            ":LABEL",
        ],
        (
            [
                e.id,
                e.name,
                e.name_key,
                list(e.aliases),
                list(e.alias_keys),
                e.type,
                e.description,
                s.entity_label,
            ]
            for e in bundle.entities
        ),
    )
    args.append(f"--nodes={out / 'entities.csv'}")

    chunk_meta = _metadata_columns((c.metadata for c in bundle.chunks), "chunks.jsonl")

    def chunk_rows() -> Iterator[list[Any]]:
        for c in bundle.chunks:
            vector = bundle.embeddings[c.id]
            # repr of the float32 value widened to float64: the importer parses it back to the
            # very double the transactional loader stores (toFloatList of the float32 vector).
            cells = ARRAY_DELIMITER.join(map(repr, vector.astype(np.float64).tolist()))
            yield [
                c.id,
                c.text,
                c.position,
                c.document_id,
                cells,
                *(c.metadata.get(k) for k in chunk_meta),
                s.chunk_label,
            ]

    _write(
        out / "chunks.csv",
        [
            f"{h(s.chunk_id)}:ID(Chunk)",
            h(s.chunk_text),
            f"{h(s.chunk_position)}:long",
            "document_id",
            f"{h(s.chunk_embedding)}:double[]",
            *(f"{h(k)}:{t}" for k, t in chunk_meta.items()),
            ":LABEL",
        ],
        chunk_rows(),
    )
    args.append(f"--nodes={out / 'chunks.csv'}")

    _write(
        out / "part_of.csv",
        [":START_ID(Chunk)", ":END_ID(Document)", ":TYPE"],
        ([c.id, c.document_id, s.part_of_type] for c in bundle.chunks),
    )
    args.append(f"--relationships={out / 'part_of.csv'}")
    mentions_out = s.mentions_direction == "out"
    _write(
        out / "mentions.csv",
        [":START_ID(Chunk)", ":END_ID(Entity)"]
        if mentions_out
        else [":START_ID(Entity)", ":END_ID(Chunk)"],
        (
            [c, e] if mentions_out else [e, c]
            for c, ids in bundle.chunk_entity_ids.items()
            for e in ids
        ),
    )
    args.append(f"--relationships={h(s.mentions_type)}={out / 'mentions.csv'}")
    if s.next_chunk_type:
        _write(
            out / "next_chunk.csv",
            [":START_ID(Chunk)", ":END_ID(Chunk)"],
            ([p["a"], p["b"]] for p in _next_chunk_pairs(bundle.chunks)),
        )
        args.append(f"--relationships={h(s.next_chunk_type)}={out / 'next_chunk.csv'}")

    reserved = s.structural_relationship_types | (
        {s.generic_relation_type} if s.relation_mode == "property" else set()
    )

    def relation_rows() -> Iterator[list[Any]]:
        for r in bundle.relations:
            rel_type = RESERVED_PREFIX + r.type if r.type in reserved else r.type
            if s.relation_mode == "property":
                yield [
                    r.head_id,
                    r.tail_id,
                    s.generic_relation_type,
                    rel_type,
                    r.predicate,
                    r.chunk_id,
                ]
            else:
                yield [r.head_id, r.tail_id, rel_type, r.predicate, r.chunk_id]

    rel_header = [":START_ID(Entity)", ":END_ID(Entity)", ":TYPE"]
    if s.relation_mode == "property":
        rel_header.append(h(s.relation_type_property))
    rel_header += [h(s.relation_text_property), h(s.relation_chunk_property)]
    _write(out / "relations.csv", rel_header, relation_rows())
    args.append(f"--relationships={out / 'relations.csv'}")
    return args


def _database_is_empty(driver: Driver, settings: Settings, schema: SchemaMapping) -> bool:
    records, _, _ = driver.execute_query(
        loader_query("load_bulk_nodes", schema), database_=settings.neo4j_database
    )
    return int(records[0]["nodes"]) == 0


def bulk_load(
    settings: Settings,
    schema: SchemaMapping,
    path: str | Path,
    *,
    server: LocalNeo4j,
    work_dir: Path | None = None,
) -> LoadReport:
    """Offline import of ``path`` into ``server``'s empty database, then migrations."""
    started = time.perf_counter()
    bundle = read_bundle(path)
    missing = len(bundle.chunks) - len(bundle.embeddings)
    if missing:
        raise EmbeddingError(
            f"{bundle.path}: {missing} chunk(s) have no precomputed embedding; --bulk imports "
            f"vectors as they are: load without --bulk (it embeds), or embed the bundle first"
        )
    dims = bundle.embedding_dimensions
    if dims is not None and dims != settings.embedding_dimensions:
        raise EmbeddingError(
            f"{bundle.path}: embeddings have {dims} dimensions but "
            f"GUIDEDRAG_EMBEDDING_DIMENSIONS={settings.embedding_dimensions}: set it to {dims}"
        )
    if settings.neo4j_database != "neo4j":
        raise ConfigurationError("--bulk imports into the managed server's `neo4j` database only")
    report = LoadReport(
        bundle=str(bundle.path),
        schema_preset=schema.preset,
        counts=bundle.counts(),
        chunks_precomputed=len(bundle.embeddings),
        entities_merged=len(bundle.merged_entities),
    )
    report.warnings.extend(bundle.warnings)
    report.timings["read"] = time.perf_counter() - started
    if server.status().running:
        driver = connect(settings)
        try:
            if not _database_is_empty(driver, settings, schema):
                raise ConfigurationError(
                    "--bulk replaces the whole database and this one holds data: load "
                    "without --bulk (it merges), or empty the database first"
                )
        finally:
            driver.close()
    with tempfile.TemporaryDirectory(prefix="guidedrag-import-", dir=work_dir) as tmp:
        t0 = time.perf_counter()
        arguments = write_import_files(bundle, schema, Path(tmp))
        report.timings["csv"] = time.perf_counter() - t0
        server.stop()
        t0 = time.perf_counter()
        server.import_full(
            [*arguments, f"--array-delimiter={ARRAY_DELIMITER}", "--multiline-fields=true"],
            heap=settings.neo4j_heap,
        )
        report.timings["import"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    server.start()
    report.timings["restart"] = time.perf_counter() - t0
    driver = connect(settings)
    try:
        t0 = time.perf_counter()
        report.migrations_applied = [
            m.path.name for m in apply_migrations(driver, settings, schema)
        ]
        report.timings["indexes"] = _wait_online(driver, settings, schema) + (
            time.perf_counter() - t0
        )
        empty_lists = loader_query("load_bulk_empty_lists", schema)
        while driver.execute_query(empty_lists, database_=settings.neo4j_database).records[0]["n"]:
            pass
    finally:
        driver.close()
    report.chunks_created = len(bundle.chunks)
    report.nodes_created = len(bundle.documents) + len(bundle.chunks) + len(bundle.entities)
    report.relationships_created = (
        len(bundle.chunks)
        + bundle.mention_count
        + len(bundle.relations)
        + (len(_next_chunk_pairs(bundle.chunks)) if schema.next_chunk_type else 0)
    )
    report.timings["chunks"] = report.timings["import"]
    report.timings["total"] = time.perf_counter() - started
    return report


def _wait_online(
    driver: Driver, settings: Settings, schema: SchemaMapping, timeout_s: float = 3600
) -> float:
    """Seconds until every index (the vector index over the imported chunks) is ONLINE."""
    t0 = time.perf_counter()
    query = loader_query("load_bulk_index_states", schema)
    while time.perf_counter() - t0 < timeout_s:
        records, _, _ = driver.execute_query(query, database_=settings.neo4j_database)
        if all(r["state"] == "ONLINE" for r in records):
            return time.perf_counter() - t0
        time.sleep(0.5)
    raise ConfigurationError(f"indexes not ONLINE after {timeout_s:.0f}s; see `guidedrag kb stats`")
