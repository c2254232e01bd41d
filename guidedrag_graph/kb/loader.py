"""Load a KB bundle into Neo4j: batched ``UNWIND`` + ``MERGE`` on ids, idempotent and resumable.

Order of work, and why:
1. read and validate the whole bundle, check embedding dimensions against the vector index, and
   only then write (a broken bundle leaves the database untouched);
2. documents, then entities, then chunks (each chunk batch carries its text, embedding, PART_OF
   and MENTIONS in one transaction, so a killed loader leaves only whole chunks), then relations;
3. chunks that need embedding are embedded one batch at a time right before they are written, so
   after a crash a rerun reuses what is already in the database (same id and text, embedding
   present) or in the on-disk embedding cache, and embeds only the rest.

Every write is a ``MERGE`` on the bundle's ids followed by ``SET`` of the same values, so a second
run creates nothing and changes no property value.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from neo4j import Driver, NotificationMinimumSeverity, Record, Session
from tqdm import tqdm

from guidedrag_graph.config import Settings
from guidedrag_graph.db import ServerInfo, server_info
from guidedrag_graph.embeddings import Embedder, embedder_for, vector_index_dimensions
from guidedrag_graph.errors import EmbeddingError
from guidedrag_graph.kb.bundle import Bundle, ChunkRow, read_bundle
from guidedrag_graph.migrate import migrate as apply_migrations
from guidedrag_graph.schema import SchemaMapping

T = TypeVar("T")

DEFAULT_BATCH_SIZE = 200


@dataclass
class LoadReport:
    """What a load wrote and how long each stage took; ``created_*`` are 0 on a rerun."""

    bundle: str
    schema_preset: str
    counts: dict[str, int]
    chunks_embedded: int = 0
    chunks_reused: int = 0
    chunks_precomputed: int = 0
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


class _Queries:
    """The loader's Cypher, built once from the schema mapping (identifiers escaped)."""

    def __init__(self, schema: SchemaMapping, server: ServerInfo) -> None:
        s = schema
        q = s.q
        doc, chunk, ent = q(s.document_label), q(s.chunk_label), q(s.entity_label)
        self.documents = (
            f"UNWIND $rows AS row MERGE (d:{doc} {{{q(s.document_id)}: row.id}}) "
            f"SET d.{q(s.document_title)} = row.title, d.{q(s.document_source)} = row.source, "
            f"d.{q(s.document_date)} = CASE WHEN row.date IS NULL THEN null "
            f"ELSE date(row.date) END, d += row.metadata"
        )
        entity_props = (
            f"e.{q(s.entity_name)} = row.name, e.{q(s.entity_key)} = row.name_key, "
            f"e.{q(s.entity_aliases)} = row.aliases, e.{q(s.entity_alias_keys)} = row.alias_keys"
        )
        self.declared_entities = (
            f"UNWIND $rows AS row MERGE (e:{ent} {{{q(s.entity_id)}: row.id}}) "
            f"SET {entity_props}, e.{q(s.entity_type)} = row.type, "
            f"e.{q(s.entity_description)} = row.description"
        )
        # Entities only named by a chunk or relation: never erase what a declaring bundle set.
        self.referenced_entities = (
            f"UNWIND $rows AS row MERGE (e:{ent} {{{q(s.entity_id)}: row.id}}) "
            f"ON CREATE SET {entity_props}"
        )
        mention = s.mentions_pattern("c", "e")
        self.chunks = (
            f"UNWIND $rows AS row "
            f"MATCH (d:{doc} {{{q(s.document_id)}: row.document_id}}) "
            f"MERGE (c:{chunk} {{{q(s.chunk_id)}: row.id}}) "
            f"SET c.{q(s.chunk_text)} = row.text, c.document_id = row.document_id, "
            f"c.{q(s.chunk_position)} = row.position, c.{q(s.chunk_embedding)} = row.embedding, "
            f"c += row.metadata "
            f"MERGE {s.part_of_pattern('c', 'd')} "
            f"WITH c, row UNWIND row.entity_ids AS entity_id "
            f"MATCH (e:{ent} {{{q(s.entity_id)}: entity_id}}) "
            f"MERGE {mention}"
        )
        self.existing_chunks = (
            f"MATCH (c:{chunk}) WHERE c.{q(s.chunk_id)} IN $ids "
            f"AND c.{q(s.chunk_embedding)} IS NOT NULL "
            f"RETURN c.{q(s.chunk_id)} AS id, c.{q(s.chunk_text)} AS text, "
            f"c.{q(s.chunk_embedding)} AS embedding"
        )
        self.next_chunk = (
            (
                f"UNWIND $rows AS row MATCH (a:{chunk} {{{q(s.chunk_id)}: row.a}}) "
                f"MATCH (b:{chunk} {{{q(s.chunk_id)}: row.b}}) "
                f"MERGE (a)-[:{q(s.next_chunk_type)}]->(b)"
            )
            if s.next_chunk_type
            else None
        )
        ends = (
            f"UNWIND $rows AS row MATCH (h:{ent} {{{q(s.entity_id)}: row.head}}) "
            f"MATCH (t:{ent} {{{q(s.entity_id)}: row.tail}}) "
        )
        text, src = q(s.relation_text_property), q(s.relation_chunk_property)
        self.relation_mode = s.relation_mode
        # Dynamic relationship types in MERGE ($(expr)) exist from 5.26; older servers get one
        # query per type (the type name is built by relation_type_name: [A-Z0-9_] only).
        self.dynamic_types = server.version_tuple >= (5, 26, 0)
        if s.relation_mode == "property":
            generic = q(s.generic_relation_type)
            tprop = q(s.relation_type_property)
            self.relations_with_chunk = (
                f"{ends}MERGE (h)-[r:{generic} {{{tprop}: row.type, {text}: row.predicate, "
                f"{src}: row.chunk_id}}]->(t)"
            )
            self.relations_without_chunk = (
                f"{ends}MERGE (h)-[r:{generic} {{{tprop}: row.type, {text}: row.predicate}}]->(t)"
            )
        else:
            rel_type = "$(row.type)" if self.dynamic_types else "{type}"
            self.relations_with_chunk = (
                f"{ends}MERGE (h)-[r:{rel_type} "
                f"{{{text}: row.predicate, {src}: row.chunk_id}}]->(t)"
            )
            self.relations_without_chunk = (
                f"{ends}MERGE (h)-[r:{rel_type} {{{text}: row.predicate}}]->(t)"
            )
        self.prefix = server.cypher_prefix

    def relation_query(self, template: str, rel_type: str | None) -> str:
        if rel_type is None:
            return self.prefix + template
        return self.prefix + template.replace("{type}", SchemaMapping().q(rel_type))


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
    """Validate, then write a bundle; safe to rerun after a crash (finishes the job, no dups)."""
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
    )
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

    def stage(name: str, rows: list[dict[str, Any]], query: str) -> None:
        t0 = time.perf_counter()
        with _progress(len(rows), name, progress) as bar:
            for batch in _batches(rows, size):
                writer.write(query, list(batch))
                bar.update(len(batch))
        report.timings[name] = time.perf_counter() - t0

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
    )
    t0 = time.perf_counter()
    entity_rows = [
        {
            "id": e.id,
            "name": e.name,
            "name_key": e.name_key,
            "aliases": list(e.aliases),
            "alias_keys": list(e.alias_keys),
            "type": e.type,
            "description": e.description,
        }
        for e in bundle.entities
    ]
    with _progress(len(entity_rows), "entities", progress) as bar:
        declared_rows = [r for r, e in zip(entity_rows, bundle.entities, strict=True) if e.declared]
        referenced_rows = [
            r for r, e in zip(entity_rows, bundle.entities, strict=True) if not e.declared
        ]
        for query, rows in (
            (queries.declared_entities, declared_rows),
            (queries.referenced_entities, referenced_rows),
        ):
            for batch in _batches(rows, size * 5):
                writer.write(query, list(batch))
                bar.update(len(batch))
    report.timings["entities"] = time.perf_counter() - t0

    _load_chunks(driver, settings, bundle, queries, writer, embedder, size, progress, report)

    if queries.next_chunk is not None:
        stage("next_chunk", _next_chunk_pairs(bundle.chunks), queries.next_chunk)

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
    driver: Driver,
    settings: Settings,
    bundle: Bundle,
    queries: _Queries,
    writer: _Writer,
    embedder: Embedder | None,
    size: int,
    progress: bool,
    report: LoadReport,
) -> None:
    t0 = time.perf_counter()
    embed_seconds = 0.0
    with _progress(len(bundle.chunks), "chunks", progress) as bar:
        for batch in _batches(bundle.chunks, size):
            vectors: dict[str, np.ndarray | list[float]] = {
                c.id: bundle.embeddings[c.id] for c in batch if c.id in bundle.embeddings
            }
            missing = [c for c in batch if c.id not in vectors]
            if missing:
                # Resume: a chunk already in the database with the same text keeps its vector.
                records = writer.read(queries.existing_chunks, {"ids": [c.id for c in missing]})
                stored = {r["id"]: (r["text"], r["embedding"]) for r in records}
                todo: list[ChunkRow] = []
                for chunk in missing:
                    previous = stored.get(chunk.id)
                    if previous is not None and previous[0] == chunk.text and previous[1]:
                        vectors[chunk.id] = list(previous[1])
                        report.chunks_reused += 1
                    else:
                        todo.append(chunk)
                if todo:
                    assert embedder is not None
                    e0 = time.perf_counter()
                    fresh = embedder.embed_passages([c.text for c in todo])
                    embed_seconds += time.perf_counter() - e0
                    report.chunks_embedded += len(todo)
                    vectors.update(zip((c.id for c in todo), fresh, strict=True))
            rows = [
                {
                    "id": c.id,
                    "document_id": c.document_id,
                    "text": c.text,
                    "position": c.position,
                    "metadata": c.metadata,
                    "embedding": _as_list(vectors[c.id]),
                    "entity_ids": bundle.chunk_entity_ids.get(c.id, []),
                }
                for c in batch
            ]
            writer.write(queries.chunks, rows)
            bar.update(len(batch))
    report.timings["chunks"] = time.perf_counter() - t0
    report.timings["embedding"] = embed_seconds


def _as_list(vector: np.ndarray | list[float]) -> list[float]:
    if isinstance(vector, np.ndarray):
        return [float(x) for x in vector.astype(np.float32)]
    return [float(x) for x in vector]


def _load_relations(
    bundle: Bundle, queries: _Queries, writer: _Writer, size: int, progress: bool
) -> None:
    groups: dict[tuple[str | None, bool], list[dict[str, Any]]] = defaultdict(list)
    for rel in bundle.relations:
        row = {
            "head": rel.head_id,
            "tail": rel.tail_id,
            "type": rel.type,
            "predicate": rel.predicate,
            "chunk_id": rel.chunk_id,
        }
        per_type = queries.relation_mode == "types" and not queries.dynamic_types
        groups[(rel.type if per_type else None, rel.chunk_id is not None)].append(row)
    with _progress(len(bundle.relations), "relations", progress) as bar:
        for (rel_type, with_chunk), rows in groups.items():
            template = (
                queries.relations_with_chunk if with_chunk else queries.relations_without_chunk
            )
            query = queries.relation_query(template, rel_type)
            for batch in _batches(rows, size):
                writer.write(query, list(batch))
                bar.update(len(batch))
