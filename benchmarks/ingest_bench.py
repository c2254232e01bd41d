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
import sys
import tempfile
import time
from pathlib import Path

from neo4j import GraphDatabase

from guidedrag_graph.config import Settings
from guidedrag_graph.kb import load_bundle, read_bundle, sample_kb_dir
from guidedrag_graph.kb.synthetic import SyntheticSpec, write_synthetic_bundle
from guidedrag_graph.migrate import migrate
from guidedrag_graph.schema import PRESETS

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import wipe


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uri", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--bundle", type=Path, default=None)
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=None)
    parser.add_argument("--profile", action="store_true")
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
        root = Path(tempfile.mkdtemp(prefix="ingest-")) / "kb"
        write_synthetic_bundle(root, SyntheticSpec(args.chunks), centres_dir=sample_kb_dir())
    extra = {"batch_size": args.batch_size} if args.batch_size else {}
    driver = GraphDatabase.driver(args.uri, auth=("neo4j", args.password))
    t0 = time.perf_counter()
    bundle = read_bundle(root)
    read_s = time.perf_counter() - t0
    n = len(bundle.chunks)
    print(f"read {n} chunks in {read_s:.2f}s ({n / read_s:.0f} chunks/s)  load {os.getloadavg()}")
    first: list[float] = []
    reload: list[float] = []
    for run in range(args.runs):
        wipe(driver)
        migrate(driver, settings, schema)
        profiler = cProfile.Profile() if args.profile and run == 0 else None
        t0 = time.perf_counter()
        if profiler:
            profiler.enable()
        report = load_bundle(driver, settings, schema, bundle, migrate=False, **extra)
        if profiler:
            profiler.disable()
        total = time.perf_counter() - t0
        first.append(n / total)
        print(f"run {run} empty db: {total:.2f}s, {n / total:.0f} chunks/s overall, chunks stage "
              f"{report.chunks_per_second:.0f}/s, stages {report.to_dict()['timings_s']}  "
              f"load {os.getloadavg()}")  # fmt: skip
        t0 = time.perf_counter()
        load_bundle(driver, settings, schema, bundle, migrate=False, **extra)
        total = time.perf_counter() - t0
        reload.append(n / total)
        print(f"run {run} reload:   {total:.2f}s, {n / total:.0f} chunks/s  load {os.getloadavg()}")
        if profiler:
            pstats.Stats(profiler).sort_stats("tottime").print_stats(18)
    print(
        f"median: empty {statistics.median(first):.0f} chunks/s, reload "
        f"{statistics.median(reload):.0f} chunks/s (read+validate {n / read_s:.0f}/s)"
    )
    driver.close()


if __name__ == "__main__":
    main()
