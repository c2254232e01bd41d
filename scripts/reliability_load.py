"""Kill suite for ``guidedrag load``: SIGKILL the loader (and once the server), rerun, compare.

Issue 10, Deliver 2: a 20k-chunk synthetic bundle is loaded once cleanly (the reference counts),
then, ``--kills`` times, into an emptied database: the ``guidedrag load`` process is SIGKILLed at
a random point of its run and the same command is rerun to completion. Finally the *server* is
SIGKILLed mid-load: the loader must exit with one line that says to rerun, the server is
restarted, and the rerun must finish. Every rerun is compared with the clean load: lost and
duplicated rows are printed per run (both must be 0).

    python scripts/reliability_load.py                  # own server under /tmp, 20k chunks
    python scripts/reliability_load.py --chunks 2000 --kills 2 --no-server-kill

It starts its own Neo4j (free ports, a temporary home) and stops it at the end.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neo4j import Driver, GraphDatabase

from guidedrag_graph.config import DEFAULT_NEO4J_VERSION
from guidedrag_graph.kb import sample_kb_dir
from guidedrag_graph.kb.synthetic import SyntheticSpec, write_synthetic_bundle
from guidedrag_graph.runtime import LocalNeo4j
from guidedrag_graph.schema.presets import PRESETS
from guidedrag_graph.templates import queries as templates

SCHEMA = PRESETS["guidedrag"]
PASSWORD = "reliability-pw-1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Outcome:
    """One killed-and-rerun load compared with the clean load."""

    name: str
    killed_after_s: float
    partial_chunks: int
    counts: dict[str, int]
    lost: dict[str, int] = field(default_factory=dict)
    duplicated: dict[str, int] = field(default_factory=dict)
    note: str = ""

    @property
    def exact(self) -> bool:
        return not self.lost and not self.duplicated

    def line(self) -> str:
        lost = sum(self.lost.values())
        dup = sum(self.duplicated.values())
        return (
            f"{self.name:<14} killed {self.killed_after_s:5.1f}s into the load with "
            f"{self.partial_chunks:>6} chunks written; rerun: lost {lost}, duplicated {dup}"
            f"{' ' + str(self.lost) if self.lost else ''}"
            f"{' ' + str(self.duplicated) if self.duplicated else ''}"
            f"{'  ' + self.note if self.note else ''}"
        )


def counts(driver: Driver) -> dict[str, int]:
    record = driver.execute_query(templates.query("reliability_counts", SCHEMA)).records[0]
    return {k: int(v) for k, v in dict(record).items()}


def chunk_count(driver: Driver) -> int:
    return counts(driver)["chunks"]


def wipe(driver: Driver) -> None:
    """Empty the suite's own database (nodes only: the schema stays, as after `migrate`)."""
    query = templates.query("reliability_wipe", SCHEMA)
    while driver.execute_query(query).records[0]["n"]:
        pass


def compare(
    expected: dict[str, int], actual: dict[str, int]
) -> tuple[dict[str, int], dict[str, int]]:
    lost = {k: expected[k] - actual[k] for k in expected if actual[k] < expected[k]}
    dup = {k: actual[k] - expected[k] for k in expected if actual[k] > expected[k]}
    return lost, dup


class Suite:
    """The loader command, the database and (optionally) the server it may kill."""

    def __init__(self, uri: str, password: str, bundle: Path, server: LocalNeo4j | None) -> None:
        self.uri = uri
        self.password = password
        self.bundle = bundle
        self.server = server
        self.env = {**os.environ, "NEO4J_URI": uri, "NEO4J_PASSWORD": password}
        self.command = [
            sys.executable,
            "-c",
            "from guidedrag_graph.cli import main; main()",
            "load",
            str(bundle),
            "--no-progress",
        ]

    def driver(self) -> Driver:
        return GraphDatabase.driver(self.uri, auth=("neo4j", self.password))

    def load(self, timeout_s: float = 3600) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command, env=self.env, capture_output=True, text=True, timeout=timeout_s
        )

    def start_load(self) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self.command, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )


def clean_load(suite: Suite) -> tuple[dict[str, int], float]:
    with suite.driver() as driver:
        wipe(driver)
    t0 = time.monotonic()
    done = suite.load()
    took = time.monotonic() - t0
    if done.returncode != 0:
        raise SystemExit(f"the clean load failed: {done.stderr.strip()}")
    with suite.driver() as driver:
        expected = counts(driver)
    return expected, took


def loader_kill(suite: Suite, expected: dict[str, int], at_chunks: int, name: str) -> Outcome:
    """Start a load into an empty database, SIGKILL it once ``at_chunks`` chunks are written
    (a point inside the chunk stage, whatever the machine's speed), rerun, compare."""
    with suite.driver() as driver:
        wipe(driver)
        proc = suite.start_load()
        t0 = time.monotonic()
        while proc.poll() is None and chunk_count(driver) < at_chunks:
            time.sleep(0.02)
        killed_after = time.monotonic() - t0
        finished_first = proc.poll() is not None
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        partial = chunk_count(driver)
        rerun = suite.load()
        if rerun.returncode != 0:
            raise SystemExit(f"{name}: the rerun failed: {rerun.stderr.strip()}")
        actual = counts(driver)
    lost, dup = compare(expected, actual)
    note = "(the load had finished before the kill)" if finished_first else ""
    return Outcome(name, killed_after, partial, actual, lost, dup, note)


def server_kill(suite: Suite, expected: dict[str, int], min_chunks: int) -> Outcome:
    """SIGKILL the server mid-load: the loader says "rerun"; restart; rerun; compare."""
    assert suite.server is not None
    with suite.driver() as driver:
        wipe(driver)
        proc = suite.start_load()
        t0 = time.monotonic()
        while proc.poll() is None and chunk_count(driver) < min_chunks:
            time.sleep(0.1)
    killed_after = time.monotonic() - t0
    state = suite.server.status()
    assert state.pid is not None
    os.killpg(state.pid, signal.SIGKILL)
    _, stderr = proc.communicate(timeout=600)
    message = stderr.strip().splitlines()
    # The CLI's error is its last line; the driver may log retry warnings before it, but no
    # traceback may appear.
    advice_ok = (
        proc.returncode == 2
        and bool(message)
        and message[-1].startswith("error: ")
        and "rerun the same command" in message[-1]
        and "Traceback" not in stderr
    )
    restart_s = suite.server.start()
    with suite.driver() as driver:
        partial = chunk_count(driver)
        rerun = suite.load()
        if rerun.returncode != 0:
            raise SystemExit(f"server kill: the rerun failed: {rerun.stderr.strip()}")
        actual = counts(driver)
    lost, dup = compare(expected, actual)
    note = (
        f"loader exit {proc.returncode}, one-line rerun advice: {advice_ok} "
        f"({len(message) - 1} other stderr line(s)) "
        f"({message[-1][:120] if message else 'no message'!r}); server restart {restart_s:.0f}s"
    )
    outcome = Outcome("server SIGKILL", killed_after, partial, actual, lost, dup, note)
    if not advice_ok:
        outcome.lost["rerun_advice"] = 1
    return outcome


def run(suite: Suite, kills: int, kill_server: bool, seed: int, log: Any = print) -> list[Outcome]:
    expected, clean_s = clean_load(suite)
    log(f"clean load: {clean_s:.1f}s, counts {expected}  load avg {os.getloadavg()[0]:.1f}")
    rng = random.Random(seed)
    outcomes = []
    if kill_server:
        # First, so that the rarer case is measured even when a slow machine cuts the run short.
        outcome = server_kill(suite, expected, max(1, expected["chunks"] // 4))
        log(outcome.line())
        outcomes.append(outcome)
    for i in range(kills):
        at = int(rng.uniform(0.05, 0.95) * expected["chunks"])
        outcome = loader_kill(suite, expected, at, f"loader kill {i + 1}")
        log(outcome.line())
        outcomes.append(outcome)
    return outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--no-server-kill", dest="kill_server", action="store_false")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--version", default=DEFAULT_NEO4J_VERSION)
    parser.add_argument("--heap", default="1g")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="guidedrag-reliability-"))
    bundle = work / "bundle"
    write_synthetic_bundle(bundle, SyntheticSpec(args.chunks), centres_dir=sample_kb_dir())
    server = LocalNeo4j(
        work / "neo4j",
        version=args.version,
        cache_dir=Path(
            os.environ.get(
                "GUIDEDRAG_NEO4J_CACHE_DIR", Path.home() / ".cache" / "guidedrag" / "neo4j"
            )
        ),
        bolt_port=free_port(),
        http_port=free_port(),
        password=PASSWORD,
        heap=args.heap,
        pagecache="512m",
    )
    print(f"starting Neo4j {args.version} in {work} ...", flush=True)
    server.start()
    # SIGTERM (e.g. a timeout) must still stop the server this script started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        suite = Suite(server.uri, PASSWORD, bundle, server)
        outcomes = run(
            suite, args.kills, args.kill_server, args.seed, log=lambda m: print(m, flush=True)
        )
    finally:
        server.stop()
    bad = [o for o in outcomes if not o.exact]
    print(
        f"{len(outcomes)} killed loads, {len(outcomes) - len(bad)} reran to exact counts; "
        f"lost rows {sum(sum(o.lost.values()) for o in outcomes)}, duplicated rows "
        f"{sum(sum(o.duplicated.values()) for o in outcomes)}"
    )
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
