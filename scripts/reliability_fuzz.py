"""Reliability, long form (issue 10): N hostile selections against a real Neo4j, with figures.

    python scripts/reliability_fuzz.py --n 10000            # starts its own server (sample KB)
    python scripts/reliability_fuzz.py --n 2000 --uri bolt://127.0.0.1:7690 --password pw --load

Prints attempts, ok/refused/unexplained, writes (node and relationship counts and a content
checksum before/after), hangs (attempts that outlived the query timeout, and transactions still
running past it, sampled during and after the run), median/p99 latency and the load average.
Single-threaded and rate-capped (``--rate``), so it is gentle on a small shared machine.
Exit status 1 if anything unexplained, any write or any hang was seen.
"""

from __future__ import annotations

import argparse
import os
import random
import socket
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from neo4j import GraphDatabase

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from guidedrag_graph.config import DEFAULT_NEO4J_VERSION, Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.kb import load_bundle, read_bundle, sample_kb_dir
from guidedrag_graph.runtime import LocalNeo4j
from guidedrag_graph.schema.presets import PRESETS
from guidedrag_graph.selection import Selector
from guidedrag_graph.testing.selection_fuzz import (
    Outcome,
    attempt,
    corpus,
    fingerprint,
    random_item,
    running_transactions,
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--n", type=int, default=10_000, help="attempts (corpus first, then random)"
    )
    parser.add_argument("--seed", type=int, default=10)
    parser.add_argument(
        "--from",
        dest="start",
        type=int,
        default=0,
        help="replay from attempt N (the same draws; earlier attempts are drawn, not run)",
    )
    parser.add_argument("--rate", type=float, default=50.0, help="most attempts per second")
    parser.add_argument("--timeout", type=float, default=10.0, help="GUIDEDRAG_QUERY_TIMEOUT")
    parser.add_argument(
        "--max-seconds", type=float, default=None, help="stop early (figures for what ran)"
    )
    parser.add_argument("--uri", help="an existing server (default: start one)")
    parser.add_argument("--password", default="guidedrag-fuzz-pw")
    parser.add_argument("--load", action="store_true", help="wipe and load the sample KB at --uri")
    args = parser.parse_args()

    server = None
    uri = args.uri
    home = None
    if uri is None:
        home = tempfile.TemporaryDirectory(prefix="guidedrag-fuzz-")
        server = LocalNeo4j(
            Path(home.name),
            version=os.environ.get("GUIDEDRAG_TEST_NEO4J_VERSION", DEFAULT_NEO4J_VERSION),
            cache_dir=Path.home() / ".cache" / "guidedrag" / "neo4j",
            bolt_port=free_port(),
            http_port=free_port(),
            password=args.password,
            heap="768m",
            pagecache="256m",
        )
        print("starting a private Neo4j ...", flush=True)
        server.start()
        uri = server.uri
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        neo4j_uri=uri,
        neo4j_password=args.password,
        neo4j_database="neo4j",
        query_timeout=args.timeout,
    )
    driver = GraphDatabase.driver(
        uri, auth=(settings.neo4j_username, args.password), notifications_min_severity="OFF"
    )
    try:
        bundle = read_bundle(sample_kb_dir())
        if server is not None or args.load:
            load_bundle(driver, settings, PRESETS["guidedrag"], bundle, migrate=True)
        return run(driver, settings, args, sorted({e.name for e in bundle.entities}))
    finally:
        driver.close()
        if server is not None:
            server.stop()
        if home is not None:
            home.cleanup()


def run(driver, settings: Settings, args: argparse.Namespace, names: list[str]) -> int:  # type: ignore[no-untyped-def]
    selector = Selector(GraphContext.open(settings, driver))
    rng = random.Random(args.seed)
    items = corpus()
    load_before = os.getloadavg()
    before = fingerprint(driver)
    outcomes: list[Outcome] = []
    unexplained: Counter[str] = Counter()
    refused: Counter[str] = Counter()
    long_running: set[str] = set()
    started = time.monotonic()
    slowest: list[tuple[float, int, str, str]] = []
    for i in range(args.n):
        item = items[i] if i < len(items) else random_item(rng, names[:200])
        if i < args.start:
            continue
        if args.max_seconds is not None and time.monotonic() - started > args.max_seconds:
            print(f"  stopped at the time limit ({args.max_seconds:g} s)", flush=True)
            break
        outcome = attempt(selector, item)
        outcomes.append(outcome)
        slowest = sorted(
            [*slowest, (outcome.seconds, i, f"{outcome.kind} {outcome.error}", repr(item)[:160])]
        )[-3:]
        if outcome.kind == "unexplained":
            unexplained[outcome.error] += 1
        elif outcome.kind == "refused":
            refused[outcome.error] += 1
        if i % 250 == 0:
            for tx in running_transactions(driver):
                if (tx["seconds"] or 0) > args.timeout + 5:
                    long_running.add(str(tx["id"]))
            rate = (i + 1 - args.start) / (time.monotonic() - started)
            print(
                f"  {i + 1:>6} attempts, {rate:5.1f}/s, load {os.getloadavg()[0]:.1f}", flush=True
            )
        pause = (i + 1 - args.start) / args.rate - (time.monotonic() - started)
        if pause > 0:
            time.sleep(pause)
    elapsed = time.monotonic() - started
    time.sleep(1.0)
    still = [tx for tx in running_transactions(driver)]
    after = fingerprint(driver)
    load_after = os.getloadavg()
    seconds = [o.seconds for o in outcomes]
    kinds = Counter(o.kind for o in outcomes)
    hangs = [o for o in outcomes if o.seconds > args.timeout + 5]
    writes = (after[0] - before[0], after[1] - before[1], before[2] != after[2])
    print()
    print(
        f"attempts            {len(outcomes):,} in {elapsed:.0f} s "
        f"({len(outcomes) / elapsed:.1f}/s)"
    )
    print(f"  ok                {kinds['ok']:,}")
    print(f"  refused (library) {kinds['refused']:,}  {dict(refused.most_common(6))}")
    print(f"  unexplained       {kinds['unexplained']:,}  {dict(unexplained.most_common(6))}")
    print(
        f"writes              nodes {writes[0]:+d}, relationships {writes[1]:+d}, "
        f"checksum {'CHANGED' if writes[2] else 'unchanged'}"
    )
    print(
        f"hangs               {len(hangs)} attempts > timeout+5 s; {len(long_running)} "
        f"transactions seen > timeout+5 s; {len(still)} still running at the end"
    )
    print(
        f"latency             median {statistics.median(seconds) * 1000:.1f} ms, "
        f"p99 {percentile(seconds, 0.99) * 1000:.1f} ms, max {max(seconds) * 1000:.0f} ms"
    )
    for seconds_taken, index, kind, text in reversed(slowest):
        print(f"slowest             #{index} {seconds_taken:.1f} s {kind}: {text}")
    print(
        f"load average        before {load_before[0]:.2f}/{load_before[1]:.2f}/{load_before[2]:.2f}"
        f", after {load_after[0]:.2f}/{load_after[1]:.2f}/{load_after[2]:.2f} "
        f"({os.cpu_count()} cores)"
    )
    bad = (
        kinds["unexplained"]
        or writes[0]
        or writes[1]
        or writes[2]
        or hangs
        or long_running
        or still
    )
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
