"""The README's main job: ``guidedrag demo`` on the sample KB, and GuidedRAG on it (no LLM)."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner
from neo4j import Driver

from guidedrag_graph.cli import cli
from guidedrag_graph.config import Settings
from guidedrag_graph.kb import read_questions, sample_kb_dir
from guidedrag_graph.pipeline import GuidedRAG, default_selection

pytestmark = pytest.mark.neo4j


@pytest.mark.slow
def test_demo_shows_base_rag_next_to_guidedrag(
    sample_db: Driver, settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    monkeypatch.chdir(str(tmp_path))
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    env = {
        "NEO4J_URI": settings.neo4j_uri,
        "NEO4J_PASSWORD": settings.neo4j_password.get_secret_value(),
        "NEO4J_DATABASE": settings.neo4j_database,
    }
    result = CliRunner().invoke(cli, ["demo", "-n", "2", "-k", "5", "--limit", "5"], env=env)
    assert result.exit_code == 0, result.output
    out = result.output
    assert out.count("-- base RAG (all chunks): gold chunk ") == 2
    assert out.count("-- GuidedRAG default (auto: graded graph tiers over every chunk): gold") == 2
    assert out.count("-- GuidedRAG, paper mapping, hard: gold chunk ") == 2
    assert "selection: all() — every chunk (base RAG)" in out
    assert re.search(r"selection: entity\('[^']+'\).*\(\d+ chunks\)", out)
    assert re.search(r"selection: boost\((near|hop|khop|entity)\('[^']+'", out)
    assert "tiers (chunks): " in out
    tally = re.search(
        r"over all (\d+) answerable questions of sample_kb, gold chunk in the top 5: "
        r"GuidedRAG default (\d+)/\1 vs base RAG (\d+)/\1 \(paper mapping, hard: (\d+)/\1\)",
        out,
    )
    assert tally, out[-600:]
    assert int(tally.group(1)) == 5
    assert int(tally.group(2)) <= 5 and int(tally.group(3)) <= 5


def test_guided_selection_on_sample_kb_is_small_and_abstains_on_removed_entity(
    sample_db: Driver, settings: Settings
) -> None:
    """Semantics shrink the search space from the whole KB to a handful of chunks."""
    questions = [q for q in read_questions(sample_kb_dir()) if q.answerable][:3]
    with GuidedRAG(settings, driver=sample_db) as rag:
        total = rag.retrieve(questions[0].question, "all()", k=1)
        assert total.selection_size is None and len(total.chunks) == 1
        for q in questions:
            result = rag.retrieve(q.question, default_selection(q.semantics), semantics=q.semantics)
            assert result.selection_size is not None and 1 <= result.selection_size <= 60
            assert all(c.in_selection for c in result.chunks)
            assert len(result.chunks) == min(5, result.selection_size)
        missing = rag.ask(questions[0].question, "entity('No Such Entity In The Sample')")
        assert missing.abstained and missing.retrieval.empty is not None
        assert missing.retrieval.empty.kind == "unknown_entity"
