"""Serving many users at once: questions per second and p99 at 1, 4, 8 and 16 client threads
(and 16 / 64 concurrent async calls on one event loop), the default with its ``GuidedRAG``
**reused** and with a **new** one per request, beside neo4j-graphrag's ``VectorRetriever`` in
the same process, on the same server, driver and question vectors.

Issue 36 measured the collapse this guards against: state built per instance made a new
``GuidedRAG`` pay 74-90 ms on its first stated call and 455-519 ms on its first bare one, and
eight threads creating instances served 0.14x ``VectorRetriever``.

For each concurrency, the modes run in short windows that alternate (``vector``, ``reused``,
``new``; the async modes beside the 8-thread ``vector``), so a swing in this shared machine's
load hits all of them; the figures are each mode's median q/s over its windows, p50/p99 over all
its calls, and the ratio to ``vector``'s q/s at the same concurrency. Also timed: the first call
of a new instance against a warm call (stated and bare), median over ``--firsts`` instances.

    python benchmarks/serving.py --bundle out/musique            # NEO4J_URI etc. from the env
    python benchmarks/serving.py --bundle out/musique --threads 1,8 --seconds 2 --rounds 2
    python benchmarks/serving.py --bundle out/musique --abstain   # and a row of abstentions

Results: ``benchmarks/results/serving_<neo4j version>_<date>[_<label>].json``. Give the load
average beside any figure taken from it (it is recorded per window).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from doors import questions_and_rag  # noqa: E402
from neo4j_graphrag.retrievers import VectorRetriever  # noqa: E402

from guidedrag_graph.config import Settings  # noqa: E402
from guidedrag_graph.db.connection import connect, server_info  # noqa: E402
from guidedrag_graph.kb import Question  # noqa: E402
from guidedrag_graph.pipeline import GuidedRAG  # noqa: E402
from guidedrag_graph.semantics import Semantics  # noqa: E402

Call = Callable[[Question, list[float]], object]


def window(
    make_call: Callable[[], Call],
    questions: list[Question],
    vectors: list[list[float]],
    threads: int,
    seconds: float,
) -> dict[str, Any]:
    """``threads`` clients, each with its own ``make_call()``, for ``seconds``."""
    latencies: list[float] = []
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client(offset: int) -> None:
        call = make_call()
        mine: list[float] = []
        i = offset
        while time.monotonic() < stop:
            n = i % len(questions)
            started = time.perf_counter()
            call(questions[n], vectors[n])
            mine.append(time.perf_counter() - started)
            i += threads
        with lock:
            latencies.extend(mine)

    began = time.monotonic()
    pool = [threading.Thread(target=client, args=(t,)) for t in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return {
        "qps": len(latencies) / (time.monotonic() - began),
        "latencies": latencies,
        "load": round(os.getloadavg()[0], 2),
    }


async def async_window(
    call: Callable[[Question, list[float]], Any],
    questions: list[Question],
    vectors: list[list[float]],
    concurrency: int,
    seconds: float,
) -> dict[str, Any]:
    """``concurrency`` tasks on this event loop, each awaiting ``call`` in turn, for ``seconds``."""
    latencies: list[float] = []

    async def client(offset: int, stop: float) -> None:
        i = offset
        while time.monotonic() < stop:
            n = i % len(questions)
            started = time.perf_counter()
            await call(questions[n], vectors[n])
            latencies.append(time.perf_counter() - started)
            i += concurrency

    began = time.monotonic()
    await asyncio.gather(*(client(c, began + seconds) for c in range(concurrency)))
    wall = time.monotonic() - began
    return {
        "qps": len(latencies) / wall,
        "latencies": latencies,
        "load": round(os.getloadavg()[0], 2),
    }


def summary(windows: list[dict[str, Any]]) -> dict[str, Any]:
    lat = sorted(x for w in windows for x in w["latencies"])
    return {
        "qps": round(statistics.median(w["qps"] for w in windows), 1),
        "qps_per_window": [round(w["qps"], 1) for w in windows],
        "p50_ms": round(1e3 * lat[len(lat) // 2], 2) if lat else None,
        "p99_ms": round(1e3 * lat[min(len(lat) - 1, int(len(lat) * 0.99))], 2) if lat else None,
        "calls": len(lat),
        "load_per_window": [w["load"] for w in windows],
    }


def misspelt(question: Question) -> Semantics:
    """``question``'s semantics with its first entity misspelt (its last letter doubled): a
    name the KB lacks, so the call abstains with "did you mean" suggestions, as a user's typo
    does (issue 36: an abstention paid a fuzzy full-text query and a scan of every alias)."""
    entities = question.semantics.entities or ("Nobody in particular",)
    return question.semantics.model_copy(
        update={"entities": (entities[0] + entities[0][-1], *entities[1:])}
    )


def first_calls(
    settings: Settings,
    driver: Any,
    rag: GuidedRAG,
    questions: list[Question],
    vectors: list[list[float]],
    n: int,
) -> dict[str, Any]:
    """A new instance's first call against the next call on it, stated and bare (ms)."""
    out: dict[str, Any] = {}
    for kind in ("stated", "bare"):
        firsts, warms, builds = [], [], []
        for i in range(n):
            q, v = questions[i % len(questions)], vectors[i % len(questions)]
            semantics = q.semantics if kind == "stated" else None
            started = time.perf_counter()
            fresh = GuidedRAG(settings, driver=driver, schema=rag.schema, embedder=rag.embedder)
            builds.append(time.perf_counter() - started)
            started = time.perf_counter()
            fresh.retrieve(q.question, semantics=semantics, query_vector=v, k=5)
            firsts.append(time.perf_counter() - started)
            started = time.perf_counter()
            fresh.retrieve(q.question, semantics=semantics, query_vector=v, k=5)
            warms.append(time.perf_counter() - started)
        first, warm = statistics.median(firsts), statistics.median(warms)
        out[kind] = {
            "construct_ms": round(1e3 * statistics.median(builds), 2),
            "first_call_ms": round(1e3 * first, 2),
            "warm_call_ms": round(1e3 * warm, 2),
            "first_minus_warm_ms": round(1e3 * (first - warm), 2),
            "construct_plus_first_minus_warm_ms": round(
                1e3 * (statistics.median(builds) + first - warm), 2
            ),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", type=Path, required=True, help="a bundle with questions")
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--threads", default="1,4,8,16")
    parser.add_argument("--concurrency", default="16,64", help="async calls on one loop")
    parser.add_argument("--seconds", type=float, default=3.0, help="per window")
    parser.add_argument("--rounds", type=int, default=3, help="windows per mode and concurrency")
    parser.add_argument("--firsts", type=int, default=20, help="new instances timed")
    parser.add_argument(
        "--abstain",
        action="store_true",
        help="also time a reused instance asked about misspelt names (every call abstains)",
    )
    parser.add_argument("--label", default="")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)

    settings = Settings(openai_api_key=None, openai_base_url=None)
    driver = connect(settings)
    try:
        questions, vectors, rag = questions_and_rag(settings, driver, args.bundle, args.limit)
        schema = rag.schema
        k = 5

        def vector_call() -> Call:
            retriever = VectorRetriever(
                driver,
                settings.vector_index_name,
                return_properties=[schema.chunk_id],
                neo4j_database=settings.neo4j_database,
            )
            return lambda q, v: retriever.search(query_vector=v, top_k=k)

        kept: list[GuidedRAG] = []  # one per client thread, reused across every window
        kept_lock = threading.Lock()

        def reused_call() -> Call:
            with kept_lock:  # a client's instance: one made earlier, or a new one kept for later
                mine = (
                    kept.pop()
                    if kept
                    else GuidedRAG(settings, driver=driver, schema=schema, embedder=rag.embedder)
                )
            done.append(mine)
            return lambda q, v: mine.retrieve(
                q.question, semantics=q.semantics, query_vector=v, k=k
            )

        done: list[GuidedRAG] = []

        def new_call() -> Call:
            def call(q: Question, v: list[float]) -> object:
                fresh = GuidedRAG(settings, driver=driver, schema=schema, embedder=rag.embedder)
                return fresh.retrieve(q.question, semantics=q.semantics, query_vector=v, k=k)

            return call

        typos = {id(q): misspelt(q) for q in questions}

        def abstain_call() -> Call:  # a reused instance asked about names the KB lacks
            mine = GuidedRAG(settings, driver=driver, schema=schema, embedder=rag.embedder)
            return lambda q, v: mine.retrieve(
                q.question, semantics=typos[id(q)], query_vector=v, k=k
            )

        modes: dict[str, Callable[[], Call]] = {
            "vector": vector_call,
            "reused": reused_call,
            "new": new_call,
        }
        if args.abstain:
            modes["abstain"] = abstain_call
        for q, v in zip(questions, vectors, strict=True):  # warm-up: plans, caches, connections
            for make in modes.values():
                make()(q, v)
            rag.retrieve(q.question, query_vector=v, k=k)  # the bare path (the link index)
        result: dict[str, Any] = {
            "label": args.label or args.bundle.name,
            "neo4j_version": server_info(driver).version,
            "questions": len(questions),
            "load_before": [round(x, 2) for x in os.getloadavg()],
            "first_call": first_calls(settings, driver, rag, questions, vectors, args.firsts),
            "threads": {},
        }
        print(json.dumps(result["first_call"]), flush=True)
        for threads in [int(t) for t in args.threads.split(",")]:
            windows: dict[str, list[dict[str, Any]]] = {m: [] for m in modes}
            for _ in range(args.rounds):
                for name, make in modes.items():
                    windows[name].append(window(make, questions, vectors, threads, args.seconds))
                    kept.extend(done)  # the reused instances go back for the next window
                    done.clear()
            row = {name: summary(w) for name, w in windows.items()}
            for name in [m for m in modes if m != "vector"]:
                row[name]["ratio_to_vector"] = round(row[name]["qps"] / row["vector"]["qps"], 3)
            result["threads"][str(threads)] = row
            print(
                threads,
                json.dumps(
                    {n: {x: r[x] for x in r if x != "qps_per_window"} for n, r in row.items()}
                ),
                flush=True,
            )
        if hasattr(GuidedRAG, "aretrieve"):
            result["async"] = async_modes(settings, schema, rag, questions, vectors, args, modes)
        result["load_after"] = [round(x, 2) for x in os.getloadavg()]
    finally:
        driver.close()
    day = dt.date.today().isoformat()
    suffix = f"_{args.label}" if args.label else ""
    out = args.out or REPO / "benchmarks" / "results" / (
        f"serving_{result['neo4j_version']}_{day}{suffix}.json"
    )
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


def async_modes(
    settings: Settings,
    schema: Any,
    rag: GuidedRAG,
    questions: list[Question],
    vectors: list[list[float]],
    args: argparse.Namespace,
    modes: dict[str, Callable[[], Call]],
) -> dict[str, Any]:
    """``aretrieve`` on one ``AsyncDriver`` on one event loop (opened and warmed once, as an app's
    lifespan does), reused and with a new ``GuidedRAG.aopen`` per call, beside 8 sync
    ``VectorRetriever`` threads in alternating windows."""
    from neo4j import AsyncGraphDatabase

    async def main() -> dict[str, Any]:
        driver = AsyncGraphDatabase.driver(
            settings.neo4j_uri,
            auth=(settings.neo4j_username, settings.neo4j_password.get_secret_value()),
        )
        try:
            shared = await GuidedRAG.aopen(
                settings, driver=driver, schema=schema, embedder=rag.embedder
            )
            for q, v in zip(questions, vectors, strict=True):  # warm-up: plans, caches
                await shared.aretrieve(q.question, semantics=q.semantics, query_vector=v, k=5)

            async def reused(q: Question, v: list[float]) -> object:
                return await shared.aretrieve(
                    q.question, semantics=q.semantics, query_vector=v, k=5
                )

            async def new(q: Question, v: list[float]) -> object:
                fresh = await GuidedRAG.aopen(
                    settings, driver=driver, schema=schema, embedder=rag.embedder
                )
                return await fresh.aretrieve(q.question, semantics=q.semantics, query_vector=v, k=5)

            results: dict[str, Any] = {}
            for concurrency in [int(c) for c in args.concurrency.split(",")]:
                windows: dict[str, list[dict[str, Any]]] = {
                    "vector_8_threads": [], "reused": [], "new": [],
                }  # fmt: skip
                for _ in range(args.rounds):
                    windows["vector_8_threads"].append(
                        await asyncio.to_thread(
                            window, modes["vector"], questions, vectors, 8, args.seconds
                        )
                    )
                    for name, call in (("reused", reused), ("new", new)):
                        windows[name].append(
                            await async_window(call, questions, vectors, concurrency, args.seconds)
                        )
                row = {name: summary(w) for name, w in windows.items()}
                for name in ("reused", "new"):
                    row[name]["ratio_to_vector_8_threads"] = round(
                        row[name]["qps"] / row["vector_8_threads"]["qps"], 3
                    )
                results[str(concurrency)] = row
                shown = {n: {x: r[x] for x in r if x != "qps_per_window"} for n, r in row.items()}
                print(f"async {concurrency}", json.dumps(shown), flush=True)
            return results
        finally:
            await driver.close()

    return asyncio.run(main())


if __name__ == "__main__":
    raise SystemExit(main())
