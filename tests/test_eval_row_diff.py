"""``guidedrag eval-diff``: two eval runs' rows compared field by field, timing aside (no Neo4j)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from guidedrag_graph.cli import cli
from guidedrag_graph.evaluation.row_diff import ResultsFileError, read_rows, row_diff


def _row(question: str, approach: str = "guidedrag", **fields: Any) -> dict[str, Any]:
    return {
        "set": "answerable",
        "question_id": question,
        "variant": 0,
        "approach": approach,
        "ranked": ["c1", "c2"],
        "cosines": [0.91234, 0.81234],
        "latency_s": 0.004,
        "timings": {"ranking": 0.003},
        **fields,
    }


def test_equal_runs_are_the_same_whatever_their_timing() -> None:
    a = [_row("q1"), _row("q2", "rag")]
    b = [_row("q2", "rag", latency_s=0.9, timings={"ranking": 0.8}), _row("q1", latency_s=1.0)]
    diff = row_diff(a, b)
    assert diff.same and diff.compared == 2 and not diff.differing


def test_a_moved_cosine_or_rank_is_a_differing_row_named_with_its_fields() -> None:
    a = [_row("q1"), _row("q2"), _row("q3")]
    b = [_row("q1", cosines=[0.91234, 0.81235]), _row("q2", ranked=["c2", "c1"]), _row("q3")]
    diff = row_diff(a, b)
    assert not diff.same
    assert diff.differing == {
        ("answerable", "q1", 0, "guidedrag"): ("cosines",),
        ("answerable", "q2", 0, "guidedrag"): ("ranked",),
    }
    assert diff.lines()[0].startswith("2 of 3 rows differ")


def test_a_column_one_side_lacks_is_listed_not_counted() -> None:
    diff = row_diff([_row("q1")], [_row("q1", unknown_names=[])])
    assert diff.same
    assert diff.fields_only_in_b == {"unknown_names"} and not diff.fields_only_in_a
    assert "fields only in B (not compared): unknown_names" in diff.lines()


def test_a_row_one_side_lacks_makes_the_runs_differ() -> None:
    diff = row_diff([_row("q1"), _row("q2")], [_row("q1")])
    assert not diff.same and diff.only_in_a == (("answerable", "q2", 0, "guidedrag"),)


def test_a_row_twice_or_without_its_key_is_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(ResultsFileError, match="holds the row answerable/q1/0/guidedrag twice"):
        row_diff([_row("q1"), _row("q1")], [])
    with pytest.raises(ResultsFileError, match="lacks its set, question_id, variant or approach"):
        row_diff([{"set": "answerable"}], [])
    bad = tmp_path / "results.json"
    bad.write_text("not json", encoding="utf-8")
    with pytest.raises(ResultsFileError, match="is not JSON"):
        read_rows(bad)
    bad.write_text('{"meta": {}}', encoding="utf-8")
    with pytest.raises(ResultsFileError, match="has no 'rows' list"):
        read_rows(bad)


def test_the_command_exits_0_when_equal_and_3_when_rows_differ(tmp_path: Path) -> None:
    files = {}
    for name, rows in {
        "a": [_row("q1")],
        "b": [_row("q1", latency_s=2.0)],
        "c": [_row("q1", ranked=["c9"])],
    }.items():
        files[name] = tmp_path / f"{name}.json"
        files[name].write_text(json.dumps({"rows": rows}), encoding="utf-8")
    same = CliRunner().invoke(cli, ["eval-diff", str(files["a"]), str(files["b"])])
    assert same.exit_code == 0, same.output
    assert same.output.startswith("0 of 1 rows differ")
    moved = CliRunner().invoke(cli, ["eval-diff", str(files["a"]), str(files["c"])])
    assert moved.exit_code == 3, moved.output
    assert "answerable/q1/0/guidedrag: ranked" in moved.output
