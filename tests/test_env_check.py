"""A misspelt GUIDEDRAG_* variable is a one-line warning naming the close match (issue 21)."""

from __future__ import annotations

from pathlib import Path

import pytest

from guidedrag_graph.env_check import known_variables, unknown_variables
from tests.cli_run import run_cli


@pytest.mark.parametrize(
    ("name", "meant"),
    [
        ("GUIDEDRAG_TOPK", "GUIDEDRAG_TOP_K"),
        ("GUIDEDRAG_NEO4J_URI", "NEO4J_URI"),  # Neo4j's own name, no prefix
        ("GUIDEDRAG_NEO4J_PASSWORD", "NEO4J_PASSWORD"),
        ("GUIDEDRAG_VECTR_INDEX_NAME", "GUIDEDRAG_VECTOR_INDEX_NAME"),
        ("GUIDEDRAG_STEERNG", "GUIDEDRAG_STEERING"),
    ],
)
def test_a_misspelling_names_the_variable_meant(name: str, meant: str) -> None:
    (warning,) = unknown_variables({name: "1"})
    assert warning.startswith(f"{name} is not a guidedrag setting and is ignored")
    assert warning.endswith(f"did you mean {meant}?")


def test_known_and_foreign_variables_pass_silently() -> None:
    environ = {
        "GUIDEDRAG_TOP_K": "3",
        "GUIDEDRAG_NEO4J_CACHE_DIR": "/tmp",
        "GUIDEDRAG_DEBUG": "1",
        "GUIDEDRAG_JAVA17_HOME": "/usr",
        "GUIDEDRAG_TEST_NEO4J_URI": "bolt://x",
        "NEO4J_URI": "bolt://x",
        "OTHER_TOOL_TOPK": "1",
    }
    assert unknown_variables(environ) == []
    assert {"NEO4J_URI", "GUIDEDRAG_TOP_K", "OPENAI_API_KEY"} <= known_variables()


def test_nothing_close_points_at_config() -> None:
    (warning,) = unknown_variables({"GUIDEDRAG_QWXZ": "1"})
    assert warning.endswith("`guidedrag config` lists the variables")


def test_the_cli_warns_once_per_variable_and_still_runs(tmp_path: Path) -> None:
    result = run_cli(["config"], {"GUIDEDRAG_TOPK": "3", "GUIDEDRAG_TOP_K": "4"}, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.strip()]
    assert warnings == [
        "warning: GUIDEDRAG_TOPK is not a guidedrag setting and is ignored; "
        "did you mean GUIDEDRAG_TOP_K?"
    ]
    assert any(line.split()[:2] == ["GUIDEDRAG_TOP_K", "4"] for line in result.stdout.splitlines())
