"""``load --bulk`` replaces the managed server's database: it must be the server ``NEO4J_URI``
names, or the emptiness check, the migrations and the counts go to one server while the import
overwrites another's data unlooked at (found in use: ``NEO4J_URI`` at a dev server, the default
managed server stopped, and the import went into the latter, reported as loaded)."""

from __future__ import annotations

from pathlib import Path

import pytest

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
