"""``guidedrag retrieve`` / ``ask`` against the real Neo4j (tiny KB) and the local HTTP LLM."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from neo4j import Driver

from guidedrag_graph.cli import cli
from guidedrag_graph.config import Settings
from tests.llm_server import llm_server

pytestmark = pytest.mark.neo4j


@pytest.fixture
def env(settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> dict[str, str]:
    monkeypatch.chdir(str(tmp_path))  # no stray .env
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return {
        "NEO4J_URI": settings.neo4j_uri,
        "NEO4J_PASSWORD": settings.neo4j_password.get_secret_value(),
        "NEO4J_DATABASE": settings.neo4j_database,
    }


def test_retrieve_json(tiny_kb: Driver, env: dict[str, str]) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "retrieve",
            "Where was Ada Lovelace born?",
            "--select",
            "entity('Ada Lovelace')",
            "-k",
            "1",
            "--json",
        ],
        env=env,
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["selection"] == "entity('Ada Lovelace')"
    assert data["selection_size"] == 2
    assert [c["id"] for c in data["chunks"]] == ["ada-1"]
    assert data["path"] in ("exact", "plugin") and "query_vector" not in data["params"]
    assert "ranking" in data["timings"]


def test_ask_without_llm_prints_context_and_prompt(
    tiny_kb: Driver,
    env: dict[str, str],
) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "ask",
            "Who designed the Analytical Engine?",
            "--entity",
            "Babbage",
            "--explain",
            "--steering",
            "hard",
        ],
        env=env,
    )
    assert result.exit_code == 0, result.output
    assert "selection: entity('Babbage')  (3 chunks)" in result.output
    assert "No LLM is set" in result.output
    assert "Context chunks:" in result.output and "[babbage-1]" in result.output
    # --explain shows the ranking Cypher (through the rank plugin when the server has it)
    assert "vector.similarity.cosine" in result.output or "guidedrag.rank(" in result.output


def test_ask_abstains_on_unknown_entity(tiny_kb: Driver, env: dict[str, str]) -> None:
    result = CliRunner().invoke(
        cli, ["ask", "Where was Grace Hopper born?", "--entity", "Grace Hopper"], env=env
    )
    assert result.exit_code == 0, result.output
    assert "abstained" in result.output and "Grace Hopper" in result.output


def test_ask_with_llm_and_auto_semantics(tiny_kb: Driver, env: dict[str, str]) -> None:
    with llm_server() as server:
        result = CliRunner().invoke(
            cli,
            ["ask", "Where was Ada Lovelace born?", "--auto-semantics", "--tagger", "fulltext"],
            env={**env, "OPENAI_BASE_URL": server.base_url},
        )
        assert result.exit_code == 0, result.output
        assert "auto-semantics (fulltext tagger): Ada Lovelace" in result.output
        assert "answer: Deterministic test answer" in result.output
        assert "cites ada-1 -> Ada Lovelace" in result.output
        assert len(server.requests) == 1
        as_json = CliRunner().invoke(
            cli,
            [
                "ask",
                "Where was Ada Lovelace born?",
                "--entity",
                "Ada Lovelace",
                "--json",
                "--steering",
                "hard",
            ],
            env={**env, "OPENAI_BASE_URL": server.base_url},
        )
        assert as_json.exit_code == 0, as_json.output
        data = json.loads(as_json.output)
        assert data["llm_called"] and not data["abstained"]
        assert [c["chunk_id"] for c in data["citations"]] == ["ada-1", "ada-2"]
        assert data["usage"]["total_tokens"] > 0
        assert "[ada-1]" in data["prompt"] and data["retrieval"]["selection_size"] == 2
