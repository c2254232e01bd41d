"""Where the default's query time goes: its one tiers query replayed beside its own parts.

``benchmarks/doors.py`` times whole calls; this takes the one read each MuSiQue question sends
through the default (``GuidedRAG.retrieve`` with semantics, ``auto``), records it, and replays it
on one session, interleaved per question in a rotating order, beside:

- the same query with U read by ``db.index.vector.queryNodes`` instead of ``SEARCH`` (the
  template's ``u_search=index`` variant, the 5.26 path);
- the same query with every tier's names emptied (``sel_*_ids = []``): what ranking costs with
  no tier lists to build;
- ``retrieve_search``: the plain vector index top k with the same rows (base RAG);
- neo4j-graphrag ``VectorRetriever.search`` (the whole call, id only, as ``doors.py``'s base);
- ``ping``: ``connection_check`` (``RETURN 1``).

Reported per row: wall p50 (client), the server's own time (mean of ``result_available_after``
+ ``result_consumed_after``), and the wall ratio to ``VectorRetriever``; the load average after
each pass. Every replayed variant of a question must return the recorded query's ids (the
emptied-tiers row excepted). Results go to ``--out`` (JSON).

    python benchmarks/tiers_anatomy.py --bundle out/musique --out anatomy.json

This machine's figures drift by up to 2x within an hour (the same ``RETURN 1`` measured 1.4 and
3.0 ms): compare rows of one run, never runs of different hours.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from neo4j import READ_ACCESS  # noqa: E402

from benchmarks.doors import Read, id_retriever, questions_and_rag, recorded  # noqa: E402
from guidedrag_graph.config import Settings  # noqa: E402
from guidedrag_graph.db.connection import connect  # noqa: E402
from guidedrag_graph.pipeline import GuidedRAG  # noqa: E402
from guidedrag_graph.templates import queries as templates  # noqa: E402

TIER_IDS = re.compile(r"sel_\d+_ids")
TIERS = "tiers query (the default's one read)"
BY_INDEX = "tiers query, U by queryNodes"


@contextmanager
def forced_variant(rag: GuidedRAG, **facts: str) -> Iterator[None]:
    """The retriever's ranking facts with ``facts`` forced (``u_search='index'``: the 5.26 index
    path on 2026): every ranking query is planned from them (``retrieval/plans.py``)."""
    planner = rag.retriever.planner
    known = planner.facts
    planner.facts = lambda: known().with_facts(**facts)  # type: ignore[method-assign]
    try:
        yield
    finally:
        del planner.facts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", type=Path, required=True, help="a bundle with questions")
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--limit", type=int, default=100, help="answerable questions")
    parser.add_argument("--passes", type=int, default=3, help="timed passes after the warm-up")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)

    settings = Settings(openai_api_key=None, openai_base_url=None)
    driver = connect(settings)
    try:
        questions, vectors, rag = questions_and_rag(settings, driver, args.bundle, args.limit)
        k = args.k

        def record() -> list[Read]:
            for q, v in zip(questions, vectors, strict=True):  # names resolved, plans compiled
                rag.retrieve(q.question, semantics=q.semantics, query_vector=v, k=k)
            reads: list[Read] = []
            with recorded(reads):
                for q, v in zip(questions, vectors, strict=True):
                    rag.retrieve(q.question, semantics=q.semantics, query_vector=v, k=k)
            if len(reads) != len(questions):
                raise SystemExit(f"expected one read per question, got {len(reads)}")
            return reads

        tiers = record()
        with forced_variant(rag, u_search="index"):
            by_index = record()
        u_query, u_extra = rag.retriever.paths.index_query()
        vector = id_retriever(driver, settings, rag)
        ping = templates.query("connection_check")

        def emptied(params: dict[str, Any]) -> dict[str, Any]:
            return {n: ([] if TIER_IDS.fullmatch(n) else p) for n, p in params.items()}

        def plan(i: int) -> dict[str, Read | Callable[[], object]]:
            query, params = tiers[i]
            u_params = {**u_extra, "query_vector": vectors[i], "fetch_k": k,
                        "with_embedding": False}  # fmt: skip
            return {
                TIERS: (query, params),
                BY_INDEX: by_index[i],
                "tiers query, tiers emptied": (query, emptied(params)),
                "retrieve_search (U alone, same rows)": (u_query, u_params),
                "VectorRetriever.search (id only)": lambda: vector.search(
                    query_vector=vectors[i], top_k=k
                ),
                "ping (connection_check)": (ping, {}),
            }

        names = list(plan(0))
        wall: dict[str, list[float]] = {n: [] for n in names}
        server: dict[str, list[float]] = {n: [] for n in names}
        loads = [os.getloadavg()]
        with driver.session(
            database=settings.neo4j_database,
            default_access_mode=READ_ACCESS,
            notifications_min_severity="OFF",
        ) as session:
            for rep in range(args.passes + 1):
                for i in range(len(questions)):
                    jobs = plan(i)
                    order = names[i % len(names) :] + names[: i % len(names)]
                    ids: dict[str, list[Any]] = {}
                    for name in order:
                        job = jobs[name]
                        t0 = time.perf_counter()
                        if callable(job):
                            job()
                            took, inside = time.perf_counter() - t0, None
                        else:
                            result = session.run(job[0], job[1])
                            ids[name] = [row.get("id") for row in result]
                            summary = result.consume()
                            took = time.perf_counter() - t0
                            inside = (summary.result_available_after or 0) + (
                                summary.result_consumed_after or 0
                            )
                        if rep == 0:
                            continue
                        wall[name].append(took)
                        if inside is not None:
                            server[name].append(float(inside))
                    if ids[TIERS] != ids[BY_INDEX]:
                        raise SystemExit(f"question {i}: the queryNodes variant ranked otherwise")
                loads.append(os.getloadavg())
    finally:
        driver.close()
    base = statistics.median(wall["VectorRetriever.search (id only)"])
    rows = {
        n: {
            "wall_p50_ms": round(1000 * statistics.median(wall[n]), 3),
            "server_mean_ms": round(statistics.mean(server[n]), 3) if server[n] else None,
            "x_vector": round(statistics.median(wall[n]) / base, 3),
            "samples": len(wall[n]),
            "server_samples": len(server[n]),
        }
        for n in names
    }
    out = {
        "bundle": str(args.bundle),
        "questions": len(questions),
        "passes": args.passes,
        "k": k,
        "rows": rows,
        "load": [[round(x, 2) for x in load] for load in loads],
    }
    for name, row in rows.items():
        print(f"{name:40s} wall p50 {row['wall_p50_ms']:7.3f} ms  x{row['x_vector']:.2f}  "
              f"server {row['server_mean_ms']} ms")  # fmt: skip
    print("load", out["load"])
    args.out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
