"""``guidedrag neo4j start --home DIR`` serves the rank plugin from DIR (issue 21), or says
plainly that it is absent and how to add it; ``neo4j status --json``. No server is started: the
bolt port is held, so ``start`` stops at its port check, after the plugin step."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli_run import error_line, run_cli
from tests.conftest import cache_dir, free_port


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        yield int(sock.getsockname()[1])


def _start(home: Path, port: int, env: dict[str, str], cwd: Path) -> str:
    args = ["neo4j", "start", "--home", str(home), "--bolt-port", str(port)]
    result = run_cli([*args, "--http-port", str(free_port())], env, cwd=cwd)
    assert f"port {port} on 127.0.0.1 is already in use" in error_line(result)
    return result.stderr


def test_start_with_a_home_puts_the_rank_plugin_there(tmp_path: Path, taken_port: int) -> None:
    home = tmp_path / "elsewhere"
    env = {"NEO4J_PASSWORD": "pw-of-mine", "GUIDEDRAG_NEO4J_CACHE_DIR": str(cache_dir())}
    stderr = _start(home, taken_port, env, tmp_path)
    assert "rank plugin" not in stderr, stderr
    assert (home / "plugins" / "guidedrag-rank.jar").is_file()
    manifest = json.loads((home / "plugins" / "guidedrag-plugins.json").read_text())
    assert "guidedrag-rank.jar" in manifest


def test_start_says_plainly_when_the_plugin_cannot_be_added(
    tmp_path: Path, taken_port: int
) -> None:
    home = tmp_path / "bare"
    env = {
        "NEO4J_PASSWORD": "pw-of-mine",
        "GUIDEDRAG_NEO4J_CACHE_DIR": str(tmp_path / "empty-cache"),  # no jar built yet
        "PATH": str(tmp_path / "no-bin"),  # and no Maven to build one
    }
    stderr = _start(home, taken_port, env, tmp_path)
    warning = next(line for line in stderr.splitlines() if "rank plugin" in line)
    assert warning.startswith("warning: no rank plugin in ") and "pure Cypher" in warning
    assert f"guidedrag neo4j install --home {home}" in warning
    assert not (home / "plugins" / "guidedrag-rank.jar").exists()


def test_status_json(tmp_path: Path) -> None:
    home = tmp_path / "never-started"
    env = {"PATH": os.environ.get("PATH", "")}
    result = run_cli(["neo4j", "status", "--home", str(home), "--json"], env, cwd=tmp_path)
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert data["running"] is False and data["home"] == str(home)
    assert data["rank_plugin"] is None and data["pid"] is None
