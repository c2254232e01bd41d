"""Reliability: 8 clients of guided retrieval across a server restart, and hub expansions.

Long form (prints figures; issue 10, "8 clients x 60 s with a server restart in the middle"):

    python scripts/reliability_clients.py                      # own server, sample KB
    python scripts/reliability_clients.py --home /tmp/h --bolt-port 7690 --http-port 7480

The script runs a managed Neo4j (``LocalNeo4j``; started in a temporary home unless ``--home``
names one), loads the sample KB if it is not there, and then:

1. **clients**: ``--clients`` threads share one driver and run guided retrieval (the paper's
   default selection for each sample question, exact ranking) in a loop. After ``--before``
   seconds the server is stopped (SIGTERM) and started again; the clients keep going, and the
   run ends ``--after`` seconds after the server answers again. Every answer is compared with
   the answer to the same question before the restart. Reported: wrong results, errors by kind
   (before, during the outage, after recovery), the outage and recovery times, q/s and p50/p99
   latency before and after, and the load average.
2. **hubs**: ``khop(hub, 5)`` and ``near(hub, 3)`` on the entities with the most edges, timed,
   with the server JVM's resident memory before and after, and again under a small hop cap to
   show the truncation being reported.

``tests/test_cli_server.py`` runs a short form of both.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import socket
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from guidedrag_graph.config import DEFAULT_NEO4J_VERSION, Settings  # noqa: E402
from guidedrag_graph.context import GraphContext  # noqa: E402
from guidedrag_graph.db.connection import connect  # noqa: E402
from guidedrag_graph.errors import GuidedRAGError  # noqa: E402
from guidedrag_graph.kb import Question, load_bundle, read_bundle, sample_kb_dir  # noqa: E402
from guidedrag_graph.pipeline import GuidedRAG, default_selection  # noqa: E402
from guidedrag_graph.runtime import LocalNeo4j  # noqa: E402
from guidedrag_graph.schema.presets import PRESETS  # noqa: E402
from guidedrag_graph.selection import Selector, khop, near  # noqa: E402
from guidedrag_graph.templates.queries import query  # noqa: E402


def load_text() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class FixedEmbedder:
    """Query vectors computed once up front: the clients measure the database, not the embedder
    (and share no SQLite cache connection across threads)."""

    model_id = "precomputed"

    def __init__(self, vectors: dict[str, np.ndarray]) -> None:
        self.vectors = vectors
        self.dimensions = len(next(iter(vectors.values())))

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self.vectors[t] for t in texts])

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        raise NotImplementedError("the reliability clients only embed questions")


@dataclass
class Call:
    started: float
    ended: float
    ok: bool
    error: str = ""
    wrong: bool = False


@dataclass
class ClientLog:
    calls: list[Call] = field(default_factory=list)


def answer_of(rag: GuidedRAG, q: Question) -> tuple[str, ...]:
    """The ranked chunk ids guided retrieval gives for ``q`` (exact cosine: deterministic)."""
    result = rag.retrieve(
        q.question,
        default_selection(q.semantics),
        semantics=q.semantics,
        k=5,
        ranker="cosine",
        path="exact",
    )
    if result.empty is not None:
        return ("<abstained>", result.empty.kind)
    return tuple(c.id for c in result.chunks)


def client(
    index: int,
    settings: Settings,
    driver: Any,
    embedder: FixedEmbedder,
    questions: list[Question],
    reference: dict[str, tuple[str, ...]],
    stop: threading.Event,
    log: ClientLog,
) -> None:
    rag = GuidedRAG(settings, driver=driver, embedder=embedder)  # type: ignore[arg-type]
    n = index
    backoff = 0.05
    while not stop.is_set():
        q = questions[n % len(questions)]
        n += 1
        started = time.perf_counter()
        try:
            got = answer_of(rag, q)
        except Exception as exc:  # every failure is counted by kind, none ends the client
            log.calls.append(Call(started, time.perf_counter(), False, exc.__class__.__name__))
            time.sleep(backoff)
            backoff = min(backoff * 2, 1.0)
            continue
        backoff = 0.05
        log.calls.append(Call(started, time.perf_counter(), True, wrong=got != reference[q.id]))


def _percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def _window(calls: list[Call], start: float, end: float, *, outage: bool = False) -> dict[str, Any]:
    """Throughput of calls that ended in [start, end); latency of those that also began there
    (a call that began during the outage carries the driver's retry wait, not query time).

    A failed call belongs to the outage when its life overlaps it, wherever it ended: a call
    begun just before the stop can spend its whole budget (``GUIDEDRAG_QUERY_TIMEOUT``) waiting
    through a slow restart and fail just after the first success, which is the outage's doing,
    not an error of the restarted server. ``before`` and ``after`` count only failures that
    began and ended inside them."""
    inside = [c for c in calls if start <= c.ended < end]
    ok = [c for c in inside if c.ok]
    latencies = [1000 * (c.ended - c.started) for c in ok if c.started >= start]
    if outage:
        failed = [c for c in calls if not c.ok and c.started < end and c.ended >= start]
    else:
        failed = [c for c in inside if not c.ok and c.started >= start]
    seconds = max(end - start, 1e-9)
    return {
        "seconds": round(seconds, 1),
        "queries": len(ok),
        "qps": round(len(ok) / seconds, 2),
        "p50_ms": round(_percentile(latencies, 50), 1),
        "p99_ms": round(_percentile(latencies, 99), 1),
        "errors": dict(Counter(c.error for c in failed)),
        "wrong": sum(c.wrong for c in ok),
    }


def run_clients(
    server: LocalNeo4j,
    settings: Settings,
    questions: list[Question],
    *,
    clients: int,
    before_s: float,
    after_s: float,
) -> dict[str, Any]:
    from guidedrag_graph.embeddings import embedder_for

    vectors = embedder_for(settings).embed_queries([q.question for q in questions])
    embedder = FixedEmbedder({q.question: v for q, v in zip(questions, vectors, strict=True)})
    driver = connect(settings)
    try:
        rag = GuidedRAG(settings, driver=driver, embedder=embedder)  # type: ignore[arg-type]
        reference = {q.id: answer_of(rag, q) for q in questions}
        stop = threading.Event()
        logs = [ClientLog() for _ in range(clients)]
        threads = [
            threading.Thread(
                target=client,
                args=(i, settings, driver, embedder, questions, reference, stop, logs[i]),
                daemon=True,
            )
            for i in range(clients)
        ]
        load_before = load_text()
        t0 = time.perf_counter()
        for thread in threads:
            thread.start()
        time.sleep(before_s)
        t_stop = time.perf_counter()
        server.stop()
        t_stopped = time.perf_counter()
        server.start()
        t_up = time.perf_counter()
        # Run `after_s` of client time once the clients are served again.
        deadline = t_up + after_s + 120
        first_ok: float | None = None
        while time.perf_counter() < deadline:
            done = [c for log in logs for c in list(log.calls) if c.ok and c.ended > t_up]
            if done:
                first_ok = min(c.ended for c in done)
                break
            time.sleep(0.05)
        if first_ok is not None:
            time.sleep(max(0.0, first_ok + after_s - time.perf_counter()))
        t_end = time.perf_counter()
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
        load_after = load_text()
    finally:
        driver.close()
    calls = [c for log in logs for c in log.calls]
    recovered = first_ok if first_ok is not None else t_end
    return {
        "clients": clients,
        "questions": len(questions),
        "load_before": load_before,
        "load_after": load_after,
        "before": _window(calls, t0, t_stop),
        "outage": _window(calls, t_stop, recovered, outage=True),
        "after": _window(calls, recovered, t_end),
        # The second half alone: caches and query plans warm again after the restart.
        "after_second_half": _window(calls, (recovered + t_end) / 2, t_end),
        "stop_s": round(t_stopped - t_stop, 1),
        "restart_s": round(t_up - t_stopped, 1),
        "recovery_after_bolt_up_s": round(recovered - t_up, 2) if first_ok else None,
        "outage_seen_by_clients_s": round(recovered - t_stop, 1) if first_ok else None,
        "wrong_results_total": sum(c.wrong for c in calls if c.ok),
        "successful_queries_total": sum(c.ok for c in calls),
        "recovered": first_ok is not None,
    }


def _jvm_rss_mib(server: LocalNeo4j) -> float | None:
    status = server.status()
    if not status.running or status.pid is None:
        return None
    try:
        for line in Path(f"/proc/{status.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


def hub_names(driver: Any, settings: Settings, limit: int) -> list[dict[str, Any]]:
    """The entities with the most edges (the sample KB has the default schema)."""
    text = query("hub_entities", PRESETS["guidedrag"])
    records, _, _ = driver.execute_query(text, {"limit": limit}, database_=settings.neo4j_database)
    return [r.data() for r in records]


def run_hubs(
    server: LocalNeo4j | None, settings: Settings, *, hubs: int, small_cap: int
) -> dict[str, Any]:
    """``khop(hub, 5)`` and ``near(hub, 3)``: time, sizes, truncation, server memory."""
    driver = connect(settings)
    out: dict[str, Any] = {"load_before": load_text(), "runs": []}
    try:
        names = hub_names(driver, settings, hubs)
        out["hubs"] = names
        for cap in (settings.hop_cap, small_cap):
            capped = settings.model_copy(update={"hop_cap": cap})
            selector = Selector(GraphContext.open(capped, driver))
            for hub in names:
                for expr in (khop(hub["name"], 5), near(hub["name"], 3)):
                    rss_before = _jvm_rss_mib(server) if server else None
                    started = time.perf_counter()
                    error = ""
                    try:
                        tree = selector.sizes(expr)
                        prep = selector.prepare(expr)
                        ids = selector.chunk_ids(prep)
                        size, truncated = len(ids), tree.truncated
                    except GuidedRAGError as exc:
                        size, truncated, error = -1, False, str(exc)
                    out["runs"].append(
                        {
                            "selection": expr.to_text(),
                            "hop_cap": cap,
                            "chunks": size,
                            "truncated": truncated,
                            "seconds": round(time.perf_counter() - started, 2),
                            "jvm_rss_mib_before": rss_before,
                            "jvm_rss_mib_after": _jvm_rss_mib(server) if server else None,
                            "error": error,
                            "load": load_text(),
                        }
                    )
    finally:
        driver.close()
    return out


def ensure_sample(settings: Settings) -> None:
    bundle = read_bundle(sample_kb_dir())
    driver = connect(settings)
    try:
        from guidedrag_graph.kb.stats import kb_stats

        stats = kb_stats(driver, settings, PRESETS["guidedrag"])
        if stats["chunks"] != bundle.counts()["chunks"]:
            print(f"loading the sample KB ({load_text()})", flush=True)
            load_bundle(driver, settings, PRESETS["guidedrag"], bundle, migrate=True)
    finally:
        driver.close()


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--before", type=float, default=30.0, help="seconds before the restart")
    parser.add_argument("--after", type=float, default=30.0, help="seconds after recovery")
    parser.add_argument("--hubs", type=int, default=2, help="hub entities to expand")
    parser.add_argument("--small-cap", type=int, default=50, help="hop cap for the truncation run")
    parser.add_argument("--skip-clients", action="store_true")
    parser.add_argument("--skip-hubs", action="store_true")
    parser.add_argument("--version", default=os.environ.get("GUIDEDRAG_TEST_NEO4J_VERSION"))
    parser.add_argument("--home", type=Path, help="server home (default: a temporary one)")
    parser.add_argument("--bolt-port", type=int)
    parser.add_argument("--http-port", type=int)
    parser.add_argument("--password", default="reliability-pw")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    # The driver logs each retry during the outage as a warning; the figures say it all.
    logging.getLogger("neo4j").addHandler(logging.NullHandler())
    logging.getLogger("neo4j").propagate = False

    tmp = None if args.home else tempfile.TemporaryDirectory(prefix="guidedrag-reliability-")
    home = args.home or Path(tmp.name)  # type: ignore[union-attr]
    server = LocalNeo4j(
        home,
        version=args.version or DEFAULT_NEO4J_VERSION,
        cache_dir=Settings(_env_file=None).neo4j_cache_dir,  # type: ignore[call-arg]
        bolt_port=args.bolt_port or free_port(),
        http_port=args.http_port or free_port(),
        password=args.password,
        heap="768m",
        pagecache="256m",
    )
    started_here = False
    status = server.status()
    if status.running:
        server.bolt_port = status.bolt_port or server.bolt_port
        server.http_port = status.http_port or server.http_port
    else:
        print(f"starting Neo4j {server.version} in {home} ({load_text()})", flush=True)
        server.start()
        started_here = True
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None,
        neo4j_uri=server.uri,
        neo4j_password=args.password,
        neo4j_database="neo4j",
        openai_api_key=None,
        openai_base_url=None,
    )
    figures: dict[str, Any] = {"neo4j": server.version}
    try:
        ensure_sample(settings)
        if not args.skip_clients:
            questions = [q for q in read_bundle(sample_kb_dir()).questions if q.semantics.entities]
            print(
                f"{args.clients} clients, {args.before:.0f}s, restart, {args.after:.0f}s "
                f"({load_text()})",
                flush=True,
            )
            figures["clients"] = run_clients(
                server,
                settings,
                questions,
                clients=args.clients,
                before_s=args.before,
                after_s=args.after,
            )
            print(json.dumps(figures["clients"], indent=1), flush=True)
        if not args.skip_hubs:
            figures["hubs"] = run_hubs(server, settings, hubs=args.hubs, small_cap=args.small_cap)
            for run in figures["hubs"]["runs"]:
                print(
                    f"  {run['selection']:<34} cap {run['hop_cap']:>6}: {run['chunks']:>4} chunks"
                    f"{' (truncated: hop cap hit)' if run['truncated'] else ''} in "
                    f"{run['seconds']:.2f}s, JVM RSS {run['jvm_rss_mib_before']} -> "
                    f"{run['jvm_rss_mib_after']} MiB {run['error']} ({run['load']})",
                    flush=True,
                )
    finally:
        if started_here:
            server.stop()
        if tmp is not None:
            tmp.cleanup()
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=1) + "\n")
    return figures


if __name__ == "__main__":
    main()
