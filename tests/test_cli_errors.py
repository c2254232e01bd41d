"""Every CLI failure users met ends in one ``error:`` line (exit 2) that names the fix.

Each case runs the real command in a subprocess (``tests/cli_run.py``); the database cases talk
to the session's real Neo4j.
"""

from __future__ import annotations

import logging
import re
import time
from pathlib import Path

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from tests.cli_run import error_line, run_cli
from tests.conftest import free_port

# --- settings: pydantic validation errors become one line naming the variable -------------


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("GUIDEDRAG_TOP_K", "-3", "GUIDEDRAG_TOP_K=-3 is invalid: must be ≥ 1"),
        ("GUIDEDRAG_HOP_CAP", "abc", "GUIDEDRAG_HOP_CAP=abc is invalid: must be a whole number"),
        ("GUIDEDRAG_SIMILARITY_THRESHOLD", "nan", "GUIDEDRAG_SIMILARITY_THRESHOLD=nan"),
        ("GUIDEDRAG_SCHEMA_PRESET", "x", "GUIDEDRAG_SCHEMA_PRESET=x"),
    ],
)
def test_bad_setting_is_one_line(tmp_path: Path, variable: str, value: str, expected: str) -> None:
    result = run_cli(["select", "all()"], {variable: value}, cwd=tmp_path)
    line = error_line(result)
    assert expected in line
    assert "is invalid" in line and ".env" in line


def test_bad_setting_in_dotenv_is_one_line_too(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("GUIDEDRAG_TOP_K=0\n")
    line = error_line(run_cli(["config"], cwd=tmp_path))
    assert "GUIDEDRAG_TOP_K=0 is invalid: must be ≥ 1" in line


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    result = run_cli(
        ["select", "all()"], {"GUIDEDRAG_TOP_K": "-3", "GUIDEDRAG_DEBUG": "1"}, cwd=tmp_path
    )
    assert result.returncode == 2
    assert "Traceback" in result.stderr and "ValidationError" in result.stderr
    assert "error: GUIDEDRAG_TOP_K=-3 is invalid" in result.stderr


# --- the connection: scheme, userinfo, unreachable, wrong password, unknown database ----------


def test_http_uri_says_use_bolt(tmp_path: Path) -> None:
    line = error_line(
        run_cli(["select", "all()"], {"NEO4J_URI": "http://127.0.0.1:7474"}, cwd=tmp_path)
    )
    assert "NEO4J_URI=http://127.0.0.1:7474" in line
    assert "use bolt:// or neo4j://" in line


def test_credentials_in_uri_are_never_echoed(tmp_path: Path) -> None:
    for uri in (
        "bolt://neo4j:pw-in-the-uri@127.0.0.1:1",
        "neo4j://neo4j:pw-in-the-uri@127.0.0.1:1",
        "http://neo4j:pw-in-the-uri@127.0.0.1:1",
    ):
        result = run_cli(["select", "all()"], {"NEO4J_URI": uri}, cwd=tmp_path)
        line = error_line(result)
        assert "pw-in-the-uri" not in result.stderr + result.stdout
        assert "****@127.0.0.1:1" in line


def test_unreachable_server_says_where_it_tried(tmp_path: Path) -> None:
    port = free_port()
    line = error_line(
        run_cli(["select", "all()"], {"NEO4J_URI": f"bolt://127.0.0.1:{port}"}, cwd=tmp_path)
    )
    assert f"cannot reach Neo4j at bolt://127.0.0.1:{port}" in line
    assert "guidedrag neo4j start" in line


def test_retrieve_against_a_closed_port_exits_2_without_retrying(tmp_path: Path) -> None:
    """The driver's managed retries (30 s) must not stand between a stopped server and the
    one-line error: the whole command, interpreter start included, ends well inside 30 s."""
    port = free_port()
    started = time.monotonic()
    result = run_cli(
        ["retrieve", "Which countries use the euro?"],
        {"NEO4J_URI": f"bolt://127.0.0.1:{port}"},
        cwd=tmp_path,
    )
    elapsed = time.monotonic() - started
    assert result.returncode == 2
    assert f"cannot reach Neo4j at bolt://127.0.0.1:{port}" in error_line(result)
    assert elapsed < 15.0, f"{elapsed:.1f} s: the connection check retried a refused port"


def test_wrong_password(tmp_path: Path, settings: Settings) -> None:
    env = {"NEO4J_URI": settings.neo4j_uri, "NEO4J_PASSWORD": "not-the-password"}
    line = error_line(run_cli(["select", "all()"], env, cwd=tmp_path))
    assert f"Neo4j at {settings.neo4j_uri} refused user 'neo4j'" in line
    assert "NEO4J_PASSWORD" in line and "not-the-password" not in line


def test_default_password_warns_once(tmp_path: Path, settings: Settings) -> None:
    # NEO4J_PASSWORD unset: the public default is tried (and refused by the test server).
    result = run_cli(["select", "all()"], {"NEO4J_URI": settings.neo4j_uri}, cwd=tmp_path)
    error_line(result)
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1, result.stderr
    assert "NEO4J_PASSWORD is the public default" in warnings[0]
    quiet = run_cli(["select", "all()"], _env(settings, NEO4J_DATABASE="nope"), cwd=tmp_path)
    assert "warning:" not in quiet.stderr


def _env(settings: Settings, **extra: str) -> dict[str, str]:
    return {
        "NEO4J_URI": settings.neo4j_uri,
        "NEO4J_PASSWORD": settings.neo4j_password.get_secret_value(),
        **extra,
    }


def test_unknown_database_lists_the_real_ones(tmp_path: Path, settings: Settings) -> None:
    line = error_line(
        run_cli(["select", "all()"], _env(settings, NEO4J_DATABASE="nope"), cwd=tmp_path)
    )
    assert f"database 'nope' does not exist on {settings.neo4j_uri}" in line
    assert re.search(r"SHOW DATABASES lists [^:]*\bneo4j\b", line), line
    assert "NEO4J_DATABASE" in line


def test_missing_vector_index_says_migrate(
    tmp_path: Path, settings: Settings, sample_db: Driver
) -> None:
    env = _env(settings, GUIDEDRAG_VECTOR_INDEX_NAME="no_such_index")
    line = error_line(
        run_cli(["retrieve", "Who founded Rome?", "--path", "index"], env, cwd=tmp_path)
    )
    assert "no_such_index" in line
    assert "guidedrag migrate" in line


# --- arguments: k, threshold, policy encoding, bytes that are not UTF-8 -----------------------


@pytest.mark.parametrize("k", ["-3", "0"])
def test_k_below_one_is_rejected(tmp_path: Path, k: str) -> None:
    # No server is configured: the check comes before any connection, and 0 never means 5.
    line = error_line(run_cli(["retrieve", "Who?", "-k", k], cwd=tmp_path))
    assert f"must be ≥ 1 (got {k})" in line and "-k" in line


def test_threshold_nan_is_rejected(tmp_path: Path) -> None:
    line = error_line(run_cli(["retrieve", "Who?", "--threshold", "nan"], cwd=tmp_path))
    assert "--threshold" in line and "finite number from -1 to 1" in line


def test_policy_file_not_utf8(tmp_path: Path) -> None:
    policy = tmp_path / "policy.json"
    policy.write_bytes(b'[{"ranker": "mmr\xff"}]')
    line = error_line(run_cli(["retrieve", "Who?", "--policy", str(policy)], cwd=tmp_path))
    assert str(policy) in line and "not valid UTF-8" in line and "0xff" in line


def test_argument_that_is_not_utf8(tmp_path: Path) -> None:
    # What `guidedrag select $'entity(\'\xff\')'` passes: a byte that is not UTF-8.
    line = error_line(run_cli(["select", b"entity('\xff')"], cwd=tmp_path))
    assert "argument 2 is not valid UTF-8 (byte 0xff" in line
    assert "UTF-8 locale" in line


def test_unknown_command_is_one_line(tmp_path: Path) -> None:
    line = error_line(run_cli(["nosuchcommand"], cwd=tmp_path))
    assert "nosuchcommand" in line and "guidedrag --help" in line


# --- notifications: off in every driver the package creates -----------------------------------


def test_new_driver_turns_server_notifications_off(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    from neo4j import GraphDatabase

    from guidedrag_graph.db.connection import new_driver

    auth = (settings.neo4j_username, settings.neo4j_password.get_secret_value())
    query = "MATCH (n:NoSuchLabelAnywhere) RETURN n"  # the server warns: unknown label
    with caplog.at_level(logging.INFO, logger="neo4j"):
        with GraphDatabase.driver(settings.neo4j_uri, auth=auth) as plain:
            before = plain.execute_query(query).summary
        # What users saw before: the server's notification (logged by the driver too, unless
        # an in-process CLI run on this xdist worker quieted its loggers: judged on the summary).
        assert [status for status in before.gql_status_objects if status.is_notification]
        caplog.clear()
        with new_driver(settings.neo4j_uri, auth) as ours:
            summary = ours.execute_query(query).summary
        assert "notification" not in caplog.text.lower()
    assert not [status for status in summary.gql_status_objects if status.is_notification]


def test_start_with_the_default_password_warns(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        port = sock.getsockname()[1]
        args = ["neo4j", "start", "--home", str(tmp_path / "home")]
        args += ["--bolt-port", str(port), "--http-port", str(free_port())]
        # The bolt port stays taken for both runs: nothing starts.
        result = run_cli(args, cwd=tmp_path)
        chosen = run_cli(args, {"NEO4J_PASSWORD": "my-own-password"}, cwd=tmp_path)
    line = error_line(result)
    assert f"port {port} on 127.0.0.1 is already in use" in line
    assert "warning: NEO4J_PASSWORD is the public default 'guidedrag-local'" in result.stderr
    assert f"port {port} on 127.0.0.1 is already in use" in error_line(chosen)
    assert "warning:" not in chosen.stderr
