"""APOC Core for the managed server: which server lines have one, and a clear refusal otherwise."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from neo4j import Driver

from guidedrag_graph.cli import cli
from guidedrag_graph.errors import Neo4jRuntimeError
from guidedrag_graph.runtime.apoc import apoc_version_for


def test_apoc_exists_for_526_only() -> None:
    assert apoc_version_for("5.26.30") == "5.26.19"
    with pytest.raises(Neo4jRuntimeError, match=r"no APOC Core release .* Neo4j 2026\.08\.1") as e:
        apoc_version_for("2026.08.1")
    assert "--with-apoc" in str(e.value) and "5.26" in str(e.value)


def test_install_with_apoc_refuses_a_calver_server_before_downloading() -> None:
    result = CliRunner().invoke(cli, ["neo4j", "install", "--with-apoc", "--version", "2026.08.1"])
    assert result.exit_code != 0
    assert isinstance(result.exception, Neo4jRuntimeError)
    assert "no APOC Core release on Maven Central matches Neo4j 2026.08.1" in str(result.exception)


@pytest.mark.neo4j
def test_the_apoc_server_runs_the_procedures_the_writers_call(apoc_driver: Driver) -> None:
    names = {
        r["name"]
        for r in apoc_driver.execute_query(
            "SHOW PROCEDURES YIELD name WHERE name STARTS WITH 'apoc.' RETURN name"
        ).records
    }
    # neo4j-graphrag, LangChain and LlamaIndex writers (see docs/existing-kgs.md)
    assert {
        "apoc.merge.relationship",
        "apoc.merge.node",
        "apoc.create.addLabels",
        "apoc.meta.data",
        "apoc.refactor.mergeNodes",
    } <= names
    record = apoc_driver.execute_query("RETURN apoc.map.clean({a: 1, b: null}, [], []) AS m")
    assert record.records[0]["m"] == {"a": 1}
