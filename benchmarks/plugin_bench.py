"""Per-selected-chunk cost of exact ranking: the ``guidedrag.rank`` plugin vs. Cypher vs. numpy.

Loads a synthetic corpus (384-d; cluster centres plus noise, so neighbours are realistic rather
than uniformly random) into a dedicated Neo4j with the rank plugin installed, then for selections
of about 10, 100, 1k and 10k chunks times, side by side and interleaved, in one process:

* ``base``    — the selection alone (``MATCH (c:Chunk) WHERE c.id IN $ids RETURN count(c)``);
* ``cypher``  — ``vector.similarity.cosine(c.embedding, $q)`` over the selection, top k;
* ``store``   — ``collect(c)`` then ``CALL guidedrag.rank(cs, 'embedding', $q, k, {cache: false})``:
  the plugin reading every embedding as a primitive array from the store (``Node.getProperty``);
* ``plugin``  — the same call with its embedding cache (warmed by an untimed first round);
* ``numpy``   — the same selection's rows of an in-memory float64 matrix, ``X[sel] @ q``, top k.

Per-chunk cost = (median(path) − median(base)) / size for the Neo4j paths (the selection's own
cost is common to both and subtracted), median / size for numpy. Prints the load average beside
every row: the machine is shared, so only ratios measured side by side mean much.

    python benchmarks/plugin_bench.py                      # 2026.08.1, 20k chunks
    python benchmarks/plugin_bench.py --version 5.26.30 --n 5000 --sizes 10,100,1000
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
from guidedrag_graph.db.connection import server_info
from guidedrag_graph.runtime import LocalNeo4j, install_rank_plugin

RESULTS = Path(__file__).resolve().parent / "results"

Q_BASE = "MATCH (c:Chunk) WHERE c.id IN $ids RETURN count(c) AS n"
Q_CYPHER = (
    "MATCH (c:Chunk) WHERE c.id IN $ids "
    "WITH c, vector.similarity.cosine(c.embedding, $q) AS score "
    "ORDER BY score DESC LIMIT $k RETURN c.id AS id, score"
)
Q_PLUGIN = (
    "MATCH (c:Chunk) WHERE c.id IN $ids WITH collect(c) AS cs "
    "CALL guidedrag.rank(cs, 'embedding', $q, $k, {cache: $cache}) YIELD node, score "
    "RETURN node.id AS id, score ORDER BY score DESC LIMIT $k"
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def synthetic(n: int, dim: int, clusters: int, noise: float, seed: int) -> np.ndarray:
    """Unit vectors drawn around ``clusters`` random unit centres (angular noise ``noise``)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(clusters, dim))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    which = rng.integers(0, clusters, size=n)
    vectors = centres[which] + rng.normal(scale=noise / np.sqrt(dim), size=(n, dim))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def load(driver: Driver, vectors: np.ndarray) -> None:
    driver.execute_query(
        "CREATE CONSTRAINT bench_chunk_id IF NOT EXISTS FOR (c:Chunk) REQUIRE c.id IS UNIQUE"
    )
    batch = 1000
    for start in range(0, len(vectors), batch):
        rows = [
            {"id": f"b{i:07d}", "embedding": vectors[i].tolist()}
            for i in range(start, min(len(vectors), start + batch))
        ]
        driver.execute_query(
            "UNWIND $rows AS row CREATE (c:Chunk {id: row.id}) SET c.embedding = row.embedding",
            rows=rows,
        )


def timed(driver: Driver, query: str, params: dict[str, Any]) -> tuple[float, list[Any]]:
    started = time.perf_counter()
    records, _, _ = driver.execute_query(query, params)
    return time.perf_counter() - started, records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--clusters", type=int, default=200)
    parser.add_argument("--noise", type=float, default=0.8)
    parser.add_argument("--sizes", default="10,100,1000,10000")
    parser.add_argument("--reps", type=int, default=9, help="timed queries per size and path")
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--version", default=DEFAULT_NEO4J_VERSION)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    password = "guidedrag-bench-pw"
    cache = Settings(_env_file=None).neo4j_cache_dir  # type: ignore[call-arg]
    with tempfile.TemporaryDirectory(prefix="guidedrag-plugin-bench-") as home:
        install_rank_plugin(Path(home), cache)
        server = LocalNeo4j(
            Path(home),
            version=args.version,
            cache_dir=cache,
            bolt_port=free_port(),
            http_port=free_port(),
            password=password,
            heap="1g",
            pagecache="512m",
        )
        server.start()
        driver = GraphDatabase.driver(server.uri, auth=("neo4j", password))
        try:
            result = run(driver, args)
        finally:
            driver.close()
            server.stop()
    out = args.out or RESULTS / f"plugin_{result['version']}_{args.n}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")


def run(driver: Driver, args: argparse.Namespace) -> dict[str, Any]:
    info = server_info(driver)
    vectors = synthetic(args.n, args.dim, args.clusters, args.noise, args.seed)
    started = time.perf_counter()
    load(driver, vectors)
    print(
        f"Neo4j {info.version}: loaded {args.n} x {args.dim} in "
        f"{time.perf_counter() - started:.0f}s, load average {os.getloadavg()}",
        flush=True,
    )
    rng = np.random.default_rng(args.seed + 1)
    # Queries near the data: a corpus vector plus noise, as a real question near its answer.
    queries = vectors[rng.integers(0, args.n, size=args.reps)] + rng.normal(
        scale=0.5 / np.sqrt(args.dim), size=(args.reps, args.dim)
    )
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    rows: list[dict[str, Any]] = []
    print("median ms per query; µs per selected chunk = (path - base) / size")
    print(
        f"{'size':>6} {'base':>7} {'cypher':>7} {'store':>7} {'plugin':>7} {'numpy':>7} | "
        f"{'µs cy':>6} {'store':>6} {'plugin':>6} {'numpy':>6} | {'cy/st':>5} {'cy/pl':>5} "
        f"{'pl/np':>5} {'max|Δs|':>8}  load"
    )
    for size in (int(s) for s in args.sizes.split(",")):
        if size > args.n:
            continue
        idx = np.sort(rng.choice(args.n, size=size, replace=False))
        ids = [f"b{i:07d}" for i in idx]
        times: dict[str, list[float]] = {
            "base": [],
            "cypher": [],
            "store": [],
            "plugin": [],
            "numpy": [],
        }
        max_diff = 0.0
        same_top = 0
        for rep in range(args.reps + 1):  # the first round warms plans and caches, untimed
            q = queries[rep % args.reps].tolist()
            params = {"ids": ids, "q": q, "k": args.k, "cache": True}
            t_base, _ = timed(driver, Q_BASE, params)
            t_cy, cy = timed(driver, Q_CYPHER, params)
            t_st, st = timed(driver, Q_PLUGIN, {**params, "cache": False})
            t_pl, pl = timed(driver, Q_PLUGIN, params)
            started = time.perf_counter()
            scores = vectors[idx] @ np.asarray(q)
            top = np.argpartition(-scores, min(args.k, size - 1))[: args.k]
            top = top[np.argsort(-scores[top])]
            t_np = time.perf_counter() - started
            if rep == 0:
                continue
            for key, t in (
                ("base", t_base),
                ("cypher", t_cy),
                ("store", t_st),
                ("plugin", t_pl),
                ("numpy", t_np),
            ):
                times[key].append(t)
            max_diff = max(
                max_diff,
                *(abs(a["score"] - b["score"]) for a, b in zip(cy, pl, strict=True)),
                *(abs(a["score"] - b["score"]) for a, b in zip(cy, st, strict=True)),
            )
            same_top += [r["id"] for r in cy] == [r["id"] for r in pl] == [r["id"] for r in st]
        med = {key: statistics.median(v) for key, v in times.items()}
        per = {
            "cypher": (med["cypher"] - med["base"]) / size * 1e6,
            "store": (med["store"] - med["base"]) / size * 1e6,
            "plugin": (med["plugin"] - med["base"]) / size * 1e6,
            "numpy": med["numpy"] / size * 1e6,
        }
        load_avg = os.getloadavg()
        row = {
            "size": size,
            "median_ms": {k_: v * 1e3 for k_, v in med.items()},
            "us_per_chunk": per,
            "cypher_over_plugin_total": (med["cypher"] / med["plugin"]),
            "max_abs_score_diff": max_diff,
            "same_top_k": same_top,
            "reps": args.reps,
            "loadavg": load_avg,
        }
        rows.append(row)

        def ratio(a: float, b: float) -> str:
            return f"{a / b:5.1f}" if b > 0 else "  n/a"

        ms = {key: v * 1e3 for key, v in med.items()}
        print(
            f"{size:>6} {ms['base']:>7.2f} {ms['cypher']:>7.2f} {ms['store']:>7.2f} "
            f"{ms['plugin']:>7.2f} {ms['numpy']:>7.3f} | {per['cypher']:>6.2f} "
            f"{per['store']:>6.2f} {per['plugin']:>6.2f} {per['numpy']:>6.3f} | "
            f"{ratio(per['cypher'], per['store'])} {ratio(per['cypher'], per['plugin'])} "
            f"{ratio(per['plugin'], per['numpy'])} {max_diff:>8.1e}  "
            f"{' '.join(f'{x:.1f}' for x in load_avg)}",
            flush=True,
        )
    return {
        "version": info.version,
        "n": args.n,
        "dim": args.dim,
        "k": args.k,
        "clusters": args.clusters,
        "noise": args.noise,
        "rows": rows,
    }


if __name__ == "__main__":
    main()
