"""Load a KB bundle into Neo4j: batched ``UNWIND`` + ``MERGE`` on ids, idempotent and resumable.

Order of work, and why:
1. read and validate the whole bundle, check embedding dimensions against the vector index, and
   only then write (a broken bundle leaves the database untouched);
2. documents, then entities, then chunks (each chunk batch carries its text, embedding, PART_OF
   and MENTIONS in one transaction, so a killed loader leaves only whole chunks), then relations;
3. chunks that need embedding are embedded one batch at a time right before they are written, so
   after a crash a rerun reuses what is already in the database (same id and text, embedding
   present) or in the on-disk embedding cache, and embeds only the rest.

Chunks the database does not hold yet (one index seek per batch tells) are written with
``CREATE``; chunks it holds, and every other row, with ``MERGE`` on the bundle's ids followed by
``SET`` of the same values, so a second run creates nothing and changes no property value, and a
run resumed after a crash CREATEs exactly what is missing. Embeddings travel as packed VECTOR
parameters where the server speaks Bolt 6 (see ``_embedding_params``); the queries live in
``cypher/load_*.cypher``.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any, Literal

from neo4j import Driver
from neo4j.exceptions import IncompleteCommit, ServiceUnavailable, SessionExpired

from guidedrag_graph.config import Settings, redact_uri
from guidedrag_graph.db.connection import ServerInfo, server_info
from guidedrag_graph.embeddings import Embedder, embedder_for, vector_index_dimensions
from guidedrag_graph.errors import (
    ConfigurationError,
    DatabaseUnavailableError,
    EmbeddingError,
    EntityConflictError,
)
from guidedrag_graph.kb.batch_writes import BatchWriter, batches, progress_bar, write_chunks
from guidedrag_graph.kb.bundle import RESERVED_PREFIX, Bundle, ChunkRow
from guidedrag_graph.kb.bundle_reader import read_bundle
from guidedrag_graph.kb.load_conflicts import (
    content_conflicts,
    read_in_batches,
    refuse_or_report_content,
)
from guidedrag_graph.kb.load_report import LoadReport
from guidedrag_graph.migration.run import migrate as apply_migrations
from guidedrag_graph.schema.presets import SchemaMapping
from guidedrag_graph.templates import queries as templates

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "EntityConflict",
    "LoadReport",
    "OnConflict",
    "check_dimensions",
    "entity_conflicts",
    "load_bundle",
    "loader_query",
]

DEFAULT_BATCH_SIZE = 500
OnConflict = Literal["refuse", "update"]


def loader_query(
    name: str, schema: SchemaMapping, prefix: str = "", variant: dict[str, str] | None = None
) -> str:
    """A ``cypher/load_*.cypher`` template for ``schema`` (and ``variant``): names mapped and
    escaped once."""
    return prefix + templates.query(name, schema, variant=variant)


class _Queries:
    """The loader's Cypher (``cypher/load_*.cypher``), rendered once for the schema mapping."""

    def __init__(self, schema: SchemaMapping, server: ServerInfo) -> None:
        if server.version_tuple < (5, 26, 0):
            raise ConfigurationError(
                f"Neo4j {server.version} is too old for the loader (dynamic relationship types "
                f"need 5.26 or later): upgrade, e.g. `guidedrag neo4j start --version 5.26.30`"
            )
        p = server.cypher_prefix
        self.documents = loader_query("load_documents", schema, p)
        self.declared_entities = loader_query("load_entities_declared", schema, p)
        self.referenced_entities = loader_query("load_entities_referenced", schema, p)
        self.chunk_ids = loader_query("load_chunk_ids", schema, p)
        self.chunk_embeddings = loader_query("load_chunk_embeddings", schema, p)
        self.chunks_create = loader_query("load_chunks", schema, p, variant={"write": "create"})
        self.chunks_merge = loader_query("load_chunks", schema, p, variant={"write": "merge"})
        self.vector_probe = loader_query("load_vector_probe", schema, p)
        self.next_chunk = (
            loader_query("load_next_chunk", schema, p) if schema.next_chunk_type else None
        )
        mode = schema.relation_mode
        self.relations_with_chunk = loader_query(
            "load_relations", schema, p, variant={"mode": mode, "write": "merge"}
        )
        self.relations_without_chunk = loader_query(
            "load_relations", schema, p, variant={"mode": mode, "write": "no_chunk"}
        )
        self.relations_create = loader_query(
            "load_relations", schema, p, variant={"mode": mode, "write": "create"}
        )
        self.relations_present = loader_query("load_relations_present", schema, p)
        # Types a predicate may not take under this mapping (the bundle already reserved the
        # presets' structural types; a custom mapping may add its own).
        self.reserved_types = schema.structural_relationship_types | (
            {schema.generic_relation_type} if schema.relation_mode == "property" else set()
        )


def check_dimensions(
    driver: Driver,
    settings: Settings,
    bundle: Bundle,
    embedder: Embedder | None,
) -> int | None:
    """The vector length this load writes, checked against the index; raises before any write."""
    wanted: list[tuple[int, str]] = []
    if bundle.embedding_dimensions is not None:
        wanted.append((bundle.embedding_dimensions, "the bundle's precomputed embeddings"))
    if embedder is not None:
        wanted.append((embedder.dimensions, f"the embedder {embedder.model_id}"))
    if not wanted:
        return None
    indexed = vector_index_dimensions(driver, settings)
    target, target_name = (
        (indexed, f"the vector index {settings.vector_index_name!r}")
        if indexed is not None
        else (settings.embedding_dimensions, "GUIDEDRAG_EMBEDDING_DIMENSIONS")
    )
    for dims, what in wanted:
        if dims != target:
            raise EmbeddingError(
                f"{bundle.path}: {what} have {dims} dimensions but {target_name} expects "
                f"{target}: load with a matching embedder, or recreate the index with "
                f"GUIDEDRAG_EMBEDDING_DIMENSIONS={dims} (drop it, then `guidedrag migrate`)"
            )
    return target


@dataclass(frozen=True)
class EntityConflict:
    """A declared entity (``where``: ``entities.jsonl:3``) whose id the database holds as
    ``existing`` while the bundle names it ``name``."""

    where: str
    id: str
    existing: str
    name: str


def entity_conflicts(
    driver: Driver, settings: Settings, schema: SchemaMapping, bundle: Bundle, cypher_prefix: str
) -> list[EntityConflict]:
    """The bundle's declared entities whose id the database holds under another name.

    Read only (``cypher/load_entity_conflicts.cypher``, one index seek per entity), so a load
    can refuse before it writes anything. Entities only referenced are never conflicts: the
    loader creates them if absent and never overwrites one that exists.
    """
    rows = [{"id": e.id, "name": e.name} for e in bundle.entities if e.declared]
    if not rows:
        return []
    query = loader_query("load_entity_conflicts", schema, cypher_prefix)
    return [
        EntityConflict(
            bundle.entity_lines.get(r["id"], "entities.jsonl"),
            str(r["id"]),
            str(r["existing"]),
            str(r["name"]),
        )
        for r in read_in_batches(driver, settings, query, rows)
    ]


def _refuse_or_report(
    conflicts: list[EntityConflict], bundle: Bundle, report: LoadReport, on_conflict: OnConflict
) -> None:
    """Refuse the load on the first conflict (default), or record each rename (``update``)."""
    if not conflicts:
        return
    if on_conflict == "update":
        report.entities_renamed = [
            f"{bundle.path / c.where}: entity {c.id!r} renamed {c.existing!r} -> {c.name!r}"
            for c in conflicts
        ]
        return
    first = conflicts[0]
    more = f" (and {len(conflicts) - 1} more)" if len(conflicts) > 1 else ""
    raise EntityConflictError(
        f"{bundle.path / first.where}: entity id {first.id!r} exists in the database as "
        f"{first.existing!r}, the bundle names it {first.name!r}{more}; nothing was written: "
        f"give the bundle's entity another id, or rename it with --on-conflict=update "
        f"(Python: on_conflict='update')"
    )


def load_bundle(
    driver: Driver,
    settings: Settings,
    schema: SchemaMapping,
    path: str | Path | Bundle,
    *,
    embedder: Embedder | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    migrate: bool = True,
    progress: bool = False,
    on_conflict: OnConflict = "refuse",
) -> LoadReport:
    """Validate, then write a bundle; safe to rerun after a crash (finishes the job, no dups).

    A declared entity whose id the database holds under another name is a conflict, and so is a
    document or chunk whose id it holds with another title, source, date, text, position,
    document or metadata value (kb/load_conflicts.py): by default the load is refused
    (``EntityConflictError`` / ``LoadConflictError``, ``file:line``) before anything is written,
    migrations included; ``on_conflict="update"`` renames the entity or replaces the document or
    chunk and reports each in ``LoadReport.entities_renamed`` / ``LoadReport.replaced``. A bundle
    never silently overwrites what is there; reloading the same bundle is no conflict.

    A connection lost mid-load (the server killed or restarted) is a ``DatabaseUnavailableError``
    that says to rerun: every batch is one transaction, so what was written is whole, and the
    rerun MERGEs over it and CREATEs the rest.
    """
    if on_conflict not in ("refuse", "update"):
        raise ConfigurationError(f"on_conflict must be 'refuse' or 'update', not {on_conflict!r}")
    try:
        return _load_bundle(
            driver, settings, schema, path, embedder, batch_size, migrate, progress, on_conflict
        )
    except (ServiceUnavailable, SessionExpired, IncompleteCommit) as exc:
        where = path.path if isinstance(path, Bundle) else path
        raise DatabaseUnavailableError(
            f"lost the connection to Neo4j at {redact_uri(settings.neo4j_uri)} while loading "
            f"{where} ({exc.__class__.__name__}); every batch is all-or-nothing, so once the "
            f"server answers again, rerun the same command to resume"
        ) from exc


def _load_bundle(
    driver: Driver,
    settings: Settings,
    schema: SchemaMapping,
    path: str | Path | Bundle,
    embedder: Embedder | None,
    batch_size: int,
    migrate: bool,
    progress: bool,
    on_conflict: OnConflict,
) -> LoadReport:
    schema.check_loadable()
    started = time.perf_counter()
    bundle = path if isinstance(path, Bundle) else read_bundle(path)
    # A server that is down before the load starts fails here at once: each read below would
    # otherwise wait out the driver's 30 s of retries first (a server lost mid-load still does).
    driver.verify_connectivity()
    needs_embedding = any(c.id not in bundle.embeddings for c in bundle.chunks)
    if needs_embedding and embedder is None:
        embedder = embedder_for(settings)
    report = LoadReport.after_reading(bundle, schema, started)
    check_dimensions(driver, settings, bundle, embedder if needs_embedding else None)
    model = bundle.manifest.embedding_model
    if bundle.embeddings and model and embedder is not None and model != embedder.model_id:
        report.warnings.append(
            f"the bundle's embeddings come from {model} but queries will be embedded with "
            f"{embedder.model_id}: similarities across two models are meaningless"
        )
    server = server_info(driver, settings.neo4j_database)
    conflicts = entity_conflicts(driver, settings, schema, bundle, server.cypher_prefix)
    _refuse_or_report(conflicts, bundle, report, on_conflict)
    content = content_conflicts(driver, settings, schema, bundle, server.cypher_prefix)
    report.replaced = refuse_or_report_content(content, bundle, on_conflict)
    if migrate:
        report.migrations_applied = [
            m.path.name for m in apply_migrations(driver, settings, schema)
        ]
    queries = _Queries(schema, server)
    writer = BatchWriter(driver, settings.neo4j_database, report)
    size = max(1, batch_size)
    _write_documents_and_entities(bundle, queries, writer, size * 5, progress)
    report.vectors_as_bytes = writer.takes_vectors(queries.vector_probe)
    write_chunks(bundle, queries, writer, embedder, size, progress)
    if queries.next_chunk is not None:
        pairs = next_chunk_pairs(bundle.chunks)
        writer.stage("next_chunk", pairs, queries.next_chunk, size * 5, progress)
    t0 = time.perf_counter()
    _load_relations(bundle, queries, writer, size * 5, progress)
    report.timings["relations"] = time.perf_counter() - t0
    report.timings["total"] = time.perf_counter() - started
    return report


def _write_documents_and_entities(
    bundle: Bundle, queries: _Queries, writer: BatchWriter, per_batch: int, progress: bool
) -> None:
    """Documents, then the declared entities, then those only referenced (no type, no aliases)."""
    documents = [
        {
            "id": d.id,
            "title": d.title,
            "source": d.source,
            "date": d.date.isoformat() if d.date else None,
            "metadata": d.metadata,
        }
        for d in bundle.documents
    ]
    writer.stage("documents", documents, queries.documents, per_batch, progress)
    entity_rows = [
        (
            e.declared,
            {
                "id": e.id,
                "name": e.name,
                "name_key": e.name_key,
                "aliases": list(e.aliases),
                "alias_keys": list(e.alias_keys),
                "type": e.type,
                "description": e.description,
            },
        )
        for e in bundle.entities
    ]
    declared = [r for d, r in entity_rows if d]
    writer.stage("entities", declared, queries.declared_entities, per_batch, progress)
    referenced = [r for d, r in entity_rows if not d]
    writer.stage("entities", referenced, queries.referenced_entities, per_batch, progress)


def next_chunk_pairs(chunks: Iterable[ChunkRow]) -> list[dict[str, Any]]:
    """Consecutive chunks of each document, by position (file order when positions are absent)."""
    per_doc: dict[str, list[tuple[int, int, str]]] = defaultdict(list)
    for order, chunk in enumerate(chunks):
        position = chunk.position if chunk.position is not None else order
        per_doc[chunk.document_id].append((position, order, chunk.id))
    pairs: list[dict[str, Any]] = []
    for items in per_doc.values():
        items.sort()
        pairs.extend({"a": a[2], "b": b[2]} for a, b in pairwise(items))
    return pairs


def _load_relations(
    bundle: Bundle, queries: _Queries, writer: BatchWriter, size: int, progress: bool
) -> None:
    with_chunk: list[dict[str, Any]] = []
    without_chunk: list[dict[str, Any]] = []
    for rel in bundle.relations:
        rel_type = rel.type
        if rel_type in queries.reserved_types:
            rel_type = RESERVED_PREFIX + rel_type
        row = {
            "head": rel.head_id,
            "tail": rel.tail_id,
            "type": rel_type,
            "predicate": rel.predicate,
        }
        if rel.chunk_id is not None:
            row["chunk_id"] = rel.chunk_id
            with_chunk.append(row)
        else:
            without_chunk.append(row)
    # Nothing between entities yet: this bundle's relations (deduplicated by the reader) are all
    # new, so CREATE them. A crash leaves some behind, and the rerun takes the MERGE path.
    fresh = not writer.read(queries.relations_present, {})[0]["present"]
    plan = (
        [(queries.relations_create, with_chunk + without_chunk)]
        if fresh
        else [
            (queries.relations_with_chunk, with_chunk),
            (queries.relations_without_chunk, without_chunk),
        ]
    )
    with progress_bar(len(bundle.relations), "relations", progress) as bar:
        for query, rows in plan:
            for batch in batches(rows, size):
                writer.write(query, list(batch))
                bar.update(len(batch))
