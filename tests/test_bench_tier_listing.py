"""``benchmarks/tier_listing.py``: listed, lower-bound, unlisted and default tiers side by side on
a real server, and the sweep's questions (entities spread over the KB's mention counts)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.kb import sample_kb_dir
from tests.test_bench_doors_synthetic import small_synthetic


def test_sweep_questions_spread_over_the_mention_counts(tmp_path: Path) -> None:
    from benchmarks.tier_listing import sweep_questions

    chunks, names, mentions = small_synthetic(tmp_path)
    questions, vectors = sweep_questions(tmp_path, 8)
    assert len(questions) == len(vectors) and len(questions) >= 4
    by_name = {name: e for e, name in names.items()}
    counts = []
    for question, vector in zip(questions, vectors, strict=True):
        (name,) = question.semantics.entities
        entity = by_name[name]
        counts.append(mentions[entity])
        first = next(c for c in chunks if entity in c["entities"])
        assert vector == [float(x) for x in first["embedding"]]
    assert counts == sorted(counts) and len(set(counts)) == len(counts)
    assert counts[0] == min(mentions.values()) and counts[-1] == max(mentions.values())


@pytest.mark.slow
def test_tier_listing_times_every_variant(
    sample_db: Driver, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchmarks.tier_listing import main

    monkeypatch.setenv("NEO4J_URI", settings.neo4j_uri)
    monkeypatch.setenv("NEO4J_PASSWORD", settings.neo4j_password.get_secret_value())
    out = tmp_path / "listing.json"
    assert main(["--bundle", str(sample_kb_dir()), "--limit", "4", "--passes", "1",
                 "--out", str(out)]) == 0  # fmt: skip
    figures = json.loads(out.read_text())
    assert figures["questions"] >= 1 and len(figures["load"]) == 1
    assert set(figures["p50_ms"]) == {"listed", "lower bound only", "unlisted", "default"}
    assert all(ms > 0 for ms in figures["p50_ms"].values())
    # The lower-bound rule alone never changes a top k (tests/test_tier_listing.py says why).
    assert figures["same_top_k_as_listed"]["lower bound only"] == figures["questions"]
    assert sum(row["questions"] for row in figures["crossover"]) == figures["questions"]
