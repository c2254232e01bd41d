"""Guided retrieval throughput: questions per second at N client threads, plugin vs. pure Cypher.

A synthetic KB (chunks with 384-d embeddings around cluster centres, documents, entities with
Zipf-distributed mentions) is loaded into a dedicated Neo4j started with the ``guidedrag.rank``
plugin. Each "question" is one guided retrieval without the embedding step (query vectors are
precomputed, as the embedder is not what is measured): ``Selector.prepare("entity('E…')")``
(name resolution; none when ``--resolution-cache`` seconds keep the names, as they repeat) then
``Retriever.rank`` (on 2026.06+ one query that sizes the selection and ranks it by the planner's
path; on older servers the size first).

Runs, in one process and one server, for each mode (``plugin``; ``cypher`` = rank_plugin off):
  * a warm-up pass over every question (fills the plugin's embedding cache);
  * ``--seconds`` of ``--threads`` clients on one shared driver, split in ``--rounds`` windows
    that alternate between the modes (the machine's load swings hit both): median q/s, p50/p90;
  * a single-thread cProfile of ``--profile`` questions: Python time per question, top functions.

    python benchmarks/throughput_bench.py --n 50000 --threads 8
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import os
import sys

if os.environ.get("GUIDEDRAG_BENCH_NO_RUST"):
    sys.modules["neo4j._rust"] = None  # type: ignore[assignment]
import pstats
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import neo4j  # noqa: F401  (imported here so the Rust extension, if any, is loaded or hidden)
import numpy as np
from neo4j import Driver, GraphDatabase

from guidedrag_graph.config import DEFAULT_NEO4J_VERSION, Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.db.connection import server_info
from guidedrag_graph.migration.run import migrate
from guidedrag_graph.retrieval import Retriever
from guidedrag_graph.runtime import LocalNeo4j, install_rank_plugin
from guidedrag_graph.schema.presets import PRESETS
from guidedrag_graph.selection.selector import Selector

RESULTS = Path(__file__).resolve().parent / "results"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def load(
    driver: Driver, args: argparse.Namespace, write: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Chunks, documents (``--per-doc`` chunks each), entities with Zipf mentions (3 per chunk).

    Deterministic (seeded): with ``write=False`` it only regenerates what a kept home holds."""
    rng = np.random.default_rng(args.seed)
    centres = rng.normal(size=(args.clusters, args.dim))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    which = rng.integers(0, args.clusters, size=args.n)
    vectors = centres[which] + rng.normal(scale=0.8 / np.sqrt(args.dim), size=(args.n, args.dim))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ranks = np.arange(1, args.entities + 1)
    p = 1.0 / ranks**args.zipf
    p /= p.sum()
    mentions = rng.choice(args.entities, size=(args.n, 3), p=p)
    counts = np.bincount(mentions.ravel(), minlength=args.entities)
    if not write:
        return vectors, counts
    driver.execute_query(
        "UNWIND range(0, $m - 1) AS i CREATE (:Entity {id: 'e' + i, name: 'E' + i, "
        "name_key: 'e' + i, type: 'THING'})",
        m=args.entities,
    )
    batch = 1000
    for start in range(0, args.n, batch):
        rows = [
            {
                "id": f"c{i:07d}",
                "doc": f"d{i // args.per_doc:05d}",
                "embedding": vectors[i].tolist(),
                "ents": [f"e{e}" for e in set(mentions[i].tolist())],
            }
            for i in range(start, min(args.n, start + batch))
        ]
        driver.execute_query(
            "UNWIND $rows AS row "
            "MERGE (d:Document {id: row.doc}) ON CREATE SET d.title = row.doc "
            "CREATE (c:Chunk {id: row.id, text: 'text ' + row.id}) SET c.embedding = row.embedding "
            "CREATE (c)-[:PART_OF]->(d) "
            "WITH c, row UNWIND row.ents AS eid MATCH (e:Entity {id: eid}) "
            "CREATE (c)-[:MENTIONS]->(e)",
            rows=rows,
        )
    driver.execute_query("CALL db.awaitIndexes(3600)")
    return vectors, counts


def question_set(
    vectors: np.ndarray, counts: np.ndarray, args: argparse.Namespace
) -> list[tuple[str, list[float], int]]:
    """(selection, query vector, expected size) over entities mentioned by 10–2,000 chunks."""
    rng = np.random.default_rng(args.seed + 1)
    eligible = [e for e in range(len(counts)) if 10 <= counts[e] <= args.max_selection]
    picks = rng.choice(eligible, size=args.questions, replace=True)
    out = []
    for e in picks:
        q = vectors[rng.integers(0, len(vectors))] + rng.normal(
            scale=0.5 / np.sqrt(args.dim), size=args.dim
        )
        out.append((f"entity('E{e}')", (q / np.linalg.norm(q)).tolist(), int(counts[e])))
    return out


def one(selector: Selector, retriever: Retriever, sel: str, vector: list[float]) -> str:
    prepared = selector.prepare(sel)
    return retriever.rank(vector, prepared.compiled, k=5).path


def warm(
    driver: Driver, settings: Settings, questions: list[tuple[str, list[float], int]]
) -> tuple[Selector, Retriever, dict[str, int]]:
    """One pass over every question (plans, page cache, the plugin's vector cache)."""
    selector = Selector(GraphContext.open(settings, driver))
    retriever = Retriever(GraphContext.open(settings, driver))
    paths: dict[str, int] = {}
    for sel, vec, _ in questions:
        path = one(selector, retriever, sel, vec)
        paths[path] = paths.get(path, 0) + 1
    return selector, retriever, paths


def window(
    selector: Selector,
    retriever: Retriever,
    questions: list[tuple[str, list[float], int]],
    threads: int,
    seconds: float,
) -> dict[str, Any]:
    """``threads`` clients for ``seconds``: q/s, latencies, Python CPU per question."""
    latencies: list[float] = []
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client(offset: int) -> None:
        i = offset
        mine: list[float] = []
        while time.monotonic() < stop:
            sel, vec, _ = questions[i % len(questions)]
            started = time.perf_counter()
            one(selector, retriever, sel, vec)
            mine.append(time.perf_counter() - started)
            i += threads
        with lock:
            latencies.extend(mine)

    cpu0 = os.times()
    began = time.monotonic()
    pool = [threading.Thread(target=client, args=(t,)) for t in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    wall = time.monotonic() - began
    cpu1 = os.times()
    py_cpu = (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system)
    return {
        "qps": len(latencies) / wall,
        "latencies": latencies,
        "python_cpu_ms_per_q": 1e3 * py_cpu / max(len(latencies), 1),
        "loadavg": os.getloadavg(),
    }


def profile(
    selector: Selector, retriever: Retriever, sample: list[tuple[str, list[float], int]]
) -> dict[str, Any]:
    """Single-thread cProfile: where Python spends its time per question."""
    prof = cProfile.Profile()
    started = time.perf_counter()
    cpu_started = time.process_time()
    prof.enable()
    for sel, vec, _ in sample:
        one(selector, retriever, sel, vec)
    prof.disable()
    text = io.StringIO()
    pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(12)
    return {
        "single_thread_ms_per_q": 1e3 * (time.perf_counter() - started) / len(sample),
        "single_thread_python_cpu_ms_per_q_profiled": 1e3
        * (time.process_time() - cpu_started)
        / len(sample),
        "profile_top": text.getvalue(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=50_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--clusters", type=int, default=200)
    parser.add_argument("--per-doc", type=int, default=50)
    parser.add_argument("--entities", type=int, default=5_000)
    parser.add_argument("--zipf", type=float, default=1.1)
    parser.add_argument("--max-selection", type=int, default=2_000)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=20.0, help="per mode, all rounds")
    parser.add_argument("--rounds", type=int, default=4, help="alternating windows per mode")
    parser.add_argument("--profile", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--version", default=DEFAULT_NEO4J_VERSION)
    parser.add_argument("--modes", default="plugin,cypher")
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--resolution-cache",
        type=float,
        default=60.0,
        help="GUIDEDRAG_RESOLUTION_CACHE_S for the clients (0: resolve every question's names)",
    )
    parser.add_argument(
        "--home", type=Path, help="keep the server home here and reuse its data on the next run"
    )
    args = parser.parse_args()
    # GUIDEDRAG_BENCH_NO_RUST=1 hides the driver's Rust extension (set before neo4j is imported,
    # see the top of this file), so one kept home measures the driver with and without it.
    rust = sys.modules.get("neo4j._rust") is not None
    password = "guidedrag-bench-pw"
    cache = Settings(_env_file=None).neo4j_cache_dir  # type: ignore[call-arg]
    result: dict[str, Any] = {"n": args.n, "threads": args.threads, "rust_ext": rust}
    with contextlib.ExitStack() as stack:
        if args.home:
            home = str(args.home)
            args.home.mkdir(parents=True, exist_ok=True)
        else:
            home = stack.enter_context(tempfile.TemporaryDirectory(prefix="guidedrag-throughput-"))
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
        settings = Settings(
            _env_file=None,  # type: ignore[call-arg]
            neo4j_uri=server.uri,
            neo4j_password=password,
            openai_api_key=None,
            resolution_cache_s=args.resolution_cache,
        )
        result["resolution_cache_s"] = args.resolution_cache
        driver = GraphDatabase.driver(server.uri, auth=("neo4j", password))
        try:
            migrate(driver, settings, PRESETS["guidedrag"])
            started = time.perf_counter()
            loaded = driver.execute_query("MATCH (c:Chunk) RETURN count(c) AS n").records[0]["n"]
            if loaded not in (0, args.n):
                raise SystemExit(f"{home} holds {loaded} chunks, not {args.n}: use another --home")
            vectors, counts = load(driver, args, write=loaded == 0)
            result["version"] = server_info(driver).version
            print(
                f"Neo4j {result['version']}: loaded {args.n} chunks in "
                f"{time.perf_counter() - started:.0f}s; rust ext {rust}; "
                f"load average {os.getloadavg()}",
                flush=True,
            )
            questions = question_set(vectors, counts, args)
            sizes = [s for _, _, s in questions]
            result["selection_sizes"] = {
                "median": statistics.median(sizes),
                "min": min(sizes),
                "max": max(sizes),
            }
            modes = args.modes.split(",")
            state = {}
            for mode in modes:
                mode_settings = settings.model_copy(
                    update={"rank_plugin": "auto" if mode == "plugin" else "off"}
                )
                state[mode] = warm(driver, mode_settings, questions)
            # Modes alternate in short windows, so a swing in the machine's load hits both.
            windows: dict[str, list[dict[str, Any]]] = {mode: [] for mode in modes}
            for _ in range(args.rounds):
                for mode in modes:
                    selector, retriever, _paths = state[mode]
                    windows[mode].append(
                        window(
                            selector, retriever, questions, args.threads, args.seconds / args.rounds
                        )
                    )
            for mode in modes:
                selector, retriever, paths = state[mode]
                lat = sorted(x for w in windows[mode] for x in w["latencies"])
                row = {
                    "paths": paths,
                    "qps_per_window": [w["qps"] for w in windows[mode]],
                    "qps": statistics.median(w["qps"] for w in windows[mode]),
                    "p50_ms": 1e3 * lat[len(lat) // 2],
                    "p90_ms": 1e3 * lat[int(len(lat) * 0.9)],
                    "python_cpu_ms_per_q": statistics.median(
                        w["python_cpu_ms_per_q"] for w in windows[mode]
                    ),
                    "loadavg_per_window": [w["loadavg"] for w in windows[mode]],
                    **profile(selector, retriever, questions[: args.profile]),
                }
                result[mode] = row
                print(
                    f"{mode:>7}: {row['qps']:.1f} q/s (median of "
                    f"{', '.join(f'{q:.1f}' for q in row['qps_per_window'])}) at {args.threads} "
                    f"threads, p50 {row['p50_ms']:.1f} ms, p90 {row['p90_ms']:.1f} ms, Python CPU "
                    f"{row['python_cpu_ms_per_q']:.2f} ms/q, single-thread "
                    f"{row['single_thread_ms_per_q']:.1f} ms/q, paths {row['paths']}, load "
                    f"{' '.join(f'{w[0]:.1f}' for w in row['loadavg_per_window'])}",
                    flush=True,
                )
                print(row["profile_top"][:3000], flush=True)
        finally:
            driver.close()
            server.stop()
    out = args.out or RESULTS / f"throughput_{result['version']}_{args.n}_rust{int(rust)}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
