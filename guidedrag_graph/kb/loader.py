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
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from neo4j import Driver, NotificationMinimumSeverity, Record, Session
from neo4j.exceptions import (
    DriverError,
    IncompleteCommit,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
)
from neo4j.vector import Vector
from tqdm import tqdm

from guidedrag_graph import templates
from guidedrag_graph.config import Settings, redact_uri
from guidedrag_graph.db import ServerInfo, server_info
from guidedrag_graph.embeddings import Embedder, embedder_for, vector_index_dimensions
from guidedrag_graph.errors import ConfigurationError, DatabaseUnavailableError, EmbeddingError
from guidedrag_graph.kb.bundle import RESERVED_PREFIX, Bundle, ChunkRow, read_bundle
from guidedrag_graph.migrate import migrate as apply_migrations
from guidedrag_graph.schema import SchemaMapping

T = TypeVar("T")

DEFAULT_BATCH_SIZE = 500


@dataclass
class LoadReport:
    """What a load wrote and how long each stage took; ``created_*`` are 0 on a rerun."""

    bundle: str
    schema_preset: str
    counts: dict[str, int]
    chunks_embedded: int = 0
    chunks_reused: int = 0
    chunks_precomputed: int = 0
    chunks_created: int = 0
    chunks_merged: int = 0
    entities_merged: int = 0
    vectors_as_bytes: bool = False
    nodes_created: int = 0
    relationships_created: int = 0
    properties_set: int = 0
    migrations_applied: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def chunks_per_second(self) -> float:
        seconds = self.timings.get("chunks", 0.0)
        return self.counts.get("chunks", 0) / seconds if seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "bundle": self.bundle,
            "schema_preset": self.schema_preset,
            "counts": self.counts,
            "chunks_embedded": self.chunks_embedded,
            "chunks_reused": self.chunks_reused,
            "chunks_precomputed": self.chunks_precomputed,
            "chunks_created": self.chunks_created,
            "chunks_merged": self.chunks_merged,
            "entities_merged": self.entities_merged,
            "vectors_as_bytes": self.vectors_as_bytes,
            "nodes_created": self.nodes_created,
            "relationships_created": self.relationships_created,
            "properties_set": self.properties_set,
            "migrations_applied": self.migrations_applied,
            "timings_s": {k: round(v, 3) for k, v in self.timings.items()},
            "chunks_per_second": round(self.chunks_per_second, 1),
            "warnings": self.warnings,
        }


def _batches(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def loader_query(name: str, schema: SchemaMapping, prefix: str = "") -> str:
    """A ``cypher/load_*.cypher`` template for ``schema``: names mapped and escaped once."""
    return prefix + templates.query(name, schema)


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
        self.chunks_create = loader_query("load_chunks_create", schema, p)
        self.chunks_merge = loader_query("load_chunks_merge", schema, p)
        self.vector_probe = loader_query("load_vector_probe", schema, p)
        self.next_chunk = (
            loader_query("load_next_chunk", schema, p) if schema.next_chunk_type else None
        )
        mode = "_property" if schema.relation_mode == "property" else ""
        self.relations_with_chunk = loader_query(f"load_relations{mode}", schema, p)
        self.relations_without_chunk = loader_query(f"load_relations{mode}_no_chunk", schema, p)
        self.relations_create = loader_query(f"load_relations{mode}_create", schema, p)
        self.relations_present = loader_query("load_relations_present", schema, p)
        # Types a predicate may not take under this mapping (the bundle already reserved the
        # presets' structural types; a custom mapping may add its own).
        self.reserved_types = schema.structural_relationship_types | (
            {schema.generic_relation_type} if schema.relation_mode == "property" else set()
        )


class _Writer:
    """Runs write batches and adds up the server's counters."""

    def __init__(self, driver: Driver, database: str, report: LoadReport) -> None:
        self.driver = driver
        self.database = database
        self.report = report

    def session(self) -> Session:
        # Loading into an empty database makes the server warn about property keys it has not
        # seen yet ("c.text does not exist"): expected here, so those notifications are off.
        return self.driver.session(
            database=self.database, notifications_min_severity=NotificationMinimumSeverity.OFF
        )

    def read(self, query: str, params: dict[str, Any]) -> list[Record]:
        with self.session() as session:
            return list(session.execute_read(lambda tx: list(tx.run(query, params))))

    def write(self, query: str, rows: list[dict[str, Any]]) -> None:
        if not rows:
            return
        with self.session() as session:
            summary = session.execute_write(lambda tx: tx.run(query, {"rows": rows}).consume())
        counters = summary.counters
        self.report.nodes_created += counters.nodes_created
        self.report.relationships_created += counters.relationships_created
        self.report.properties_set += counters.properties_set

    def takes_vectors(self, probe: str) -> bool:
        """True when the server accepts a VECTOR parameter (Bolt 6): embeddings go as bytes."""
        try:
            records = self.read(probe, {"v": Vector(np.array([0.6, 0.8], dtype=np.float32))})
        except (Neo4jError, DriverError, TypeError, ValueError):
            return False
        return bool(records) and records[0]["dims"] == 2


def _progress(total: int, desc: str, enabled: bool) -> tqdm[Any]:
    return tqdm(total=total, desc=desc, unit="row", disable=not enabled, leave=True)


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
) -> LoadReport:
    """Validate, then write a bundle; safe to rerun after a crash (finishes the job, no dups).

    A connection lost mid-load (the server killed or restarted) is a ``DatabaseUnavailableError``
    that says to rerun: every batch is one transaction, so what was written is whole, and the
    rerun MERGEs over it and CREATEs the rest.
    """
    try:
        return _load_bundle(driver, settings, schema, path, embedder, batch_size, migrate, progress)
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
) -> LoadReport:
    schema.check_loadable()
    started = time.perf_counter()
    bundle = path if isinstance(path, Bundle) else read_bundle(path)
    database = settings.neo4j_database
    needs_embedding = [c for c in bundle.chunks if c.id not in bundle.embeddings]
    if needs_embedding and embedder is None:
        embedder = embedder_for(settings)
    report = LoadReport(
        bundle=str(bundle.path),
        schema_preset=schema.preset,
        counts=bundle.counts(),
        chunks_precomputed=len(bundle.embeddings),
        entities_merged=len(bundle.merged_entities),
    )
    report.warnings.extend(bundle.warnings)
    report.timings["read"] = time.perf_counter() - started
    check_dimensions(driver, settings, bundle, embedder if needs_embedding else None)
    model = bundle.manifest.embedding_model
    if bundle.embeddings and model and embedder is not None and model != embedder.model_id:
        report.warnings.append(
            f"the bundle's embeddings come from {model} but queries will be embedded with "
            f"{embedder.model_id}: similarities across two models are meaningless"
        )

    if migrate:
        report.migrations_applied = [
            m.path.name for m in apply_migrations(driver, settings, schema)
        ]
    server = server_info(driver, database)
    queries = _Queries(schema, server)
    writer = _Writer(driver, database, report)
    size = max(1, batch_size)

    def stage(name: str, rows: list[dict[str, Any]], query: str, per_batch: int) -> None:
        t0 = time.perf_counter()
        with _progress(len(rows), name, progress) as bar:
            for batch in _batches(rows, per_batch):
                writer.write(query, list(batch))
                bar.update(len(batch))
        report.timings[name] = report.timings.get(name, 0.0) + time.perf_counter() - t0

    stage(
        "documents",
        [
            {
                "id": d.id,
                "title": d.title,
                "source": d.source,
                "date": d.date.isoformat() if d.date else None,
                "metadata": d.metadata,
            }
            for d in bundle.documents
        ],
        queries.documents,
        size * 5,
    )
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
    stage("entities", [r for d, r in entity_rows if d], queries.declared_entities, size * 5)
    stage("entities", [r for d, r in entity_rows if not d], queries.referenced_entities, size * 5)

    report.vectors_as_bytes = writer.takes_vectors(queries.vector_probe)
    _load_chunks(bundle, queries, writer, embedder, size, progress, report)

    if queries.next_chunk is not None:
        stage("next_chunk", _next_chunk_pairs(bundle.chunks), queries.next_chunk, size * 5)

    t0 = time.perf_counter()
    _load_relations(bundle, queries, writer, size * 5, progress)
    report.timings["relations"] = time.perf_counter() - t0
    report.timings["total"] = time.perf_counter() - started
    return report


def _next_chunk_pairs(chunks: Iterable[ChunkRow]) -> list[dict[str, Any]]:
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


def _load_chunks(
    bundle: Bundle,
    queries: _Queries,
    writer: _Writer,
    embedder: Embedder | None,
    size: int,
    progress: bool,
    report: LoadReport,
) -> None:
    """Per batch: which ids exist (one index seek), vectors, then CREATE new / MERGE known rows."""
    t0 = time.perf_counter()
    embed_seconds = 0.0
    # Two stages in flight: the server writes batch n while Python prepares batch n + 1 (the
    # driver waits on its socket without the GIL). One writer thread keeps the order of writes.
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="guidedrag-load")
    pending: Future[None] | None = None

    def write_batch(new_rows: list[dict[str, Any]], known_rows: list[dict[str, Any]]) -> None:
        writer.write(queries.chunks_create, new_rows)
        writer.write(queries.chunks_merge, known_rows)

    with pool, _progress(len(bundle.chunks), "chunks", progress) as bar:
        for batch in _batches(bundle.chunks, size):
            ids = [c.id for c in batch]
            present = {
                r["id"]: (r["text"], r["has_embedding"])
                for r in writer.read(queries.chunk_ids, {"ids": ids})
            }
            vectors: dict[str, np.ndarray] = {
                c.id: bundle.embeddings[c.id] for c in batch if c.id in bundle.embeddings
            }
            missing = [c for c in batch if c.id not in vectors]
            if missing:
                # Resume: a chunk already in the database with the same text keeps its vector.
                reusable = [
                    c.id for c in missing if present.get(c.id, ("", False)) == (c.text, True)
                ]
                if reusable:
                    for r in writer.read(queries.chunk_embeddings, {"ids": reusable}):
                        vectors[r["id"]] = np.asarray(r["embedding"], dtype=np.float32)
                    report.chunks_reused += len(reusable)
                todo = [c for c in missing if c.id not in vectors]
                if todo:
                    assert embedder is not None
                    e0 = time.perf_counter()
                    fresh = embedder.embed_passages([c.text for c in todo])
                    embed_seconds += time.perf_counter() - e0
                    report.chunks_embedded += len(todo)
                    vectors.update(
                        zip(
                            (c.id for c in todo),
                            np.asarray(fresh, dtype=np.float32),
                            strict=True,
                        )
                    )
            embeddings = _embedding_params(
                np.stack([vectors[c.id] for c in batch]), report.vectors_as_bytes
            )
            new_rows: list[dict[str, Any]] = []
            known_rows: list[dict[str, Any]] = []
            for c, embedding in zip(batch, embeddings, strict=True):
                (known_rows if c.id in present else new_rows).append(
                    {
                        "id": c.id,
                        "document_id": c.document_id,
                        "text": c.text,
                        "position": c.position,
                        "metadata": c.metadata,
                        "embedding": embedding,
                        "entity_ids": bundle.chunk_entity_ids.get(c.id, []),
                    }
                )
            if pending is not None:
                pending.result()
                bar.update(size)
            pending = pool.submit(write_batch, new_rows, known_rows)
            report.chunks_created += len(new_rows)
            report.chunks_merged += len(known_rows)
        if pending is not None:
            pending.result()
        bar.n = len(bundle.chunks)
        bar.refresh()
    report.timings["chunks"] = time.perf_counter() - t0
    report.timings["embedding"] = embed_seconds


def _embedding_params(matrix: np.ndarray, as_vectors: bool) -> list[Any]:
    """One batch's vectors as query parameters, converted for the whole batch at once.

    Bolt 6 servers get a ``Vector`` per row: big-endian float32 bytes, packed by the driver as one
    byte string (a list of 384 floats costs ~384 packstream calls in pure Python). Older servers
    get lists of floats (the float32 values widened to float64, exactly what was stored before).
    """
    if as_vectors:
        big_endian = np.ascontiguousarray(matrix, dtype=">f4")
        return [Vector(row.tobytes(), "f32") for row in big_endian]
    return list(matrix.astype(np.float64).tolist())


def _load_relations(
    bundle: Bundle, queries: _Queries, writer: _Writer, size: int, progress: bool
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
    with _progress(len(bundle.relations), "relations", progress) as bar:
        for query, rows in plan:
            for batch in _batches(rows, size):
                writer.write(query, list(batch))
                bar.update(len(batch))
