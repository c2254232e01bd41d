"""Ingest speed of ``guidedrag load`` with precomputed embeddings: chunks/s, with a profile.

Wipes the target database, migrates, and loads a bundle (default: a synthetic 10k-chunk bundle
written on the fly) ``--runs`` times: first load into an empty database (``CREATE`` path), then
a reload of the same bundle (``MERGE`` path). Prints read and write seconds, chunks/s and the load
average beside every figure. ``--profile`` prints the top functions of a cProfile of one load.

    python benchmarks/ingest_bench.py --uri bolt://127.0.0.1:17701 --password ... \
        --i-know-this-wipes-the-db [--bundle DIR] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import tempfile
import time
from pathlib import Path

from neo4j import Driver, GraphDatabase

from guidedrag_graph.config import Settings
from guidedrag_graph.kb import load_bundle, read_bundle, sample_kb_dir
from guidedrag_graph.migration.run import migrate
from guidedrag_graph.schema.presets import PRESETS


def wipe(driver: Driver) -> None:
    """Delete every node, constraint and index but the token lookups (benchmark databases only)."""
    while driver.execute_query(
        "MATCH (n) WITH n LIMIT 20000 DETACH DELETE n RETURN count(*) AS n"
    ).records[0]["n"]:
        pass
    for r in driver.execute_query("SHOW CONSTRAINTS YIELD name").records:
        driver.execute_query(f"DROP CONSTRAINT `{r['name']}` IF EXISTS")
    for r in driver.execute_query(
        "SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name"
    ).records:
        driver.execute_query(f"DROP INDEX `{r['name']}` IF EXISTS")


def server_cpu(pid: int | None) -> float:
    """CPU seconds (user + system) the Neo4j server process has used so far; 0 without a pid."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uri", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--bundle", type=Path, default=None)
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=None)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument(
        "--server-pid", type=int, default=None, help="the Neo4j JVM's pid: report its CPU/chunk"
    )
    parser.add_argument("--i-know-this-wipes-the-db", dest="confirmed", action="store_true")
    args = parser.parse_args()
    if not args.confirmed:
        parser.error("this deletes everything in the database: pass --i-know-this-wipes-the-db")
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        neo4j_uri=args.uri,
        neo4j_password=args.password,
    )
    schema = PRESETS["guidedrag"]
    root = args.bundle
    if root is None:
        # Imported here so this script also times older checkouts (PYTHONPATH=<old tree>).
        from guidedrag_graph.kb.synthetic import SyntheticSpec, write_synthetic_bundle

        root = Path(tempfile.mkdtemp(prefix="ingest-")) / "kb"
        write_synthetic_bundle(root, SyntheticSpec(args.chunks), centres_dir=sample_kb_dir())
    extra = {"batch_size": args.batch_size} if args.batch_size else {}
    driver = GraphDatabase.driver(args.uri, auth=("neo4j", args.password))
    t0, c0 = time.perf_counter(), time.process_time()
    bundle = read_bundle(root)
    read_s = time.perf_counter() - t0
    n = len(bundle.chunks)
    read_cpu = (time.process_time() - c0) / n * 1000
    print(f"read {n} chunks in {read_s:.2f}s ({n / read_s:.0f} chunks/s), CPU "
          f"{read_cpu:.3f} ms/chunk  load {os.getloadavg()}")  # fmt: skip
    first: list[float] = []
    reload: list[float] = []
    cpu_first: list[tuple[float, float]] = []
    cpu_reload: list[tuple[float, float]] = []
    for run in range(args.runs):
        wipe(driver)
        migrate(driver, settings, schema)
        profiler = cProfile.Profile() if args.profile and run == 0 else None
        t0, c0, s0 = time.perf_counter(), time.process_time(), server_cpu(args.server_pid)
        if profiler:
            profiler.enable()
        report = load_bundle(driver, settings, schema, bundle, migrate=False, **extra)
        if profiler:
            profiler.disable()
        total = time.perf_counter() - t0
        py_ms = (time.process_time() - c0) / n * 1000
        db_ms = (server_cpu(args.server_pid) - s0) / n * 1000
        first.append(n / total)
        cpu_first.append((py_ms, db_ms))
        print(f"run {run} empty db: {total:.2f}s, {n / total:.0f} chunks/s overall, chunks stage "
              f"{report.chunks_per_second:.0f}/s; CPU per chunk: Python {py_ms:.3f} ms, Neo4j "
              f"{db_ms:.3f} ms; stages {report.to_dict()['timings_s']}  "
              f"load {os.getloadavg()}")  # fmt: skip
        t0, c0, s0 = time.perf_counter(), time.process_time(), server_cpu(args.server_pid)
        load_bundle(driver, settings, schema, bundle, migrate=False, **extra)
        total = time.perf_counter() - t0
        py_ms = (time.process_time() - c0) / n * 1000
        db_ms = (server_cpu(args.server_pid) - s0) / n * 1000
        reload.append(n / total)
        cpu_reload.append((py_ms, db_ms))
        print(f"run {run} reload:   {total:.2f}s, {n / total:.0f} chunks/s; CPU per chunk: Python "
              f"{py_ms:.3f} ms, Neo4j {db_ms:.3f} ms  load {os.getloadavg()}")  # fmt: skip
        if profiler:
            pstats.Stats(profiler).sort_stats("tottime").print_stats(18)
    print(
        f"median: empty {statistics.median(first):.0f} chunks/s, reload "
        f"{statistics.median(reload):.0f} chunks/s (read+validate {n / read_s:.0f}/s)"
    )
    for name, cpu in (("empty", cpu_first), ("reload", cpu_reload)):
        py = statistics.median(c[0] for c in cpu)
        db = statistics.median(c[1] for c in cpu)
        # On an idle 2-core machine the two sides overlap (pipelined writes): the busier side
        # bounds throughput, and both together bound it when they share one core each.
        print(
            f"median CPU per chunk ({name}): Python {py:.3f} ms + Neo4j {db:.3f} ms = "
            f"{py + db:.3f} ms -> {1000 / (py + db):.0f} chunks/s on one core, "
            f"{1000 / max(py, db, 1e-9):.0f} chunks/s bound on two idle cores"
        )
    driver.close()


if __name__ == "__main__":
    main()
