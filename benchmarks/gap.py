"""Where the default's time over ``VectorRetriever`` goes: the server's part and Python's part.

``doors.py`` says how much slower the default is than neo4j-graphrag's ``VectorRetriever``; this
says where. One process, one server, per question and in a rotating order after a warm-up pass:

- ``vector``: ``VectorRetriever.search(query_vector=..., top_k=k)`` returning the chunk id (as in
  ``doors.py``), and ``vector_query``: the query it sends (recorded from its own call), run in a
  plain READ session;
- ``default``: ``GuidedRAG.retrieve(question, semantics=..., query_vector=...)``, with the time
  inside its reads clocked, and ``default_query``: the query it sent for that question (recorded
  from its own read), run in the same kind of plain session.

So, per question: the server's share of the gap is ``default_query - vector_query`` (both through
the same few driver calls), Python's is ``(default - reads) - (vector - vector_query)`` (each
caller's own work outside its query), and our read path's own cost is ``reads - default_query``
(the session options, bookmarks, deadline and row conversion of ``db.read_query``). Medians over
questions and passes, the load beside them; the result is printed as JSON.

    python benchmarks/gap.py --bundle synthetic-1000000 --limit 40 --passes 6   # NEO4J_* from env

Only the stated-semantics default is split (the bare question adds linking, timed by
``doors.py`` as ``question``). Throwaway figures: nothing is written to ``results/``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from neo4j import READ_ACCESS  # noqa: E402
from neo4j_graphrag.retrievers import VectorRetriever  # noqa: E402

from benchmarks.doors import (  # noqa: E402
    Read,
    ReadClock,
    id_retriever,
    questions_and_rag,
    recorded,
)
from guidedrag_graph.config import Settings  # noqa: E402
from guidedrag_graph.db.connection import connect  # noqa: E402


def recorded_reads(rag: Any, question: Any, vector: list[float], k: int) -> list[Read]:
    """The queries (text, parameters) one default retrieval sends, in order."""
    seen: list[Read] = []
    with recorded(seen):
        rag.retrieve(question.question, semantics=question.semantics, query_vector=vector, k=k)
    return seen


def recorded_vector_query(
    driver: Any, retriever: VectorRetriever, vector: list[float], k: int
) -> Read:
    """The query (text, parameters) a warm ``VectorRetriever.search`` sends (one
    ``driver.execute_query``; its first search also reads ``dbms.components()``)."""
    retriever.search(query_vector=vector, top_k=k)  # its first search asks the server's version
    seen: list[Read] = []
    inner = driver.execute_query

    def recording(query: Any, parameters: Any = None, *args: Any, **kwargs: Any) -> Any:
        given = parameters if parameters is not None else kwargs.get("parameters_")
        seen.append((str(getattr(query, "text", query)), dict(given or {})))
        return inner(query, parameters, *args, **kwargs)

    driver.execute_query = recording
    try:
        retriever.search(query_vector=vector, top_k=k)
    finally:
        del driver.execute_query  # the instance attribute: the class's method shows again
    if len(seen) != 1:
        raise SystemExit(f"VectorRetriever sent {len(seen)} queries, not one: update gap.py")
    return seen[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", type=Path, required=True)
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--limit", type=int, default=40, help="questions to time")
    parser.add_argument("--passes", type=int, default=6, help="timed passes after the warm-up")
    args = parser.parse_args(argv)
    if args.passes < 1 or args.limit < 1:
        parser.error("--passes and --limit must be at least 1")
    settings = Settings(openai_api_key=None, openai_base_url=None)
    driver = connect(settings)
    clock = ReadClock()
    try:
        questions, vectors, rag = questions_and_rag(settings, driver, args.bundle, args.limit)
        retriever = id_retriever(driver, settings, rag)
        for q, v in zip(questions, vectors, strict=True):  # warm: names resolved, plans cached
            rag.retrieve(q.question, semantics=q.semantics, query_vector=v, k=args.k)
        default_queries: list[Read] = []
        for q, v in zip(questions, vectors, strict=True):
            reads = recorded_reads(rag, q, v, args.k)
            if len(reads) != 1:
                raise SystemExit(f"a warm default retrieval sent {len(reads)} reads, not one")
            default_queries.append(reads[0])
        vector_queries = [recorded_vector_query(driver, retriever, v, args.k) for v in vectors]

        def plain(recorded: Read) -> None:
            with driver.session(
                database=settings.neo4j_database,
                default_access_mode=READ_ACCESS,
                notifications_min_severity="OFF",
            ) as session:
                list(session.run(*recorded))

        calls = {
            "vector": lambda i: retriever.search(query_vector=vectors[i], top_k=args.k),
            "vector_query": lambda i: plain(vector_queries[i]),
            "default": lambda i: rag.retrieve(
                questions[i].question,
                semantics=questions[i].semantics,
                query_vector=vectors[i],
                k=args.k,
            ),
            "default_query": lambda i: plain(default_queries[i]),
        }
        names = list(calls)
        times: dict[str, list[float]] = {n: [] for n in names}
        reads: list[float] = []
        load_before = os.getloadavg()[0]
        for rep in range(args.passes + 1):  # pass 0 warms the plain sessions' plans
            for i in range(len(questions)):
                turn = i % len(names)
                for name in names[turn:] + names[:turn]:
                    clock.take()
                    started = time.perf_counter()
                    calls[name](i)
                    spent = time.perf_counter() - started
                    inside = clock.take()
                    if rep:
                        times[name].append(spent)
                        if name == "default":
                            reads.append(inside)
        load_after = os.getloadavg()[0]
    finally:
        clock.close()
        driver.close()

    def ms(values: list[float]) -> float:
        return round(1000 * statistics.median(values), 3)

    python_default = [t - r for t, r in zip(times["default"], reads, strict=True)]
    python_vector = [a - b for a, b in zip(times["vector"], times["vector_query"], strict=True)]
    p50 = {n: ms(v) for n, v in times.items()}
    summary = {
        "bundle": str(args.bundle),
        "questions": len(questions),
        "passes": args.passes,
        "rank_plugin": rag.graph.rank_plugin,
        "p50_ms": {**p50, "default_reads": ms(reads)},
        "ratio_default_to_vector": round(p50["default"] / p50["vector"], 3),
        "gap_ms": {
            "whole": round(p50["default"] - p50["vector"], 3),
            "server": round(p50["default_query"] - p50["vector_query"], 3),
            "python": round(ms(python_default) - ms(python_vector), 3),
            "read_path": round(ms(reads) - p50["default_query"], 3),
        },
        "python_outside_query_p50_ms": {
            "default": ms(python_default),
            "vector": ms(python_vector),
        },
        "load": {"before": round(load_before, 2), "after": round(load_after, 2)},
    }
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
