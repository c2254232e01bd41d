"""``guidedrag load --bulk``: a first load through Neo4j's offline importer, same graph as ``load``.

The transactional loader pays a Bolt round trip and a transaction per batch; for a large first
load Neo4j's own ``neo4j-admin database import full`` writes the store files directly. It needs
the database offline, so this path drives the *managed* server (``guidedrag neo4j start``): it
refuses a ``NEO4J_URI`` that names another server (the import would replace one database and the
migrations and counts go to the other), starts the server if it is stopped (only a running server
can say whether its database holds data) and refuses a database that holds data, writes the
bundle as the importer's CSV files, stops the server, imports (replacing the empty database),
starts it again and applies the migrations, which create the constraints and the vector index
over the imported chunks.

The graph is the one ``load_bundle`` writes (see :mod:`~guidedrag_graph.kb.import_files`).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from neo4j import Driver

from guidedrag_graph.config import BOLT_DEFAULT_PORT, Settings, loopback_port, redact_uri
from guidedrag_graph.db.connection import connect
from guidedrag_graph.errors import ConfigurationError, EmbeddingError
from guidedrag_graph.identifiers import quote_name
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

# A progress line: where the bulk load stands while it waits (the CLI prints it to stderr).
Progress = Callable[[str], None]
# How long a bulk load waits for its indexes (the 1M-chunk vector index took ~20 min on two
# cores), how often it looks, and how often it says how far they are.
WAIT_ONLINE_S = 3600.0
POLL_S = 0.5
PROGRESS_S = 30.0


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
    progress: Progress | None = None,
) -> LoadReport:
    """Offline import of ``path`` into ``server``'s empty database, then migrations; while the
    indexes populate, ``progress`` is given a line now and then."""
    started = time.perf_counter()
    check_same_server(settings, server)
    bundle = read_bundle(path, workers=default_workers())
    _check_importable(bundle, settings)
    report = LoadReport.after_reading(bundle, schema, started)
    if not server.status().running:
        # A stopped server's database may hold data as well; the import would overwrite it
        # unasked. Only a running server can say, and the load ends with it running anyway.
        server.start()
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
    _after_import(settings, schema, report, progress)
    _count_imported(bundle, schema, report)
    report.timings["total"] = time.perf_counter() - started
    return report


def check_same_server(settings: Settings, server: LocalNeo4j) -> None:
    """``NEO4J_URI`` must name ``server``: the import replaces that home's database, while the
    emptiness check, the migrations and the counts go through ``NEO4J_URI``. Pointed at another
    server, the check would pass on the wrong database and the data the import overwrites was
    never looked at (and the server asked for would get the schema and no data)."""
    if loopback_port(settings.neo4j_uri, default=BOLT_DEFAULT_PORT) == server.bolt_port:
        return
    raise ConfigurationError(
        f"--bulk imports into the managed server in {server.home} (bolt port "
        f"{server.bolt_port}), but NEO4J_URI is {redact_uri(settings.neo4j_uri)}: set "
        f"NEO4J_URI=bolt://127.0.0.1:{server.bolt_port}, or GUIDEDRAG_NEO4J_HOME and "
        f"GUIDEDRAG_NEO4J_BOLT_PORT to the server NEO4J_URI names"
    )


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


def _after_import(
    settings: Settings, schema: SchemaMapping, report: LoadReport, progress: Progress | None
) -> None:
    """Migrations (constraints, the vector index), empty lists removed, indexes online."""
    driver = connect(settings)
    try:
        t0 = time.perf_counter()
        # The vector index populates in the background once created; the wait is ours, with
        # progress (db.awaitIndexes gave up on 1M chunks' index after its 600 s).
        report.migrations_applied = [
            m.path.name for m in apply_migrations(driver, settings, schema, await_timeout_s=None)
        ]
        report.timings["migrations"] = time.perf_counter() - t0
        empty_lists = loader_query("load_bulk_empty_lists", schema)
        while driver.execute_query(empty_lists, database_=settings.neo4j_database).records[0]["n"]:
            pass
        population = _wait_online(driver, settings, schema, progress=progress)
        report.timings["index_population"] = population
        report.timings["indexes"] = report.timings["migrations"] + population
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
    driver: Driver,
    settings: Settings,
    schema: SchemaMapping,
    timeout_s: float = WAIT_ONLINE_S,
    progress: Progress | None = None,
) -> float:
    """Seconds until every index (the vector index over the imported chunks) is ONLINE, with a
    progress line every ``PROGRESS_S`` seconds while one populates."""
    t0 = time.perf_counter()
    query = loader_query("load_bulk_index_states", schema)
    said = t0
    while True:
        records, _, _ = driver.execute_query(query, database_=settings.neo4j_database)
        waiting = index_population([r.data() for r in records])
        now = time.perf_counter()
        if not waiting:
            return now - t0
        if now - t0 >= timeout_s:
            raise ConfigurationError(still_populating(waiting, now - t0))
        if progress is not None and now - said >= PROGRESS_S:
            progress(f"indexes populating after {now - t0:.0f}s: {_percents(waiting)}")
            said = now
        time.sleep(min(POLL_S, max(0.0, timeout_s - (now - t0))))


def index_population(rows: list[dict[str, Any]]) -> list[tuple[str, float]]:
    """The indexes not yet ONLINE, with how far each has populated (``load_bulk_index_states``'
    rows); one that FAILED ends the wait at once, since it never comes ONLINE by itself."""
    failed = [quote_name(str(r["name"])) for r in rows if r["state"] == "FAILED"]
    if failed:
        raise ConfigurationError(
            f"index {', '.join(failed)} FAILED while populating over the imported data: "
            f"SHOW INDEXES names the cause; drop it and run `guidedrag migrate` to build it again"
        )
    return [(str(r["name"]), float(r["percent"] or 0.0)) for r in rows if r["state"] != "ONLINE"]


def still_populating(waiting: list[tuple[str, float]], waited_s: float) -> str:
    """The one line a bulk load ends with when its wait for the indexes runs out: the data is
    in, the indexes go on populating on their own, and how to see when they are done."""
    return (
        f"the data is imported, but after {waited_s:.0f}s index {_percents(waiting)} is still "
        f"populating: it comes ONLINE by itself; `guidedrag kb stats` (or SHOW INDEXES) says when"
    )


def _percents(waiting: list[tuple[str, float]]) -> str:
    # index names come from the database: quoted, so none can print a line of its own
    return ", ".join(f"{quote_name(name)} ({percent:.0f}%)" for name, percent in waiting)
