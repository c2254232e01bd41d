"""Measure the retrieval planner's crossovers: exact cosine vs. the vector index, by selection size.

Loads a synthetic corpus of N random unit vectors (384-d by default) into a *dedicated* Neo4j,
then for selections of growing size times each path's ranking query (the selection is the same
``c.id IN $ids`` fragment for all paths, so only ranking differs):

* ``exact``     — vector.similarity.cosine over every selected chunk;
* ``search_in`` — SEARCH ... WHERE c.id IN ... inside the vector index (2026.06+);
* ``index``     — index over U with post-filtering (what 5.26 uses for large selections).

Prints a table, the per-chunk cost of exact cosine (slope of a least-squares fit), and the
crossover: the largest measured size at which exact is still at least as fast as the best index
path. Those numbers are what ``retrieval.MEASURED_EXACT_MAX`` records.

    python benchmarks/planner_bench.py                       # starts its own Neo4j (2026.08.1)
    python benchmarks/planner_bench.py --version 5.26.30     # the LTS line
    python benchmarks/planner_bench.py --uri bolt://... --password ... --i-know-this-wipes-the-db

Everything in the target database is deleted: never point it at a database you care about.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from neo4j import Driver, GraphDatabase

from guidedrag_graph.config import DEFAULT_NEO4J_VERSION, Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.db.connection import server_info
from guidedrag_graph.migration.run import migrate
from guidedrag_graph.retrieval import ChunkIdSelection, Retriever
from guidedrag_graph.retrieval import plans as retrieval_plans
from guidedrag_graph.runtime import LocalNeo4j, install_rank_plugin
from guidedrag_graph.schema.presets import PRESETS

RESULTS = Path(__file__).resolve().parent / "results"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wipe(driver: Driver) -> None:
    while driver.execute_query(
        "MATCH (n) WITH n LIMIT 10000 DETACH DELETE n RETURN count(*) AS n"
    ).records[0]["n"]:
        pass
    for r in driver.execute_query("SHOW CONSTRAINTS YIELD name").records:
        driver.execute_query(f"DROP CONSTRAINT `{r['name']}` IF EXISTS")
    for r in driver.execute_query(
        "SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name"
    ).records:
        driver.execute_query(f"DROP INDEX `{r['name']}` IF EXISTS")


def load(
    driver: Driver, settings: Settings, n: int, dim: int, seed: int, clusters: int = 0
) -> np.ndarray:
    wipe(driver)
    migrate(driver, settings, PRESETS["guidedrag"])
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(n, dim)).astype(np.float32)
    if clusters:  # around cluster centres, as real embeddings (harder for filtered HNSW)
        centres = rng.normal(size=(clusters, dim)).astype(np.float32)
        centres /= np.linalg.norm(centres, axis=1, keepdims=True)
        vectors = centres[rng.integers(0, clusters, size=n)] + 0.8 * vectors / np.sqrt(dim)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    batch = 2000
    for start in range(0, n, batch):
        rows = [
            {"id": f"b{i:07d}", "embedding": vectors[i].tolist()}
            for i in range(start, min(n, start + batch))
        ]
        driver.execute_query(
            "UNWIND $rows AS row CREATE (c:Chunk {id: row.id, text: row.id}) "
            "SET c.embedding = row.embedding",
            rows=rows,
        )
    driver.execute_query("CALL db.awaitIndexes(1800)")
    return vectors


def time_path(
    retriever: Retriever,
    path: str,
    selection: ChunkIdSelection,
    size: int,
    queries: np.ndarray,
    k: int,
) -> tuple[float, list[list[str]]]:
    latencies: list[float] = []
    tops: list[list[str]] = []
    for q in queries:
        started = time.perf_counter()
        ranking = retriever.rank(q, selection, k=k, path=path, selection_size=size)
        latencies.append(time.perf_counter() - started)
        tops.append([c.id for c in ranking.chunks])
    return statistics.median(latencies), tops


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=30_000, help="chunks in the synthetic corpus")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument(
        "--sizes", default="10,100,300,1000,3000,10000,30000", help="selection sizes"
    )
    parser.add_argument("--queries", type=int, default=7, help="queries per size and path")
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--version", default=DEFAULT_NEO4J_VERSION)
    parser.add_argument("--uri")
    parser.add_argument("--password", default="guidedrag-bench-pw")
    parser.add_argument("--i-know-this-wipes-the-db", dest="wipe_ok", action="store_true")
    parser.add_argument("--out", type=Path, help="JSON results file (default: results/...)")
    parser.add_argument("--no-plugin", action="store_true", help="without the rank plugin")
    parser.add_argument("--clusters", type=int, default=0, help="cluster centres (0: uniform)")
    args = parser.parse_args()

    server: LocalNeo4j | None = None
    home: tempfile.TemporaryDirectory[str] | None = None
    if args.uri:
        if not args.wipe_ok:
            parser.error("--uri needs --i-know-this-wipes-the-db: the benchmark deletes everything")
        uri = args.uri
    else:
        home = tempfile.TemporaryDirectory(prefix="guidedrag-bench-")
        if not args.no_plugin:  # the guidedrag.rank plugin path is measured beside the others
            install_rank_plugin(
                Path(home.name),
                Settings(_env_file=None).neo4j_cache_dir,  # type: ignore[call-arg]
            )
        server = LocalNeo4j(
            Path(home.name),
            version=args.version,
            cache_dir=Settings(_env_file=None).neo4j_cache_dir,  # type: ignore[call-arg]
            bolt_port=free_port(),
            http_port=free_port(),
            password=args.password,
            heap="1g",
            pagecache="512m",
        )
        server.start()
        uri = server.uri
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        neo4j_uri=uri,
        neo4j_password=args.password,
        embedding_dimensions=args.dim,
    )
    driver = GraphDatabase.driver(uri, auth=("neo4j", args.password))
    try:
        info = server_info(driver)
        print(f"Neo4j {info.version}: loading {args.n} chunks x {args.dim} dims ...", flush=True)
        started = time.perf_counter()
        vectors = load(driver, settings, args.n, args.dim, args.seed, args.clusters)
        print(f"loaded and indexed in {time.perf_counter() - started:.0f}s", flush=True)
        retriever = Retriever(GraphContext.open(settings, driver))
        rng = np.random.default_rng(args.seed + 1)
        queries = rng.normal(size=(args.queries, args.dim)).astype(np.float32)
        if args.clusters:  # questions near the data
            queries = vectors[rng.integers(0, args.n, size=args.queries)] + 0.5 * queries / np.sqrt(
                args.dim
            )
        queries /= np.linalg.norm(queries, axis=1, keepdims=True)
        paths = ["exact", "index"] + (["search_in"] if info.supports_search_in_filter else [])
        paths += ["plugin"] if retriever.graph.rank_plugin else []
        sizes = [s for s in (int(x) for x in args.sizes.split(",")) if s <= args.n]
        rows: list[dict[str, Any]] = []
        print(
            f"{'size':>8} "
            + " ".join(f"{p:>12}" for p in [*paths, "exact_scan"])
            + "   (median ms)"
        )
        for size in sizes:
            ids = sorted(rng.choice(args.n, size=size, replace=False).tolist())
            selection = ChunkIdSelection(tuple(f"b{i:07d}" for i in ids))
            # warm-up: plan caching and page cache
            for path in paths:
                retriever.rank(queries[0], selection, k=args.k, path=path, selection_size=size)
            row: dict[str, Any] = {"size": size}
            sub = vectors[ids]
            exact_tops = [
                [f"b{ids[j]:07d}" for j in np.argsort(-(sub @ q))[: args.k]] for q in queries
            ]
            # Scoring cost alone: the first `size` chunks by label scan, no id list to match.
            scan: list[float] = []
            for q in queries:
                started = time.perf_counter()
                driver.execute_query(
                    "MATCH (c:Chunk) WITH c LIMIT $n "
                    "WITH c, vector.similarity.cosine(c.embedding, $q) AS score "
                    "ORDER BY score DESC LIMIT $k RETURN c.id AS id, score",
                    n=size,
                    q=q.tolist(),
                    k=args.k,
                )
                scan.append(time.perf_counter() - started)
            row["exact_scan"] = statistics.median(scan)
            for path in paths:
                median, tops = time_path(retriever, path, selection, size, queries, args.k)
                if path == "search_in":  # the recall guard's effect: the same without over-fetch
                    wide = retrieval_plans.SEARCH_IN_OVERFETCH
                    retrieval_plans.SEARCH_IN_OVERFETCH = 1
                    try:
                        _, tops_k1 = time_path(retriever, path, selection, size, queries, args.k)
                    finally:
                        retrieval_plans.SEARCH_IN_OVERFETCH = wide
                    row["search_in_no_overfetch_recall"] = float(
                        np.mean(
                            [
                                len(set(t) & set(e)) / args.k
                                for t, e in zip(tops_k1, exact_tops, strict=True)
                            ]
                        )
                    )
                row[path] = median
                row[f"{path}_recall"] = float(
                    np.mean(
                        [
                            len(set(t) & set(e)) / args.k
                            for t, e in zip(tops, exact_tops, strict=True)
                        ]
                    )
                )
            rows.append(row)
            print(
                f"{size:>8} "
                + " ".join(f"{row[p] * 1000:>12.1f}" for p in [*paths, "exact_scan"])
                + "   recall@k "
                + " ".join(f"{p}={row[p + '_recall']:.2f}" for p in paths)
                + (
                    f" search_in(no over-fetch)={row['search_in_no_overfetch_recall']:.2f}"
                    if "search_in_no_overfetch_recall" in row
                    else ""
                )
                + f"  load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
        xs = np.array([r["size"] for r in rows], dtype=float)
        ys = np.array([r["exact"] for r in rows], dtype=float)
        slope, intercept = np.polyfit(xs, ys, 1)
        scan_slope, scan_intercept = np.polyfit(
            xs, np.array([r["exact_scan"] for r in rows], dtype=float), 1
        )
        crossovers: dict[str, int | None] = {}
        for path in paths[1:]:
            if path == "plugin":
                continue
            faster = [r["size"] for r in rows if r["exact"] <= r[path]]
            crossovers[path] = max(faster) if faster else None
        plugin_crossovers: dict[str, int | None] = {}
        if "plugin" in paths:  # the plugin is exact too: how far does it stay the fastest?
            for path in (p for p in paths if p not in ("exact", "plugin")):
                faster = [r["size"] for r in rows if r["plugin"] <= r[path]]
                plugin_crossovers[path] = max(faster) if faster else None
        result = {
            "neo4j_version": info.version,
            "n": args.n,
            "dim": args.dim,
            "k": args.k,
            "queries": args.queries,
            "rows": rows,
            "exact_us_per_chunk": slope * 1e6,
            "exact_fixed_ms": intercept * 1e3,
            "scan_cosine_us_per_chunk": scan_slope * 1e6,
            "scan_cosine_fixed_ms": scan_intercept * 1e3,
            "exact_max_by_path": crossovers,
            "plugin_max_by_path": plugin_crossovers,
            "loadavg": os.getloadavg(),
        }
        print(
            f"\nexact cosine: {slope * 1e6:.2f} µs per selected chunk "
            f"(+ {intercept * 1e3:.1f} ms fixed) at {args.dim} dims, id-list selection included; "
            f"scoring a label scan alone: {scan_slope * 1e6:.2f} µs per chunk "
            f"(+ {scan_intercept * 1e3:.1f} ms)"
        )
        for path, size in crossovers.items():
            print(
                f"exact is at least as fast as {path} up to {size} chunks (largest size measured)"
            )
        for path, size in plugin_crossovers.items():
            print(f"the plugin is at least as fast as {path} up to {size} chunks")
        print(f"load average {os.getloadavg()}")
        out = args.out or RESULTS / f"planner_{info.version}_{args.n}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {out}")
    finally:
        driver.close()
        if server is not None:
            server.stop()
        if home is not None:
            home.cleanup()


if __name__ == "__main__":
    main()
