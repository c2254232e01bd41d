"""The foundation commands as a user types them: migrate, migrate --status, neo4j status."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from neo4j import Driver

from guidedrag_graph.cli import cli
from guidedrag_graph.config import Settings


@pytest.fixture
def cli_env(settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no stray .env from the working directory
    monkeypatch.setenv("NEO4J_URI", settings.neo4j_uri)
    monkeypatch.setenv("NEO4J_PASSWORD", settings.neo4j_password.get_secret_value())


@pytest.mark.usefixtures("cli_env")
def test_migrate_then_status_then_rerun(blank_db: Driver) -> None:
    runner = CliRunner()
    first = runner.invoke(cli, ["migrate"])
    assert first.exit_code == 0, first.output
    assert "applied V0001__constraints.cypher" in first.output
    status = runner.invoke(cli, ["migrate", "--status"])
    assert status.exit_code == 0, status.output
    assert "V0003__chunk_vector_index.cypher" in status.output
    assert "pending" not in status.output
    again = runner.invoke(cli, ["migrate"])
    assert again.exit_code == 0 and "up to date" in again.output


def test_unreachable_neo4j_says_where_it_tried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from guidedrag_graph.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NEO4J_URI", "bolt://127.0.0.1:1")
    monkeypatch.setattr("sys.argv", ["guidedrag", "migrate"])
    with pytest.raises(SystemExit) as exit_info:
        main()
    assert exit_info.value.code == 2


def test_unreachable_neo4j_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from guidedrag_graph.db.connection import connect
    from guidedrag_graph.errors import DatabaseUnavailableError

    settings = Settings(_env_file=None, neo4j_uri="bolt://127.0.0.1:1")  # type: ignore[call-arg]
    started = time.monotonic()
    with pytest.raises(DatabaseUnavailableError, match=r"bolt://127\.0\.0\.1:1.*neo4j start"):
        connect(settings)
    # A refused connection is final: no 30 s of the driver's retries before the one line.
    assert time.monotonic() - started < 2.0


def test_neo4j_status_of_a_home_without_server(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["neo4j", "status", "--home", str(tmp_path / "none")])
    assert result.exit_code == 1
    assert "not running" in result.output
