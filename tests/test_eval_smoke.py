"""Smoke evaluation on the sample KB against the real Neo4j: every approach runs, the report has
its sections, the unanswerable set makes the guided approaches abstain, and the CLI writes its
files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from neo4j import Driver

from guidedrag_graph.cli import cli
from guidedrag_graph.cli.eval_cmd import write_outputs
from guidedrag_graph.config import Settings
from guidedrag_graph.evaluation.approaches import APPROACHES
from guidedrag_graph.evaluation.harness import EvalOptions, clear_kb, run_evaluation
from guidedrag_graph.evaluation.records import EvalRun
from guidedrag_graph.kb import Bundle, load_bundle, read_bundle, sample_kb_dir
from guidedrag_graph.kb import sample_unanswerable_kb_dir as unanswerable_dir
from guidedrag_graph.schema.presets import PRESETS

pytestmark = [pytest.mark.neo4j, pytest.mark.slow]

# The fulltext tagger needs no name embeddings, so the answerable set writes nothing (the copy
# must stay as loaded); the unanswerable set replaces it, and own_sample_db reloads it after us.
OPTIONS = EvalOptions(tagger="fulltext", accuracy_taggers=("fulltext", "llm"), limit=4)


_RUNS: dict[str, EvalRun] = {}


@pytest.fixture
def smoke_run(own_sample_db: Driver, settings: Settings) -> EvalRun:
    """One evaluation shared by the tests below (run once, on first use)."""
    if "run" not in _RUNS:
        _RUNS["run"] = _evaluate(own_sample_db, settings)
    return _RUNS["run"]


def _evaluate(driver: Driver, settings: Settings) -> EvalRun:
    sample = read_bundle(sample_kb_dir())
    unanswerable = read_bundle(unanswerable_dir())
    prepared: list[str] = []

    def prepare(set_name: str, bundle: Bundle) -> None:
        prepared.append(set_name)
        if set_name == "unanswerable":
            clear_kb(driver, settings)
            load_bundle(driver, settings, PRESETS["guidedrag"], bundle, migrate=True)

    run = run_evaluation(
        settings,
        driver,
        sample,
        unanswerable=unanswerable,
        options=OPTIONS,
        bundle_label="sample_kb",
        prepare=prepare,
        progress=False,
    )
    assert prepared == ["answerable", "unanswerable"]
    return run


def test_every_approach_ran_on_every_question(smoke_run: EvalRun) -> None:
    answerable = [r for r in smoke_run.rows if r.set == "answerable" and r.variant == 0]
    questions = {r.question_id for r in answerable}
    assert len(questions) == smoke_run.meta["questions"] == 4
    for name in OPTIONS.approaches:
        rows = [r for r in answerable if r.approach == name]
        assert {r.question_id for r in rows} == questions, name
        for r in rows:
            assert r.hit_position is not None and 1 <= r.hit_position <= OPTIONS.k + 1
            assert len(r.ranked) <= OPTIONS.k and len(r.cosines) == len(r.ranked)
            assert r.latency_s > 0
    rag = [r for r in answerable if r.approach == "rag"]
    # base RAG ranks over U: always k chunks, selection = the whole corpus
    assert all(len(r.ranked) == OPTIONS.k for r in rag)
    assert all(r.selection == "all()" for r in rag)
    assert all(r.path == "exact" for r in rag)  # the paper's exact cosine, not the ANN index
    assert all(r.selection_size == smoke_run.meta["corpus_chunks"] for r in rag)
    # the guided selections are smaller than U wherever they ran a real selection
    guided = [r for r in answerable if r.approach == "rag*" and r.cell != "U"]
    assert guided and all((r.selection_size or 0) < smoke_run.meta["corpus_chunks"] for r in guided)


def test_unanswerable_questions_make_guided_approaches_abstain(smoke_run: EvalRun) -> None:
    rows = [r for r in smoke_run.rows if r.set == "unanswerable"]
    assert rows and smoke_run.meta["unanswerable_questions"] > 0
    assert not smoke_run.warnings  # the removed entities really are gone
    for r in rows:
        if r.approach in ("rag*", "graphrag*") and r.entities:
            assert r.empty is not None and r.empty.startswith("unknown_entity")
            assert r.ranked == []
        if r.approach == "rag":
            assert len(r.ranked) == OPTIONS.k  # base RAG always returns something


def test_tagging_recorded_and_llm_reported_missing(smoke_run: EvalRun) -> None:
    assert {t.tagger for t in smoke_run.taggings} == {"fulltext"}
    assert len(smoke_run.taggings) == 4
    assert "llm" in smoke_run.tagger_errors


def test_report_files_and_structure(smoke_run: EvalRun, tmp_path: Path) -> None:
    written = write_outputs(smoke_run, tmp_path)
    names = {p.name for p in written}
    assert {"results.json", "summary.json", "report.md", "relevant_at_k.png"} <= names
    assert "unanswerable_precision.png" in names
    md = (tmp_path / "report.md").read_text("utf-8")
    for heading in (
        "## Approaches",
        "## Retrieval relevance (Table 4, k = 5)",
        "## Search space (Table 5)",
        "## Precision on unanswerable questions (Figure 7)",
        "## Entity tagging (Table 3)",
        "## Latency per approach",
        "## Where and why we differ from the paper",
    ):
        assert heading in md
    for name in OPTIONS.approaches:
        assert f"| `{name}` |" in md
    data = json.loads((tmp_path / "results.json").read_text("utf-8"))
    assert data["format"] == "guidedrag-eval/1"
    assert EvalRun.from_json(data).rows == smoke_run.rows


def test_cli_eval(
    own_sample_db: Driver, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEO4J_URI", settings.neo4j_uri)
    monkeypatch.setenv("NEO4J_PASSWORD", settings.neo4j_password.get_secret_value())
    monkeypatch.chdir(tmp_path)  # no stray .env
    out = tmp_path / "eval"
    result = CliRunner().invoke(
        cli,
        [
            "eval",
            str(sample_kb_dir()),
            "--approaches",
            "rag,graphrag*-relaxed",
            "--tagger",
            "fulltext",
            "--taggers",
            "fulltext",
            "--limit",
            "1",
            "--no-progress",
            "--no-plots",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "graphrag*-relaxed" in result.output
    run = EvalRun.read_json(out / "results.json")
    assert {r.approach for r in run.rows} == {"rag", "graphrag*-relaxed"}
    assert (out / "report.md").exists() and not (out / "latency.png").exists()


def test_cli_rejects_unknown_approach(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["eval", str(sample_kb_dir()), "--approaches", "rag,hybridrag", "--out", str(tmp_path)]
    )
    assert result.exit_code != 0
    assert "unknown approach hybridrag" in result.output
    assert set(APPROACHES) >= {"rag", "rag*", "graphrag", "graphrag*"}
