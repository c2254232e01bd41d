"""``benchmarks/gap.py`` splits the default's time over ``VectorRetriever`` into the server's part
and Python's: the split means something only if the queries it replays are the ones each caller
sent, so that is what these tests hold it to, beside the figures' arithmetic."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from neo4j import READ_ACCESS, Driver
from neo4j_graphrag.retrievers import VectorRetriever

from guidedrag_graph.config import Settings
from guidedrag_graph.kb import sample_kb_dir

pytestmark = pytest.mark.slow


def _ids(
    driver: Driver, settings: Settings, recorded: tuple[str, dict[str, object]]
) -> list[object]:
    with driver.session(database=settings.neo4j_database, default_access_mode=READ_ACCESS) as s:
        return [dict(r)["id"] for r in s.run(*recorded)]


def test_the_replayed_queries_are_the_ones_each_caller_sent(
    sample_db: Driver, settings: Settings
) -> None:
    from benchmarks.doors import questions_and_rag
    from benchmarks.gap import recorded_reads, recorded_vector_query

    questions, vectors, rag = questions_and_rag(settings, sample_db, sample_kb_dir(), 3)
    retriever = VectorRetriever(
        sample_db, settings.vector_index_name, return_properties=["id"],
        neo4j_database=settings.neo4j_database,
    )  # fmt: skip
    for question, vector in zip(questions, vectors, strict=True):
        got = rag.retrieve(
            question.question, semantics=question.semantics, query_vector=vector, k=5
        )
        reads = recorded_reads(rag, question, vector, 5)
        assert len(reads) == 1  # a warm call: one read
        assert _ids(sample_db, settings, reads[0]) == [c.id for c in got.chunks]
        recorded = recorded_vector_query(sample_db, retriever, vector, 5)
        searched = retriever.search(query_vector=vector, top_k=5)
        want = [item.metadata["id"] if item.metadata else None for item in searched.items]
        assert _ids(sample_db, settings, recorded) == want
        assert "execute_query" not in vars(sample_db)  # the driver is left as it was


def test_gap_prints_a_split_that_adds_up(
    sample_db: Driver,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    from benchmarks.gap import main

    monkeypatch.setenv("NEO4J_URI", settings.neo4j_uri)
    monkeypatch.setenv("NEO4J_PASSWORD", settings.neo4j_password.get_secret_value())
    monkeypatch.chdir(tmp_path)  # no .env of the machine's
    assert main(["--bundle", str(sample_kb_dir()), "--limit", "2", "--passes", "1"]) == 0
    figures = json.loads(capsys.readouterr().out)
    p50, gap = figures["p50_ms"], figures["gap_ms"]
    assert figures["questions"] == 2 and all(v > 0 for v in p50.values())
    assert gap["whole"] == pytest.approx(p50["default"] - p50["vector"], abs=1e-3)
    assert gap["server"] == pytest.approx(p50["default_query"] - p50["vector_query"], abs=1e-3)
    assert gap["read_path"] == pytest.approx(p50["default_reads"] - p50["default_query"], abs=1e-3)
    assert figures["ratio_default_to_vector"] == round(p50["default"] / p50["vector"], 3)
