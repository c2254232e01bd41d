"""Exhaustion run of the hostile suite: N clients x D seconds of worst-case selections within the
default limits, and a ``RETURN 1`` probe from another session every 100 ms.

Long form (prints the figures; docs/security.md has the table they go in):

    python scripts/security_exhaustion.py                      # 16 clients x 60 s
    python scripts/security_exhaustion.py --clients 4 --seconds 10 --log /tmp/nh/logs

It connects to ``NEO4J_URI`` / ``NEO4J_PASSWORD`` (the sample KB is loaded if the database does
not hold it) and runs, per client, in a loop: the worst selections the default limits allow,
built on the sample KB's biggest hubs: ``GUIDEDRAG_MAX_TERMS`` (200) terms of ``near(hub, 5)``
and ``khop(hub, 5)`` (``GUIDEDRAG_MAX_HOP_DEPTH``), intersected and unioned; 200 terms
alternating ``near(hub, 5)`` and ``khop(hub, 5)`` chained with ``-`` and with ``^`` (issue 34:
before these compiled to one clause, their 199 binary steps planned past the timeout); and a
``-`` chain over 12 different hubs. Each is resolved, cost-checked and run under the configured
``GUIDEDRAG_QUERY_TIMEOUT`` (or ``--timeout``). Before the load, the 12-hub ``-`` chain runs
alone once, and how long the server kept its transaction is printed.

Printed: queries run, per-query max duration against timeout + 2 s, error classes (only
``QueryTimeoutError``, the cost-bound refusal ``SelectionCostError`` and the memory limit's
``QueryMemoryError`` are allowed), heap ``OutOfMemoryError`` lines the server logged during the
run (``--log``: its logs folder), the probe's p50 / p99 / max (limit 500 ms), and the server's
side: the longest transaction ``SHOW TRANSACTIONS`` saw (limit timeout + 5 s: the client stops
waiting at the timeout + ``read_deadline.GRACE_S``; the server ends the query at its next
termination check, which planning does not have and an oversubscribed server reaches late).
Exit status 1 when any acceptance line fails.

``tests/test_security_exhaustion.py`` runs a short form (2 clients x 3 s, a 2 s timeout).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from neo4j import Driver  # noqa: E402

from guidedrag_graph.config import Settings, load_settings  # noqa: E402
from guidedrag_graph.context import GraphContext  # noqa: E402
from guidedrag_graph.db.connection import connect, read_query  # noqa: E402
from guidedrag_graph.errors import GuidedRAGError  # noqa: E402
from guidedrag_graph.kb import load_bundle, read_bundle, sample_kb_dir  # noqa: E402
from guidedrag_graph.schema.presets import PRESETS  # noqa: E402
from guidedrag_graph.selection import Expr, Selector, khop, near  # noqa: E402
from guidedrag_graph.templates.queries import query  # noqa: E402
from guidedrag_graph.testing.selection_fuzz import running_transactions  # noqa: E402

# The timeout, the cost bound's refusal, and the memory limit's (a query that would overdraw the
# transactions' share of the heap fails instead of pushing the server into GC pauses).
ALLOWED = {"QueryTimeoutError", "SelectionCostError", "QueryMemoryError"}
SLACK_S = 2.0
# How long past the timeout the server may keep a transaction of ours (issue 34's acceptance).
SERVER_SLACK_S = 5.0
# Different hubs in the single `-` chain (issue 34: it alone kept its transaction 24 s past a
# 30 s timeout).
CHAIN_HUBS = 12


@dataclass
class Figures:
    clients: int
    seconds: float
    timeout: float
    durations: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    samples: dict[str, str] = field(default_factory=dict)
    probe: list[float] = field(default_factory=list)
    probe_errors: int = 0
    oom: int = 0
    # The server's side: the longest-running transaction SHOW TRANSACTIONS saw (a query the
    # client stopped waiting for at the deadline still runs until the server ends it).
    server_longest: float = 0.0
    server_still_running: int = 0  # transactions over timeout + SERVER_SLACK_S at any poll
    selections: list[str] = field(default_factory=list)
    # The 12-hub `-` chain run alone before the load: (client seconds, server seconds).
    alone: tuple[float, float] | None = None

    @property
    def max_duration(self) -> float:
        return max(self.durations, default=0.0)

    def percentile(self, p: float) -> float:
        if not self.probe:
            return 0.0
        ordered = sorted(self.probe)
        return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]

    @property
    def unexpected(self) -> dict[str, int]:
        return {k: v for k, v in self.errors.items() if k not in ALLOWED}

    @property
    def ok(self) -> bool:
        return (
            not self.unexpected
            and self.max_duration <= self.timeout + SLACK_S
            and self.server_longest <= self.timeout + SERVER_SLACK_S
            and (self.alone is None or self.alone[1] <= self.timeout + SERVER_SLACK_S)
            and self.oom == 0
            and self.probe_errors == 0
            and self.percentile(99) < 0.5
        )


def _hubs(driver: Driver, settings: Settings, n: int) -> list[str]:
    rows = read_query(
        driver, query("hub_entities", PRESETS["guidedrag"]), {"limit": n},
        database=settings.neo4j_database,
    )  # fmt: skip
    return [str(r["name"]) for r in rows]


def _combine(expr: Expr | None, op: str, term: Expr) -> Expr:
    if expr is None:
        return term
    return {"&": expr & term, "|": expr | term, "-": expr - term, "^": expr ^ term}[op]


def alternating_chain(hubs: list[str], op: str, terms: int, depth: int) -> Expr:
    """``terms`` terms alternating ``near(hub, depth)`` and ``khop(hub, depth)`` over ``hubs``
    (cycled), chained with ``op``: issue 34's ``-`` and ``^`` chains."""
    expr: Expr | None = None
    for i in range(terms):
        hub = hubs[i % len(hubs)]
        expr = _combine(expr, op, near(hub, depth) if i % 2 == 0 else khop(hub, depth))
    assert expr is not None
    return expr


def hub_chain(driver: Driver, settings: Settings) -> Expr:
    """The ``-`` chain over the ``CHAIN_HUBS`` biggest hubs, alternating near and khop at the
    depth limit (issue 34's single runaway)."""
    hubs = _hubs(driver, settings, CHAIN_HUBS)
    return alternating_chain(hubs, "-", len(hubs), settings.max_hop_depth)


def worst_selections(driver: Driver, settings: Settings, *, distinct: bool = False) -> list[Expr]:
    """The costliest selections the default limits allow on this KB: MAX_TERMS deep terms from
    its biggest hubs, intersected (every term computed) and unioned; MAX_TERMS terms
    alternating near and khop chained with ``-`` and with ``^``; and the ``CHAIN_HUBS``-hub
    ``-`` chain. By default the terms cycle over the 4 biggest hubs (a repeated term is compiled
    once, so these are cheap since chains compile to one clause); ``distinct``: MAX_TERMS
    different hubs, one subquery each."""
    hubs = _hubs(driver, settings, settings.max_terms if distinct else 4)
    depth, terms = settings.max_hop_depth, settings.max_terms
    out: list[Expr] = []
    for make in (lambda h: near(h, depth), lambda h: khop(h, depth)):
        for combine in ("&", "|"):
            expr: Expr | None = None
            for i in range(terms):
                expr = _combine(expr, combine, make(hubs[i % len(hubs)]))
            assert expr is not None
            out.append(expr)
    for combine in ("-", "^"):
        out.append(alternating_chain(hubs, combine, terms, depth))
    out.append(hub_chain(driver, settings))
    return out


def server_lifetime(
    driver: Driver, probe_driver: Driver, settings: Settings, expr: Expr
) -> tuple[float, float]:
    """Run ``expr`` once (errors are the outcome, not a failure) while ``SHOW TRANSACTIONS``
    is polled from ``probe_driver``: (seconds until the client call returned, seconds until
    no selection transaction was left on the server)."""
    graph = GraphContext.open(settings, driver)
    done = threading.Event()
    took = [0.0]

    def call() -> None:
        t0 = time.monotonic()
        with contextlib.suppress(Exception):  # a timeout or a refusal: the outcome
            Selector(graph).chunk_ids(expr)
        took[0] = time.monotonic() - t0
        done.set()

    t0 = time.monotonic()
    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    last = 0.0
    limit = t0 + settings.query_timeout + 120
    while time.monotonic() < limit:
        rows = running_transactions(probe_driver, settings.neo4j_database)
        if any(r["query"] is None or "CALL () {" in str(r["query"]) for r in rows):
            last = time.monotonic() - t0
        elif done.is_set():
            break
        time.sleep(0.1)
    worker.join(timeout=settings.query_timeout + 10)
    return took[0], last


def ensure_sample(driver: Driver, settings: Settings) -> None:
    """Load the sample KB into an empty database; refuse (never wipe) one holding another KB."""
    rows = read_query(
        driver, query("kb_stats", PRESETS["guidedrag"]), database=settings.neo4j_database
    )
    bundle = read_bundle(sample_kb_dir())
    chunks = int(rows[0]["chunks"]) if rows else 0
    if chunks == 0:
        load_bundle(driver, settings, PRESETS["guidedrag"], bundle)
    elif chunks != len(bundle.chunks):
        raise SystemExit(
            f"the database holds {chunks} chunks, not the sample KB's {len(bundle.chunks)}: run "
            f"against a server with the sample KB (`guidedrag kb wipe`, `guidedrag load --sample`)"
        )


def _oom_lines(logs: Path | None) -> dict[Path, int]:
    if logs is None:
        return {}
    counts: dict[Path, int] = {}
    for path in sorted(logs.glob("*.log")):
        with path.open("rb") as handle:
            counts[path] = handle.read().count(b"OutOfMemoryError")
    return counts


def run(
    driver: Driver,
    probe_driver: Driver,
    settings: Settings,
    *,
    clients: int,
    seconds: float,
    logs: Path | None = None,
    distinct: bool = False,
    alone: bool = True,
) -> Figures:
    """The run itself (the short form in the tests calls this)."""
    figures = Figures(clients, seconds, settings.query_timeout)
    selections = worst_selections(driver, settings, distinct=distinct)
    figures.selections = [e.to_text()[:80] for e in selections]
    if alone:
        figures.alone = server_lifetime(driver, probe_driver, settings, selections[-1])
    graph = GraphContext.open(settings, driver)
    lock = threading.Lock()
    oom_before = _oom_lines(logs)
    stop = threading.Event()
    deadline = time.monotonic() + seconds

    def client(n: int) -> None:
        selector = Selector(graph)
        i = n
        while time.monotonic() < deadline:
            expr = selections[i % len(selections)]
            i += 1
            t0 = time.monotonic()
            kind = None
            try:
                selector.chunk_ids(expr)
            except GuidedRAGError as exc:
                kind = type(exc).__name__
                message = str(exc)
            except Exception as exc:
                kind = type(exc).__name__
                message = str(exc)
            took = time.monotonic() - t0
            with lock:
                figures.durations.append(took)
                if kind is not None:
                    figures.errors[kind] += 1
                    figures.samples.setdefault(kind, message.splitlines()[0][:200])

    def probe() -> None:
        check = query("connection_check")
        while not stop.is_set():
            t0 = time.monotonic()
            try:
                read_query(probe_driver, check, database=settings.neo4j_database, timeout=10)
                figures.probe.append(time.monotonic() - t0)
            except Exception:
                figures.probe_errors += 1
            stop.wait(max(0.0, 0.1 - (time.monotonic() - t0)))

    def watch() -> None:
        while not stop.is_set():
            try:
                rows = running_transactions(probe_driver, settings.neo4j_database)
            except Exception:
                rows = []
            with lock:
                for row in rows:
                    took = float(row["ms"]) / 1000
                    figures.server_longest = max(figures.server_longest, took)
                    if took > settings.query_timeout + SERVER_SLACK_S:
                        figures.server_still_running += 1
            stop.wait(0.5)

    prober = threading.Thread(target=probe, daemon=True)
    prober.start()
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    workers = [threading.Thread(target=client, args=(n,), daemon=True) for n in range(clients)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=seconds + settings.query_timeout + 120)
    # The server's stragglers: watch until none of the run's transactions is left.
    settle = time.monotonic() + settings.query_timeout + 60
    while time.monotonic() < settle and _running(probe_driver, settings):
        time.sleep(0.5)
    stop.set()
    prober.join(timeout=15)
    watcher.join(timeout=15)
    after = _oom_lines(logs)
    figures.oom = sum(max(0, v - oom_before.get(k, 0)) for k, v in after.items())
    return figures


def _running(driver: Driver, settings: Settings) -> bool:
    try:
        rows = running_transactions(driver, settings.neo4j_database)
        return any(float(r["ms"]) > 500 for r in rows)
    except Exception:
        return False


def report(figures: Figures, logs: Path | None) -> str:
    limit = figures.timeout + SLACK_S
    server_limit = figures.timeout + SERVER_SLACK_S
    alone = (
        f"client {figures.alone[0]:.2f} s, server {figures.alone[1]:.2f} s (limit "
        f"{server_limit:g} s): {'ok' if figures.alone[1] <= server_limit else 'OVER'}"
        if figures.alone is not None
        else "not run"
    )
    errors = ", ".join(f"{k} {v}" for k, v in sorted(figures.errors.items())) or "none"
    lines = [
        f"exhaustion: {figures.clients} clients x {figures.seconds:.0f} s of "
        f"{len(figures.selections)} selections, timeout "
        f"{figures.timeout:g} s, load {' '.join(f'{x:.2f}' for x in os.getloadavg())} on "
        f"{os.cpu_count()} CPUs",
        f"queries: {len(figures.durations)}; max duration {figures.max_duration:.2f} s "
        f"(limit timeout + {SLACK_S:g} s = {limit:g} s): "
        f"{'ok' if figures.max_duration <= limit else 'OVER'}",
        f"{CHAIN_HUBS}-hub - chain alone, before the load: {alone}",
        f"server side (SHOW TRANSACTIONS every 0.5 s): longest transaction "
        f"{figures.server_longest:.2f} s (limit timeout + {SERVER_SLACK_S:g} s = "
        f"{server_limit:g} s): {'ok' if figures.server_longest <= server_limit else 'OVER'}; "
        f"polls that saw one over it: {figures.server_still_running}",
        f"errors: {errors}; unexpected: {figures.unexpected or 'none'}",
        *(f"  {k}: {v}" for k, v in figures.samples.items()),
        f"heap OutOfMemoryError in the server log: "
        f"{figures.oom if logs is not None else 'not checked (give --log)'}",
        f"probe RETURN 1 every 100 ms: {len(figures.probe)} answers, {figures.probe_errors} "
        f"failed; p50 {figures.percentile(50) * 1000:.1f} ms, p99 "
        f"{figures.percentile(99) * 1000:.1f} ms (limit 500 ms), max "
        f"{max(figures.probe, default=0.0) * 1000:.1f} ms",
        f"acceptance: {'PASS' if figures.ok else 'FAIL'}",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--timeout", type=float, default=None, help="GUIDEDRAG_QUERY_TIMEOUT")
    parser.add_argument("--log", type=Path, default=None, help="the server's logs folder")
    parser.add_argument(
        "--distinct", action="store_true", help="MAX_TERMS different hubs, not 4 repeated"
    )
    args = parser.parse_args(argv)
    settings = load_settings()
    if args.timeout is not None:
        settings = settings.model_copy(update={"query_timeout": args.timeout})
    driver = connect(settings)
    probe_driver = connect(settings)
    try:
        ensure_sample(driver, settings)
        figures = run(
            driver, probe_driver, settings, clients=args.clients, seconds=args.seconds,
            logs=args.log, distinct=args.distinct,
        )  # fmt: skip
    finally:
        driver.close()
        probe_driver.close()
    print(report(figures, args.log))
    return 0 if figures.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
