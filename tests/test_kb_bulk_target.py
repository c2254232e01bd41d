"""``load --bulk`` replaces the managed server's database: it must be the server ``NEO4J_URI``
names, or the emptiness check, the migrations and the counts go to one server while the import
overwrites another's data unlooked at (found in use: ``NEO4J_URI`` at a dev server, the default
managed server stopped, and the import went into the latter, reported as loaded)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urlsplit

import pytest
from neo4j import Driver

from guidedrag_graph.config import DEFAULT_NEO4J_VERSION, Settings
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.kb import sample_kb_dir
from guidedrag_graph.kb.bulk import bulk_load, check_same_server
from guidedrag_graph.runtime import LocalNeo4j
from guidedrag_graph.schema.presets import PRESETS


def _server(home: Path, bolt_port: int) -> LocalNeo4j:
    return LocalNeo4j(
        home,
        version=DEFAULT_NEO4J_VERSION,
        cache_dir=home / "cache",
        bolt_port=bolt_port,
        http_port=bolt_port + 1,
        password="not-used-here",
    )


def _settings(uri: str) -> Settings:
    return Settings(  # type: ignore[call-arg]
        _env_file=None, neo4j_uri=uri, openai_api_key=None, openai_base_url=None
    )


@pytest.mark.parametrize(
    "uri",
    ["bolt://127.0.0.1:7799", "neo4j://localhost:7799", "bolt://[::1]:7799"],
)
def test_a_uri_naming_the_managed_server_is_accepted(tmp_path: Path, uri: str) -> None:
    check_same_server(_settings(uri), _server(tmp_path, 7799))


def test_the_default_port_is_the_managed_servers_when_it_listens_there(tmp_path: Path) -> None:
    check_same_server(_settings("bolt://127.0.0.1"), _server(tmp_path, 7687))
    with pytest.raises(ConfigurationError):
        check_same_server(_settings("bolt://127.0.0.1"), _server(tmp_path, 7799))


@pytest.mark.parametrize(
    "uri",
    ["bolt://127.0.0.1:7711", "bolt://db.example.com:7799", "neo4j+s://user:secret@10.0.0.5:7799"],
)
def test_another_server_is_refused_in_one_line_before_anything_is_touched(
    tmp_path: Path, uri: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    server = _server(home, 7799)
    for step in ("start", "stop", "import_full"):  # a build that gets this far fails at once
        monkeypatch.setattr(server, step, lambda *a, _s=step, **k: pytest.fail(f"{_s} called"))
    with pytest.raises(ConfigurationError) as refused:
        bulk_load(_settings(uri), PRESETS["guidedrag"], sample_kb_dir(), server=server)
    message = str(refused.value)
    assert "\n" not in message and "secret" not in message
    assert "bolt port 7799" in message and "NEO4J_URI=bolt://127.0.0.1:7799" in message
    assert not home.exists()  # no server installed, started, stopped or imported into


def test_a_stopped_servers_database_is_asked_before_anything_is_imported(
    tmp_path: Path, sample_db: Driver, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The import replaces the database whatever it holds, and a stopped server cannot be asked:
    it is started first, then refused for its data. The session's server (holding the sample
    KB) plays the managed one; its process is not stopped or started here (that costs a JVM
    restart, and ``tests/test_cli_server.py`` drives a real managed server through the rest),
    so the stand-in says "stopped" until ``start`` is called, and fails on ``stop`` and
    ``import_full``: the old code, which asked only a running server, went on to import."""
    server = _server(tmp_path / "home", urlsplit(settings.neo4j_uri).port or 7687)
    started: list[bool] = []
    monkeypatch.setattr(server, "status", lambda: SimpleNamespace(running=bool(started)))
    monkeypatch.setattr(server, "start", lambda *a, **k: started.append(True))
    for step in ("stop", "import_full"):
        monkeypatch.setattr(server, step, lambda *a, _s=step, **k: pytest.fail(f"{_s} called"))
    before = sample_db.execute_query("MATCH (n) RETURN count(n) AS n").records[0]["n"]
    with pytest.raises(ConfigurationError, match="holds data"):
        bulk_load(settings, PRESETS["guidedrag"], sample_kb_dir(), server=server)
    assert started == [True]
    assert sample_db.execute_query("MATCH (n) RETURN count(n) AS n").records[0]["n"] == before
