"""Writing a bundle in batches: one transaction per batch, the server's counters added up.

Chunks take the most care (``write_chunks``): per batch, one index seek tells which ids the
database holds, their vectors come from the bundle, the database (a rerun after a crash) or the
embedder, and then new rows are CREATEd and known ones MERGEd. Two stages are in flight: the
server writes batch n while Python prepares batch n + 1.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

import numpy as np
from neo4j import Driver, NotificationMinimumSeverity, Record, Session
from neo4j.exceptions import DriverError, Neo4jError
from neo4j.vector import Vector
from tqdm import tqdm

from guidedrag_graph.db.driver_io import unlogged
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.kb.bundle import Bundle, ChunkRow
from guidedrag_graph.kb.load_report import LoadReport

T = TypeVar("T")


class ChunkQueries(Protocol):
    """The loader's chunk queries (``cypher/load_chunk*.cypher``), rendered for the schema."""

    chunk_ids: str
    chunk_embeddings: str
    chunks_create: str
    chunks_merge: str


def batches(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def progress_bar(total: int, desc: str, enabled: bool) -> tqdm[Any]:
    return tqdm(total=total, desc=desc, unit="row", disable=not enabled, leave=True)


class BatchWriter:
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
            return list(session.execute_read(lambda tx: list(tx.run(query, unlogged(params)))))

    def write(self, query: str, rows: list[dict[str, Any]]) -> None:
        if not rows:
            return
        with self.session() as session:
            summary = session.execute_write(
                lambda tx: tx.run(query, unlogged({"rows": rows})).consume()
            )
        counters = summary.counters
        self.report.nodes_created += counters.nodes_created
        self.report.relationships_created += counters.relationships_created
        self.report.properties_set += counters.properties_set

    def stage(
        self, name: str, rows: list[dict[str, Any]], query: str, per_batch: int, progress: bool
    ) -> None:
        """Write ``rows`` in batches; the seconds taken add to the report's ``name`` timing."""
        t0 = time.perf_counter()
        with progress_bar(len(rows), name, progress) as bar:
            for batch in batches(rows, per_batch):
                self.write(query, list(batch))
                bar.update(len(batch))
        timings = self.report.timings
        timings[name] = timings.get(name, 0.0) + time.perf_counter() - t0

    def takes_vectors(self, probe: str) -> bool:
        """True when the server accepts a VECTOR parameter (Bolt 6): embeddings go as bytes."""
        try:
            records = self.read(probe, {"v": Vector(np.array([0.6, 0.8], dtype=np.float32))})
        except (Neo4jError, DriverError, TypeError, ValueError):
            return False
        return bool(records) and records[0]["dims"] == 2


def write_chunks(
    bundle: Bundle,
    queries: ChunkQueries,
    writer: BatchWriter,
    embedder: Embedder | None,
    size: int,
    progress: bool,
) -> None:
    """Per batch: which ids exist (one index seek), vectors, then CREATE new / MERGE known rows."""
    report = writer.report
    t0 = time.perf_counter()
    vectors = _ChunkVectors(bundle, queries, writer, embedder)
    # Two stages in flight: the server writes batch n while Python prepares batch n + 1 (the
    # driver waits on its socket without the GIL). One writer thread keeps the order of writes.
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="guidedrag-load")
    pending: Future[None] | None = None

    def write_batch(new_rows: list[dict[str, Any]], known_rows: list[dict[str, Any]]) -> None:
        writer.write(queries.chunks_create, new_rows)
        writer.write(queries.chunks_merge, known_rows)

    with pool, progress_bar(len(bundle.chunks), "chunks", progress) as bar:
        for batch in batches(bundle.chunks, size):
            present = {
                r["id"]: (r["text"], r["has_embedding"])
                for r in writer.read(queries.chunk_ids, {"ids": [c.id for c in batch]})
            }
            new_rows, known_rows = _chunk_rows(
                bundle, batch, present, vectors.of(batch, present), report.vectors_as_bytes
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
    report.timings["embedding"] = vectors.embed_seconds


class _ChunkVectors:
    """A batch's vectors: the bundle's, else the database's (same text), else the embedder's."""

    def __init__(
        self,
        bundle: Bundle,
        queries: ChunkQueries,
        writer: BatchWriter,
        embedder: Embedder | None,
    ) -> None:
        self.bundle, self.queries, self.writer, self.embedder = bundle, queries, writer, embedder
        self.embed_seconds = 0.0

    def of(
        self, batch: Sequence[ChunkRow], present: dict[str, tuple[str, bool]]
    ) -> dict[str, np.ndarray]:
        report = self.writer.report
        embeddings = self.bundle.embeddings
        vectors: dict[str, np.ndarray] = {
            c.id: embeddings[c.id] for c in batch if c.id in embeddings
        }
        missing = [c for c in batch if c.id not in vectors]
        if not missing:
            return vectors
        # Resume: a chunk already in the database with the same text keeps its vector.
        reusable = [c.id for c in missing if present.get(c.id, ("", False)) == (c.text, True)]
        if reusable:
            for r in self.writer.read(self.queries.chunk_embeddings, {"ids": reusable}):
                vectors[r["id"]] = np.asarray(r["embedding"], dtype=np.float32)
            report.chunks_reused += len(reusable)
        todo = [c for c in missing if c.id not in vectors]
        if todo:
            assert self.embedder is not None
            e0 = time.perf_counter()
            fresh = self.embedder.embed_passages([c.text for c in todo])
            self.embed_seconds += time.perf_counter() - e0
            report.chunks_embedded += len(todo)
            vectors.update(
                zip((c.id for c in todo), np.asarray(fresh, dtype=np.float32), strict=True)
            )
        return vectors


def _chunk_rows(
    bundle: Bundle,
    batch: Sequence[ChunkRow],
    present: dict[str, tuple[str, bool]],
    vectors: dict[str, np.ndarray],
    as_vectors: bool,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The batch as query rows: those the database lacks (CREATE) and those it holds (MERGE)."""
    embeddings = _embedding_params(np.stack([vectors[c.id] for c in batch]), as_vectors)
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
    return new_rows, known_rows


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
