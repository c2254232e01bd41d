"""``guidedrag eval --no-progress`` is quiet, not silent: one line per stage on stderr."""

from __future__ import annotations

from pathlib import Path

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.kb import sample_kb_dir
from tests.cli_run import run_cli

pytestmark = pytest.mark.neo4j


def test_eval_without_progress_bars_prints_each_stage(
    sample_db: Driver, settings: Settings, tmp_path: Path
) -> None:
    env = {
        "NEO4J_URI": settings.neo4j_uri,
        "NEO4J_PASSWORD": settings.neo4j_password.get_secret_value(),
    }
    result = run_cli(
        [
            "eval",
            str(sample_kb_dir()),
            "--approaches",
            "rag,graphrag",
            "--tagger",
            "fulltext",
            "--taggers",
            "fulltext",
            "--limit",
            "2",
            "--no-plots",
            "--no-progress",
            "--out",
            str(tmp_path / "out"),
        ],
        env,
        cwd=tmp_path,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    stages = [line for line in result.stderr.splitlines() if line.startswith("answerable: ")]
    assert stages[0] == "answerable: embedding 2 question texts (cached ones are reused)"
    assert any(line.startswith("answerable: question texts embedded in ") for line in stages)
    assert "answerable: tagging 2 questions with fulltext" in stages
    assert "answerable: retrieving, 2 questions x 2 approaches" in stages
    assert stages[-1] == "answerable: 4 retrievals done"
    assert "%|" not in result.stderr  # no progress bar
