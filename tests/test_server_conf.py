"""Extra neo4j.conf settings (``LocalNeo4j(extra_conf=...)``, ``guidedrag neo4j start --conf``):
checked before anything starts, written after ours, never replacing ours; and the test servers
run with theirs (``tests/server_conf.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from neo4j import Driver

from guidedrag_graph.cli import main
from guidedrag_graph.config import Settings
from guidedrag_graph.errors import Neo4jRuntimeError
from guidedrag_graph.runtime import LocalNeo4j
from guidedrag_graph.runtime.extra_conf import MAX_EXTRA_CONF
from tests.conftest import cache_dir
from tests.server_conf import TEST_NEO4J_CONF


def _server(home: Path, extra: tuple[str, ...]) -> LocalNeo4j:
    return LocalNeo4j(home, version="2026.08.1", cache_dir=cache_dir(), extra_conf=extra)


def test_extra_settings_are_written_after_ours(tmp_path: Path) -> None:
    server = _server(tmp_path, ("dbms.cypher.min_replan_interval = 1h",))
    lines = (server._write_conf() / "neo4j.conf").read_text().splitlines()
    assert lines[-1] == "dbms.cypher.min_replan_interval=1h"
    assert "server.bolt.listen_address=127.0.0.1:7687" in lines[:-1]


@pytest.mark.parametrize(
    ("pair", "says"),
    [
        ("server.bolt.listen_address=0.0.0.0:7687", "one guidedrag writes itself"),
        ("dbms.security.auth_enabled=false", "one guidedrag writes itself"),
        ("dbms.security.allow_csv_import_from_file_urls=true", "one guidedrag writes itself"),
        # ours once a plugin is installed, which a start may do after this check
        ("dbms.security.procedures.unrestricted=*", "one guidedrag writes itself"),
        ("replan=1h", "not KEY=VALUE with a Neo4j setting name"),
        ("dbms.cypher.min_replan_interval", "not KEY=VALUE with a Neo4j setting name"),
        ("dbms.cypher.min_replan_interval=", "one-line printable value"),
        ("dbms.cypher.min_replan_interval=1h\nserver.bolt.listen_address=0.0.0.0", "one-line"),
        ("dbms.cypher.min_replan_interval=" + "9" * 300, "at most 256 characters"),
    ],
)
def test_a_bad_or_overriding_setting_is_refused_in_one_line(
    tmp_path: Path, pair: str, says: str
) -> None:
    with pytest.raises(Neo4jRuntimeError, match=says) as refused:
        _server(tmp_path, (pair,))
    assert "\n" not in str(refused.value)
    assert not (tmp_path / "conf").exists()  # refused before anything was written


def test_a_setting_given_twice_or_too_many_are_refused(tmp_path: Path) -> None:
    twice = ("dbms.cypher.min_replan_interval=1h", "dbms.cypher.min_replan_interval=2h")
    with pytest.raises(Neo4jRuntimeError, match="given twice"):
        _server(tmp_path, twice)
    many = tuple(f"dbms.cypher.setting_{i}=1" for i in range(MAX_EXTRA_CONF + 1))
    with pytest.raises(Neo4jRuntimeError, match=f"at most {MAX_EXTRA_CONF}"):
        _server(tmp_path, many)


def test_the_cli_refuses_a_setting_of_ours_before_starting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    argv = ["neo4j", "start", "--home", str(home), "--no-rank-plugin"]
    with pytest.raises(SystemExit) as ended:
        main([*argv, "--conf", "server.bolt.listen_address=0.0.0.0:7687"])
    assert ended.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "server.bolt.listen_address" in err and len(err.splitlines()) == 1
    assert not home.exists()


@pytest.mark.parametrize("server", ["driver", "sample_driver"])
def test_the_session_servers_run_with_the_test_settings(
    server: str, request: pytest.FixtureRequest
) -> None:
    """CI's servers (``.ci/run``, through ``--conf``) and a session's own (``conftest``) alike:
    the main one and the sample KB's."""
    driver: Driver = request.getfixturevalue(server)
    wanted = dict(line.split("=", 1) for line in TEST_NEO4J_CONF)
    records = driver.execute_query(
        "SHOW SETTINGS YIELD name, value WHERE name IN $names RETURN name, value",
        names=list(wanted),
    ).records
    found = {r["name"]: r["value"] for r in records}
    assert set(found) == set(wanted)
    assert found["dbms.cypher.min_replan_interval"] in {"1h", "3600s", "PT1H"}
    assert float(found["dbms.cypher.statistics_divergence_threshold"]) == 1.0


def test_a_sample_reader_talks_to_the_sample_server(
    sample_db: Driver, settings: Settings, sample_settings: Settings, main_settings: Settings
) -> None:
    """``settings`` follows ``sample_db`` to the server of its own (conftest)."""
    assert settings.neo4j_uri == sample_settings.neo4j_uri != main_settings.neo4j_uri


def test_other_tests_talk_to_the_main_server(settings: Settings, main_settings: Settings) -> None:
    assert settings.neo4j_uri == main_settings.neo4j_uri
