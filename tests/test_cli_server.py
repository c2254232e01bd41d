"""The CLI against a server of its own: fresh database, restarts, a bulk import and a kill
mid-command.

One managed server for the module (started with a random password, on free ports), used by the
tests in file order: the first ones need a fresh database, the bulk import stops, replaces and
restarts it, the last one kills it.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from neo4j import Driver, GraphDatabase

from guidedrag_graph.config import DEFAULT_NEO4J_VERSION, Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.db.connection import connect
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.kb import load_bundle, read_bundle, sample_kb_dir
from guidedrag_graph.kb.bulk import bulk_load
from guidedrag_graph.retrieval import ChunkIdSelection, Retriever
from guidedrag_graph.runtime import LocalNeo4j
from guidedrag_graph.schema.presets import PRESETS
from tests.cli_run import error_line, run_cli
from tests.conftest import _sample_is_loaded, cache_dir, free_port, sample_bundle, wipe
from tests.kb_bundles import graph_counts

pytestmark = [pytest.mark.slow, pytest.mark.neo4j]

GUIDEDRAG = PRESETS["guidedrag"]
# What the bulk import and the transactional load must agree on, row for row.
PROBES = (
    "MATCH (c:Chunk) RETURN c.id AS id, c.text AS text, c.position AS pos, "
    "c.document_id AS doc, c.embedding AS embedding ORDER BY id LIMIT 25",
    "MATCH (e:Entity) RETURN e.id AS id, e.name AS name, e.name_key AS key, "
    "e.alias_keys AS ak, e.type AS type ORDER BY id LIMIT 50",
    "MATCH (h:Entity)-[r]->(t:Entity) RETURN h.id AS h, type(r) AS type, r.predicate AS p, "
    "r.source_chunk AS src, t.id AS t ORDER BY h, type, t, p, src LIMIT 200",
    "MATCH (d:Document) RETURN d.id AS id, d.title AS title, d.source AS source, "
    "toString(d.date) AS date ORDER BY id LIMIT 50",
    # Both mark every node they create (what `kb wipe` deletes), and no relation (none joins two
    # nodes they did not create).
    "MATCH (n) WHERE NOT n:__GuidedRAGMigration RETURN n:__GuidedRAGLoaded AS loaded, "
    "count(*) AS n",
    "MATCH ()-[r]->() WHERE r.__GuidedRAGLoaded IS NOT NULL RETURN count(r) AS marked",
)
NOTIFICATION_WORDS = ("notification", "Received notification", "GQLSTATUS", "01N5")


@dataclass
class Seen:
    """What a /proc poller saw while the server started."""

    password_in_args: list[str] = field(default_factory=list)
    admin_runs: int = 0


@dataclass
class OwnServer:
    server: LocalNeo4j
    password: str
    seen: Seen

    def env(self, **extra: str) -> dict[str, str]:
        return {"NEO4J_URI": self.server.uri, "NEO4J_PASSWORD": self.password, **extra}

    def settings(self) -> Settings:
        return Settings(  # type: ignore[call-arg]
            _env_file=None,
            neo4j_uri=self.server.uri,
            neo4j_password=self.password,
            openai_api_key=None,
            openai_base_url=None,
        )


def _poll_cmdlines(stop: threading.Event, password: str, home: Path, seen: Seen) -> None:
    marker = str(home / "run" / ".admin-args-")
    admin_pids: set[str] = set()
    while not stop.is_set():
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if password in cmdline:
                seen.password_in_args.append(cmdline)
            if marker in cmdline:
                admin_pids.add(entry.name)
        seen.admin_runs = len(admin_pids)
        time.sleep(0.01)


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OwnServer]:
    password = "pw-" + secrets.token_hex(12)
    home = tmp_path_factory.mktemp("own-neo4j")
    server = LocalNeo4j(
        home,
        version=os.environ.get("GUIDEDRAG_TEST_NEO4J_VERSION", DEFAULT_NEO4J_VERSION),
        cache_dir=cache_dir(),
        bolt_port=free_port(),
        http_port=free_port(),
        password=password,
        heap="768m",
        pagecache="256m",
    )
    seen = Seen()
    stop = threading.Event()
    poller = threading.Thread(target=_poll_cmdlines, args=(stop, password, home, seen))
    poller.start()
    try:
        server.start()
    finally:
        stop.set()
        poller.join()
    try:
        yield OwnServer(server, password, seen)
    finally:
        server.stop()


def _no_notifications(stderr: str) -> None:
    for word in NOTIFICATION_WORDS:
        assert word.lower() not in stderr.lower(), stderr


def test_initial_password_never_on_a_command_line(own: OwnServer) -> None:
    # The admin command ran (the poller saw its argument file on a command line) ...
    assert own.seen.admin_runs >= 1
    # ... but no process ever showed the password, and the argument file is gone.
    assert own.seen.password_in_args == []
    assert not list((own.server.home / "run").glob(".admin-args-*"))
    # And the password it set is the one that works.
    driver = connect(own.settings())
    driver.close()


def test_fresh_migrate_prints_no_notifications(own: OwnServer, tmp_path: Path) -> None:
    result = run_cli(["migrate"], own.env(), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "applied V0001" in result.stdout
    _no_notifications(result.stderr)
    assert result.stderr.strip() == ""


def test_first_load_and_ask_print_no_notifications(own: OwnServer, tmp_path: Path) -> None:
    load = run_cli(
        ["load", str(sample_kb_dir()), "--no-progress"], own.env(), cwd=tmp_path, timeout=900
    )
    assert load.returncode == 0, load.stderr
    assert "loaded" in load.stdout
    _no_notifications(load.stderr)
    question = next(q for q in read_bundle(sample_kb_dir()).questions if q.semantics.entities)
    for args in (
        ["ask", question.question, "--entity", question.semantics.entities[0]],
        ["ask", question.question, "--select", "entity('No Such Entity Anywhere')"],
        ["retrieve", question.question, "--auto-semantics"],
    ):
        result = run_cli(args, own.env(), cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        _no_notifications(result.stderr)


def test_status_honours_the_port_settings(own: OwnServer, tmp_path: Path) -> None:
    server = own.server
    home = ["neo4j", "status", "--home", str(server.home)]
    ports = {
        "GUIDEDRAG_NEO4J_BOLT_PORT": str(server.bolt_port),
        "GUIDEDRAG_NEO4J_HTTP_PORT": str(server.http_port),
    }
    right = run_cli(home, own.env(**ports), cwd=tmp_path)
    assert right.returncode == 0, right.stderr
    assert f"bolt bolt://127.0.0.1:{server.bolt_port}" in right.stdout
    assert "note:" not in right.stdout

    other = free_port()
    wrong = run_cli(home, own.env(GUIDEDRAG_NEO4J_BOLT_PORT=str(other)), cwd=tmp_path)
    assert wrong.returncode == 0
    assert f"the settings say bolt port {other} but this server listens on " in wrong.stdout
    assert f"GUIDEDRAG_NEO4J_BOLT_PORT={server.bolt_port}" in wrong.stdout

    # No server in that home, but one listens on the configured port: say so.
    elsewhere = run_cli(
        ["neo4j", "status", "--home", str(tmp_path / "none")],
        {"GUIDEDRAG_NEO4J_BOLT_PORT": str(server.bolt_port)},
        cwd=tmp_path,
    )
    assert elsewhere.returncode == 1
    assert f"something else listens on bolt port {server.bolt_port}" in elsewhere.stdout


def test_clients_survive_a_restart_with_no_wrong_answer(own: OwnServer) -> None:
    """Short form of scripts/reliability_clients.py (the long form prints the figures)."""
    from scripts.reliability_clients import run_clients

    questions = [q for q in read_bundle(sample_kb_dir()).questions if q.semantics.entities]
    figures = run_clients(
        own.server, own.settings(), questions, clients=4, before_s=4.0, after_s=4.0
    )
    assert figures["recovered"], figures
    assert figures["wrong_results_total"] == 0, figures
    assert figures["before"]["queries"] > 0 and figures["after"]["queries"] > 0, figures
    assert figures["before"]["errors"] == {} and figures["after"]["errors"] == {}, figures


def test_a_call_caught_by_the_outage_is_the_outages_error() -> None:
    """A call begun before the stop that spends its budget waiting through a slow restart fails
    just after the first success: counted in the outage, not as an error of the restarted
    server (seen once in CI under load 1.7). A failure that begins after recovery still counts."""
    from scripts.reliability_clients import Call, _window

    t_stop, recovered, t_end = 10.0, 40.0, 50.0
    calls = [
        Call(1.0, 2.0, True),
        Call(9.5, 40.5, False, "QueryTimeoutError"),  # began before the stop, ended after
        Call(39.0, 40.0, True),
        Call(41.0, 41.1, True),
    ]
    assert _window(calls, 0.0, t_stop)["errors"] == {}
    assert _window(calls, t_stop, recovered, outage=True)["errors"] == {"QueryTimeoutError": 1}
    assert _window(calls, recovered, t_end)["errors"] == {}
    assert _window(calls, recovered, t_end)["queries"] == 2

    calls.append(Call(42.0, 42.5, False, "QueryTimeoutError"))
    assert _window(calls, recovered, t_end)["errors"] == {"QueryTimeoutError": 1}


def test_hub_expansions_are_bounded_and_report_truncation(own: OwnServer) -> None:
    from scripts.reliability_clients import run_hubs

    figures = run_hubs(own.server, own.settings(), hubs=1, small_cap=20)
    runs = figures["runs"]
    assert len(runs) == 4 and all(not r["error"] for r in runs), runs
    full = [r for r in runs if r["hop_cap"] != 20]
    capped = [r for r in runs if r["hop_cap"] == 20]
    assert all(r["chunks"] > 0 for r in runs)
    # A cap far below the hub's neighbourhood truncates, and says so.
    assert all(r["truncated"] for r in capped), capped
    assert all(c["chunks"] <= f["chunks"] for c, f in zip(capped, full, strict=True))
    # Bounded: no expansion of the sample KB's biggest hub takes minutes.
    assert all(r["seconds"] < 120 for r in runs), runs


def test_the_managed_server_caps_transaction_memory_per_query_and_in_total(
    own: OwnServer,
) -> None:
    """Both caps are live on the server we start: one runaway query, and many heavy ones at
    once, fail with a memory error before the heap is spent (docs/security.md); and a
    transaction without a timeout of its own ends at our client's deadline, 30 s + 1 s."""
    driver = connect(own.settings())
    try:
        rows = driver.execute_query(
            "SHOW SETTINGS YIELD name, value WHERE name IN "
            "['db.memory.transaction.max', 'dbms.memory.transaction.total.max', "
            "'db.transaction.timeout'] "
            "RETURN name, value"
        ).records
    finally:
        driver.close()
    values = {r["name"]: r["value"] for r in rows}
    assert values.pop("db.transaction.timeout", None) in ("31s", "31000ms"), values
    assert values == {
        "db.memory.transaction.max": "192.00MiB",
        "dbms.memory.transaction.total.max": "384.00MiB",
    } or values == {
        "db.memory.transaction.max": "201326592",
        "dbms.memory.transaction.total.max": "402653184",
    }, values


def _wait_until_stopped(pid: int, within_s: float = 10.0) -> None:
    """SIGSTOP is delivered asynchronously: every thread of the JVM is in state T before the
    test's read goes out (a read sent sooner may still be answered, and nothing times out)."""
    until = time.monotonic() + within_s
    while time.monotonic() < until:
        states = []
        for stat in Path(f"/proc/{pid}/task").glob("*/stat"):
            with contextlib.suppress(OSError):
                states.append(stat.read_text().rsplit(")", 1)[1].split()[0])
        if states and all(state in ("T", "t") for state in states):
            return
        time.sleep(0.01)
    raise AssertionError(f"the server (pid {pid}) did not stop within {within_s:g} s")


def test_a_server_that_does_not_answer_is_a_timeout_at_the_deadline(own: OwnServer) -> None:
    """A frozen server (SIGSTOP: what a long GC pause or an oversubscribed host looks like to
    a client) cannot end the transaction at its timeout; the read still returns at the timeout
    plus the grace, as a QueryTimeoutError, and the same driver works once the server is back."""
    from guidedrag_graph.db.connection import read_query
    from guidedrag_graph.db.deadline import GRACE_S
    from guidedrag_graph.errors import QueryTimeoutError

    driver = connect(own.settings())
    pid = own.server.status().pid
    assert pid is not None
    try:
        assert read_query(driver, "RETURN 1 AS x", database="neo4j") == [{"x": 1}]
        os.killpg(pid, signal.SIGSTOP)
        try:
            _wait_until_stopped(pid)  # a read sent before every thread stops is answered
            t0 = time.monotonic()
            with pytest.raises(QueryTimeoutError, match="had not ended the query") as caught:
                read_query(driver, "RETURN 1 AS x", database="neo4j", timeout=1.0)
            took = time.monotonic() - t0
        finally:
            os.killpg(pid, signal.SIGCONT)
        assert 1.0 + GRACE_S - 0.05 <= took < 1.0 + GRACE_S + 1.0, took
        assert len(str(caught.value).splitlines()) == 1
        assert own.server.uri in str(caught.value)
        assert read_query(driver, "RETURN 2 AS x", database="neo4j", timeout=10) == [{"x": 2}]
    finally:
        driver.close()


@dataclass(frozen=True)
class Graph:
    """What the bulk import must reproduce of the transactional load."""

    counts: dict[str, int]
    probes: list[list[dict[str, object]]]  # PROBES' rows, in order
    rankings: list[list[str]]  # chunk ids per (vector, path)


def _graph(driver: Driver, settings: Settings) -> Graph:
    """What the bulk import must reproduce, read from the sample KB as the transactional loader
    left it on this server: counts, the probes' rows, and rankings (exact ranking and the vector
    index) for a few questions and one random vector."""
    bundle = sample_bundle()
    ids = tuple(c.id for c in bundle.chunks[::3])
    rng = np.random.default_rng(5)
    rankings = []
    for q in [*list(bundle.embeddings.values())[:5], rng.normal(size=384)]:
        for path, selection in (("exact", ChunkIdSelection(ids)), ("index", None)):
            ranked = Retriever(GraphContext.open(settings, driver, GUIDEDRAG)).rank(
                q, selection, k=5, path=path if selection else None
            )
            rankings.append([c.id for c in ranked.chunks])
    return Graph(
        counts=graph_counts(driver, settings, GUIDEDRAG),
        probes=[[dict(r) for r in driver.execute_query(p).records] for p in PROBES],
        rankings=rankings,
    )


def test_bulk_import_equals_transactional_load(own: OwnServer) -> None:
    """``load --bulk`` (offline neo4j-admin import) gives the graph the transactional loader
    gives. The reference is the sample KB as this module's server holds it after
    ``test_first_load_and_ask_print_no_notifications`` (the CLI's transactional ``load``; loaded
    here with ``load_bundle`` when that test did not run first): read, then the database is
    emptied and the import stops the server, replaces its database and starts it again. (The
    reference used to come from ``sample_db`` on the session's server: one more sample load,
    and on a second xdist worker that server's start, for a graph this server already held.)"""
    server = own.server
    bulk_settings = own.settings()
    bundle = sample_bundle()
    driver = connect(bulk_settings)
    try:
        if not _sample_is_loaded(driver, bundle):
            wipe(driver)
            load_bundle(driver, bulk_settings, GUIDEDRAG, bundle, migrate=True)
        expected = _graph(driver, bulk_settings)
        wipe(driver)  # --bulk refuses a database that holds data
    finally:
        driver.close()
    assert server.status().running  # so bulk_load stops it itself
    report = bulk_load(bulk_settings, GUIDEDRAG, sample_kb_dir(), server=server)
    assert report.timings["import"] > 0 and "V0005" in " ".join(report.migrations_applied)
    with GraphDatabase.driver(server.uri, auth=("neo4j", own.password)) as bulk:
        got = _graph(bulk, bulk_settings)
    assert got.counts == expected.counts
    for probe, rows, want in zip(PROBES, got.probes, expected.probes, strict=True):
        assert rows == want, probe
    # Same retrieval results: exact ranking and the vector index, for every vector.
    assert got.rankings == expected.rankings
    # A second --bulk onto a database with data is refused before anything is stopped (a
    # stopped server's: tests/test_kb_bulk_target.py).
    with pytest.raises(ConfigurationError, match="holds data"):
        bulk_load(bulk_settings, GUIDEDRAG, sample_kb_dir(), server=server)
    assert server.status().running


def test_server_killed_mid_command_is_one_line(own: OwnServer, tmp_path: Path) -> None:
    """Runs last: the server does not come back."""
    import subprocess
    import sys

    from tests.cli_run import clean_env

    settings = own.settings()
    driver = connect(settings)
    try:
        wipe(driver)  # so the load below has real work to do when the server dies
    finally:
        driver.close()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "guidedrag_graph.cli",
            "load",
            str(sample_kb_dir()),
            "--no-progress",
        ],
        env=clean_env(own.env()),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    driver = connect(settings)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            count = driver.execute_query("MATCH (c:Chunk) RETURN count(c) AS n").records[0]["n"]
            if count > 0:
                break
            time.sleep(0.05)
    finally:
        driver.close()
    assert proc.poll() is None, "the load finished before the server could be killed"
    pid = own.server.status().pid
    assert pid is not None
    os.killpg(pid, signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=300)
    result = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    line = error_line(result)
    assert "rerun" in line, line
    assert own.server.uri in line or "Neo4j" in line, line
