"""The managed local Neo4j: a real round trip, and clear errors for each way a start can fail."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest
from neo4j import GraphDatabase

from guidedrag_graph.config import DEFAULT_NEO4J_VERSION
from guidedrag_graph.errors import Neo4jRuntimeError
from guidedrag_graph.runtime import LocalNeo4j, find_java, install, server_line
from tests.conftest import cache_dir, free_port


def _processes_with(marker: str) -> list[int]:
    """Pids whose command line contains ``marker`` (read from /proc, no external tools)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def _server(home: Path, **overrides: object) -> LocalNeo4j:
    kwargs: dict[str, object] = {
        "version": os.environ.get("GUIDEDRAG_TEST_NEO4J_VERSION", DEFAULT_NEO4J_VERSION),
        "cache_dir": cache_dir(),
        "bolt_port": free_port(),
        "http_port": free_port(),
        "password": "round-trip-pw",
        "heap": "512m",
        "pagecache": "64m",
    }
    kwargs.update(overrides)
    return LocalNeo4j(home, **kwargs)  # type: ignore[arg-type]


@pytest.mark.slow
@pytest.mark.neo4j
def test_start_status_stop_round_trip_leaves_no_process(tmp_path: Path) -> None:
    server = _server(tmp_path / "home")
    assert not server.status().running
    took = server.start()
    marker = f"--home-dir={tmp_path / 'home'}"
    try:  # a failed check must not leave the JVM running past the test
        assert took > 0
        status = server.status()
        assert status.running and status.bolt_port == server.bolt_port
        assert status.version == server.version
        with GraphDatabase.driver(server.uri, auth=("neo4j", "round-trip-pw")) as driver:
            assert driver.execute_query("RETURN 1 AS one").records[0]["one"] == 1
            version = driver.execute_query(
                "CALL dbms.components() YIELD versions RETURN versions[0] AS v"
            ).records[0]["v"]
        assert version == server.version
        assert _processes_with(marker), "the server JVM should be visible while running"
    finally:
        stopped = server.stop()
    assert stopped is True
    assert not server.status().running
    assert _processes_with(marker) == []
    assert server.stop() is False  # stopping twice is harmless


def test_a_relative_home_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server JVM runs in its home, so every path it is given must be absolute: with
    ``--home rel/x`` it read ``rel/x/rel/x/conf`` (none there) and made a new store beside the
    real one (seen once: ``guidedrag neo4j start --home home100k/2026.08.1``)."""
    monkeypatch.chdir(tmp_path)
    server = _server(Path("rel") / "x")
    assert server.home == tmp_path / "rel" / "x"
    assert server.state_file.is_absolute() and server.log_file.is_absolute()


def test_port_in_use_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        port = sock.getsockname()[1]
        server = _server(tmp_path / "home", bolt_port=port)
        with pytest.raises(Neo4jRuntimeError, match=f"port {port} .*already in use"):
            server.start()
    assert not server.status().running


def test_missing_java_names_where_it_looked() -> None:
    with pytest.raises(Neo4jRuntimeError, match=r"no Java 99 found .*GUIDEDRAG_JAVA99_HOME"):
        find_java(99)


def test_versions_map_to_their_java_line() -> None:
    assert server_line("5.26.30").java_major == 17
    assert server_line("2026.08.1").java_major == 25
    with pytest.raises(Neo4jRuntimeError, match="withdrawn"):
        server_line("2026.08.0")
    with pytest.raises(Neo4jRuntimeError, match="unsupported Neo4j version"):
        server_line("4.4.0")


@pytest.mark.slow
def test_failed_download_is_reported_with_its_log(tmp_path: Path) -> None:
    with pytest.raises(Neo4jRuntimeError, match=r"downloading Neo4j 2026\.99\.0 .*install\.log"):
        install("2026.99.0", tmp_path)
    assert not (tmp_path / "2026.99.0" / "lib" / ".complete").exists()


@pytest.mark.slow
@pytest.mark.neo4j
def test_server_that_dies_at_start_points_at_its_log(tmp_path: Path) -> None:
    home = tmp_path / "home"
    # Pretend the password was set before, so the JVM itself is what refuses the heap size.
    (home / "data" / "databases" / "system").mkdir(parents=True)
    # A size the transaction-memory cap can read but the JVM refuses (no fractional -Xmx).
    server = _server(home, heap="0.5g")
    with pytest.raises(Neo4jRuntimeError, match=r"exited with code .*console\.log"):
        server.start()
    assert not server.status().running
    assert "0.5g" in server.log_file.read_text()
    # A heap that is no size at all is refused before any JVM starts, naming the setting.
    with pytest.raises(Neo4jRuntimeError, match="GUIDEDRAG_NEO4J_HEAP"):
        _server(tmp_path / "other", heap="7zz").start()


@pytest.mark.parametrize(
    "arg",
    ["pa ss\"wo'rd", "back\\slash\\", "tab\there", "new\nline", "@not-a-file", "#x", "ünïcødé"],
)
def test_java_argfile_quoting_round_trips(tmp_path: Path, arg: str) -> None:
    """The initial password reaches neo4j-admin through `java @argfile` byte for byte."""
    from guidedrag_graph.runtime.server_env import java_argfile_quote

    version = os.environ.get("GUIDEDRAG_TEST_NEO4J_VERSION", DEFAULT_NEO4J_VERSION)
    java = find_java(server_line(version).java_major)
    source = tmp_path / "Echo.java"
    source.write_text(
        "public class Echo { public static void main(String[] a) throws Exception {"
        ' System.out.write(String.join("\\u0000", a).getBytes("UTF-8"));'
        " System.out.flush(); } }"
    )
    argfile = tmp_path / "args"
    argfile.write_text(
        "\n".join(java_argfile_quote(a) for a in (str(source), arg, "after")) + "\n",
        encoding="utf-8",
    )
    out = subprocess.run(
        [str(java), "-Dfile.encoding=UTF-8", f"@{argfile}"], capture_output=True, check=True
    ).stdout
    assert out.decode("utf-8").split("\0") == [arg, "after"]


def test_compose_ports_follow_the_settings() -> None:
    """docker/compose.yaml publishes the ports the settings (and `neo4j start`) use."""
    import re

    from guidedrag_graph.config import Settings
    from tests.conftest import REPO_ROOT

    text = (REPO_ROOT / "docker" / "compose.yaml").read_text()
    defaults = Settings.model_fields
    for var, field, inner in (
        ("GUIDEDRAG_NEO4J_BOLT_PORT", "neo4j_bolt_port", 7687),
        ("GUIDEDRAG_NEO4J_HTTP_PORT", "neo4j_http_port", 7474),
    ):
        match = re.search(rf'"127\.0\.0\.1:\$\{{{var}:-(\d+)\}}:{inner}"', text)
        assert match, var
        assert int(match.group(1)) == defaults[field].default
    assert '-p "' not in text and "-p '" not in text  # no password on a command line
