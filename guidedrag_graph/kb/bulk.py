"""``guidedrag load --bulk``: a first load through Neo4j's offline importer, same graph as ``load``.

The transactional loader pays a Bolt round trip and a transaction per batch; for a large first
load Neo4j's own ``neo4j-admin database import full`` writes the store files directly. It needs
the database offline, so this path drives the *managed* server (``guidedrag neo4j start``): it
refuses a database that holds data, writes the bundle as the importer's CSV files, stops the
server, imports (replacing the empty database), starts it again and applies the migrations, which
create the constraints and the vector index over the imported chunks.

The graph is the one ``load_bundle`` writes (see :mod:`~guidedrag_graph.kb.import_files`).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.db.connection import connect
from guidedrag_graph.errors import ConfigurationError, EmbeddingError
from guidedrag_graph.kb.bundle import Bundle
from guidedrag_graph.kb.bundle_parallel import default_workers
from guidedrag_graph.kb.bundle_reader import read_bundle
from guidedrag_graph.kb.import_files import ARRAY_DELIMITER, ImportFiles, write_import_files
from guidedrag_graph.kb.load_report import LoadReport
from guidedrag_graph.kb.loader import loader_query, next_chunk_pairs
from guidedrag_graph.migration.run import migrate as apply_migrations
from guidedrag_graph.runtime import LocalNeo4j
from guidedrag_graph.schema.presets import SchemaMapping

__all__ = ["bulk_load", "write_import_files"]


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
    bundle = read_bundle(path, workers=default_workers())
    _check_importable(bundle, settings)
    report = LoadReport.after_reading(bundle, schema, started)
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
        files = write_import_files(bundle, schema, Path(tmp))
        report.timings["csv"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        server.stop()
        report.timings["stop"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        server.import_full(
            [*files.arguments, f"--array-delimiter={ARRAY_DELIMITER}", *_multiline(files)],
            heap=settings.neo4j_heap,
        )
        report.timings["import"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    server.start()
    report.timings["restart"] = time.perf_counter() - t0
    _after_import(settings, schema, report)
    _count_imported(bundle, schema, report)
    report.timings["total"] = time.perf_counter() - started
    return report


def _multiline(files: ImportFiles) -> list[str]:
    """Multiline parsing for the files that need it only: it is single-threaded, so asking it
    for every file (``--multiline-fields=true``) serialises the whole import."""
    if not files.multiline:
        return ["--multiline-fields=false"]
    return [
        "--multiline-fields-format=v2",
        "--multiline-fields=" + ",".join(str(p) for p in files.multiline),
    ]


def _check_importable(bundle: Bundle, settings: Settings) -> None:
    """The importer takes vectors as they are, into the managed server's ``neo4j`` database."""
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


def _after_import(settings: Settings, schema: SchemaMapping, report: LoadReport) -> None:
    """Migrations (constraints, the vector index), indexes online, empty lists removed."""
    driver = connect(settings)
    try:
        t0 = time.perf_counter()
        report.migrations_applied = [
            m.path.name for m in apply_migrations(driver, settings, schema)
        ]
        report.timings["migrations"] = time.perf_counter() - t0
        # The vector index populates in the background once created: until it is ONLINE.
        population = _wait_online(driver, settings, schema)
        report.timings["index_population"] = population
        report.timings["indexes"] = report.timings["migrations"] + population
        empty_lists = loader_query("load_bulk_empty_lists", schema)
        while driver.execute_query(empty_lists, database_=settings.neo4j_database).records[0]["n"]:
            pass
    finally:
        driver.close()


def _count_imported(bundle: Bundle, schema: SchemaMapping, report: LoadReport) -> None:
    """What the importer created: the whole bundle (it refuses a database holding data)."""
    report.chunks_created = len(bundle.chunks)
    report.nodes_created = len(bundle.documents) + len(bundle.chunks) + len(bundle.entities)
    report.relationships_created = (
        len(bundle.chunks)
        + bundle.mention_count
        + len(bundle.relations)
        + (len(next_chunk_pairs(bundle.chunks)) if schema.next_chunk_type else 0)
    )
    report.timings["chunks"] = report.timings["import"]


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
