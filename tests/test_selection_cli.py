"""``guidedrag select`` and ``guidedrag cypher`` against a real Neo4j holding the Roman graph."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from click.testing import CliRunner
from neo4j import Driver

from guidedrag_graph.cli import cli
from guidedrag_graph.config import Settings
from guidedrag_graph.errors import SelectionSyntaxError
from guidedrag_graph.migration.run import migrate
from guidedrag_graph.schema.presets import PRESETS
from guidedrag_graph.testing.examples import roman_graph
from guidedrag_graph.testing.memory_graph import load_graph
from tests.conftest import wipe


@pytest.fixture(scope="module")
def roman_db(driver: Driver, main_settings: Settings) -> Iterator[Driver]:
    wipe(driver)
    migrate(driver, main_settings, PRESETS["guidedrag"])
    load_graph(roman_graph(), driver, PRESETS["guidedrag"])
    yield driver
    wipe(driver)


@pytest.fixture
def runner(
    roman_db: Driver, settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> CliRunner:
    monkeypatch.chdir(str(tmp_path))  # no .env from the checkout
    monkeypatch.setenv("NEO4J_URI", settings.neo4j_uri)
    monkeypatch.setenv("NEO4J_PASSWORD", settings.neo4j_password.get_secret_value())
    monkeypatch.setenv("NEO4J_DATABASE", settings.neo4j_database)
    monkeypatch.setenv("GUIDEDRAG_SCHEMA_PRESET", "guidedrag")
    return CliRunner()


def test_select_prints_the_size_tree_and_ids(runner: CliRunner) -> None:
    result = runner.invoke(
        cli, ["select", "entity('Julius Caesar') & hop('Julius Caesar', ['FOUGHT_IN'])"]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert re.match(r"\s+1  entity\('Julius Caesar'\) & hop", lines[1])
    assert re.match(r"\s+2    entity\('Julius Caesar'\)$", lines[2])
    assert re.match(r"\s+2    hop\('Julius Caesar', \['FOUGHT_IN'\]\)$", lines[3])
    assert lines[-1] == "chunks (1): c2"


def test_select_json_and_empty_explanation(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["select", "entity('Paris') & entity('Rome')", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["size"] == 0 and data["chunk_ids"] == []
    assert data["empty"]["kind"] == "empty_intersection"
    assert [c["size"] for c in data["tree"]["children"]] == [1, 2]
    result = runner.invoke(cli, ["select", "entity('Rme')", "--json"])
    data = json.loads(result.output)
    assert data["empty"]["kind"] == "unknown_entity"
    assert "Rome" in data["empty"]["suggestions"]


def test_cypher_prints_a_browser_script_that_runs(runner: CliRunner, roman_db: Driver) -> None:
    result = runner.invoke(cli, ["cypher", "entity('Rome') | hop('Gaul', ['FOUGHT_IN'])"])
    assert result.exit_code == 0, result.output
    params = {}
    body = []
    for line in result.output.splitlines():
        match = re.match(r"^:param (\w+) => (.*);$", line)
        if match:
            params[match.group(1)] = roman_db.execute_query(
                f"RETURN {match.group(2)} AS v"
            ).records[0]["v"]
        else:
            body.append(line)
    assert params["sel_0_ids"] == ["rome"]
    records = roman_db.execute_query("\n".join(body).rstrip(";"), params).records
    assert sorted(r["chunk_id"] for r in records) == ["c1", "c2", "c5"]


def test_syntax_error_points_at_the_problem(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["select", "entity('Rome') & & entity('Gaul')"])
    assert isinstance(result.exception, SelectionSyntaxError)  # main() prints it as one error
    assert "line 1, column 18" in str(result.exception)
    assert str(result.exception).rstrip().endswith("^")
