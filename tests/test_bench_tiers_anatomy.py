"""``benchmarks/tiers_anatomy.py`` replays the default's one read beside its parts on a real
server: every row timed, the 5.26 variant ranking as the default does, one read per question."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.kb import sample_kb_dir

pytestmark = pytest.mark.slow


def test_anatomy_replays_the_default_read_beside_its_parts(
    sample_db: Driver, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchmarks.tiers_anatomy import main

    monkeypatch.setenv("NEO4J_URI", settings.neo4j_uri)
    monkeypatch.setenv("NEO4J_PASSWORD", settings.neo4j_password.get_secret_value())
    out = tmp_path / "anatomy.json"
    assert main(["--bundle", str(sample_kb_dir()), "--limit", "3", "--passes", "1",
                 "--out", str(out)]) == 0  # fmt: skip
    figures = json.loads(out.read_text())
    rows = figures["rows"]
    assert figures["questions"] == 3 and len(figures["load"]) == 3
    assert rows["VectorRetriever.search (id only)"]["x_vector"] == 1.0
    assert rows["VectorRetriever.search (id only)"]["server_mean_ms"] is None
    replayed = [name for name in rows if name != "VectorRetriever.search (id only)"]
    assert len(replayed) == 5
    base = rows["VectorRetriever.search (id only)"]["wall_p50_ms"]
    for name in rows:  # every question timed once a pass, after the untimed warm-up pass
        assert rows[name]["samples"] == 3, name
        assert rows[name]["wall_p50_ms"] > 0, name
        assert rows[name]["x_vector"] == pytest.approx(rows[name]["wall_p50_ms"] / base, abs=0.02)
    for name in replayed:  # the server's own time, read from each replayed query's summary
        assert rows[name]["server_samples"] == 3, name
        assert isinstance(rows[name]["server_mean_ms"], float), name
