"""``benchmarks/doors.py`` runs every door on a real server and writes the results file the
performance docs quote: p50 and ratio to ``VectorRetriever`` for each door, and the load."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.kb import sample_kb_dir

pytestmark = pytest.mark.slow


def _doors(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *extra: str
) -> dict[str, Any]:
    """``doors.py`` on the sample KB's first two questions, one timed pass: its results file."""
    from benchmarks.doors import main

    monkeypatch.setenv("NEO4J_URI", settings.neo4j_uri)
    monkeypatch.setenv("NEO4J_PASSWORD", settings.neo4j_password.get_secret_value())
    out = tmp_path / "doors.json"
    assert main(["--bundle", str(sample_kb_dir()), "--limit", "2", "--passes", "1",
                 "--out", str(out), *extra]) == 0  # fmt: skip
    figures: dict[str, Any] = json.loads(out.read_text())
    return figures


def test_doors_writes_every_door_with_its_ratio(
    sample_db: Driver, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    figures = _doors(settings, tmp_path, monkeypatch)
    required = {"ping", "vector", "default", "question", "guidedretriever"}
    assert required <= set(figures["p50_ms"]) and required <= set(figures["ratio_to_vector"])
    assert figures["ratio_to_vector"]["vector"] == 1.0
    assert all(v > 0 for v in figures["p50_ms"].values())
    assert figures["questions"] == 2 and len(figures["load"]["after_each_pass"]) == 2
    assert set(figures["python_outside_reads_p50_ms"]) == {"default", "question"}


def test_doors_over_several_runs_reports_the_median_of_each_runs_ratio(
    sample_db: Driver, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    figures = _doors(settings, tmp_path, monkeypatch, "--runs", "3")
    runs = figures["runs"]
    assert len(runs) == 3 and len(figures["load"]["after_each_pass"]) == 6
    for run in runs:  # each run's ratio is taken within the run
        assert run["ratio_to_vector"]["default"] == round(
            run["p50_ms"]["default"] / run["p50_ms"]["vector"], 3
        )
    for name, ratio in figures["ratio_to_vector"].items():
        assert ratio == sorted(r["ratio_to_vector"][name] for r in runs)[1], name
    assert figures["p50_ms"]["vector"] == sorted(r["p50_ms"]["vector"] for r in runs)[1]


def test_doors_refuses_zero_runs() -> None:
    from benchmarks.doors import main

    with pytest.raises(SystemExit) as stopped:
        main(["--bundle", str(sample_kb_dir()), "--runs", "0"])
    assert stopped.value.code == 2
