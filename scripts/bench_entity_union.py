"""Benchmark (issue 10, D1): a union of N entity() terms, as one list vs as N subqueries.

    python scripts/bench_entity_union.py --n 300

On the sample KB (a private server is started), prints for N names: the time to prepare
(resolve + compile) and run the selection as compiled now (one subquery, one ``$sel_*_ids``
list), and the time of the per-term shape (N subqueries + N set operations, what every union
compiled to before; still what the sizes tree uses), each the median of ``--repeat`` runs, side by
side in one process, with the load average. The per-term shape runs under ``--timeout`` seconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from neo4j import GraphDatabase

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from guidedrag_graph.config import DEFAULT_NEO4J_VERSION, Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.db.connection import read_query
from guidedrag_graph.errors import QueryTimeoutError
from guidedrag_graph.kb import load_bundle, read_bundle, sample_kb_dir
from guidedrag_graph.runtime import LocalNeo4j
from guidedrag_graph.schema.presets import PRESETS
from guidedrag_graph.selection import Selector, entity
from guidedrag_graph.selection.compiler import compile_plan
from scripts.reliability_fuzz import free_port


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args()
    home = tempfile.TemporaryDirectory(prefix="guidedrag-bench-")
    server = LocalNeo4j(
        Path(home.name),
        version=os.environ.get("GUIDEDRAG_TEST_NEO4J_VERSION", DEFAULT_NEO4J_VERSION),
        cache_dir=Path.home() / ".cache" / "guidedrag" / "neo4j",
        bolt_port=free_port(),
        http_port=free_port(),
        password="guidedrag-bench-pw",
        heap="768m",
        pagecache="256m",
    )
    server.start()
    try:
        settings = Settings(
            _env_file=None,  # type: ignore[call-arg]
            neo4j_uri=server.uri,
            neo4j_password="guidedrag-bench-pw",
            neo4j_database="neo4j",
            max_terms=max(args.n, 200),
            query_timeout=args.timeout,
        )
        driver = GraphDatabase.driver(
            server.uri, auth=("neo4j", "guidedrag-bench-pw"), notifications_min_severity="OFF"
        )
        bundle = read_bundle(sample_kb_dir())
        load_bundle(driver, settings, PRESETS["guidedrag"], bundle, migrate=True)
        names = sorted({e.name for e in bundle.entities})[: args.n]
        expr = entity(names[0])
        for name in names[1:]:
            expr = expr | entity(name)
        selector = Selector(GraphContext.open(settings, driver))
        selector.chunk_ids(expr)  # warm caches and the plan cache once
        one_list, per_term = [], []
        selected = 0
        for _ in range(args.repeat):
            started = time.perf_counter()
            prep = selector.prepare(expr)
            selected = len(selector.chunk_ids(prep))
            one_list.append(time.perf_counter() - started)
        plan = compile_plan(
            prep.expr, prep.resolved, selector.schema, hop_cap=settings.hop_cap, force_sets=True
        )
        query = plan.sizes_query(selector.schema, [prep.expr])
        for _ in range(args.repeat):
            started = time.perf_counter()
            try:
                read_query(driver, query, plan.params, database="neo4j", timeout=args.timeout)
                per_term.append(time.perf_counter() - started)
            except QueryTimeoutError:
                per_term.append(float("inf"))
                break
        load = os.getloadavg()
        a, b = statistics.median(one_list), statistics.median(per_term)
        print(f"union of {args.n} entity() terms on the sample KB ({selected} chunks selected)")
        print(
            f"  one list (now):      median {a * 1000:8.1f} ms  (prepare + run, {args.repeat} runs)"
        )
        print(
            f"  {args.n} subqueries:     median {b * 1000:8.1f} ms  (run only; inf = hit the "
            f"{args.timeout:g} s timeout)"
        )
        print(f"  ratio                {b / a:8.1f}x")
        print(
            f"  load average         {load[0]:.2f}/{load[1]:.2f}/{load[2]:.2f} "
            f"({os.cpu_count()} cores)"
        )
        driver.close()
    finally:
        server.stop()
        home.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
