"""MuSiQue converter: output validates; counts, gold ids and drops match the source; no leakage."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from guidedrag_graph.kb import read_bundle
from guidedrag_graph.kb.musique import chunk_id_for, convert_musique
from guidedrag_graph.schema.presets import name_key

# The shared data sits beside the checkout (CI clones next to a copy of shared/). Where it is
# missing these tests fail rather than skip: a skip would pass CI without testing the converter.
SOURCE = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "musique"


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    out = tmp_path_factory.mktemp("musique") / "bundle"
    return out, convert_musique(SOURCE, out)


def _source() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    questions = json.loads((SOURCE / "musique_train.json").read_text())
    docs = json.loads((SOURCE / "musique_openie_triples.json").read_text())["docs"]
    return questions, docs


def test_converter_output_validates_and_matches_source(converted: tuple[Path, Any]) -> None:
    out, report = converted
    questions, docs = _source()
    bundle = read_bundle(out)
    assert len(bundle.questions) == len(questions) == report.counts["questions"]
    assert len(bundle.chunks) == len({(d["title"], d["text"]) for d in docs})
    assert len(bundle.documents) == len({d["title"] for d in docs})
    malformed = sum(len(t) != 3 for d in docs for t in d["extracted_triples"])
    dropped = sum(v for k, v in report.dropped.items() if k.startswith("malformed triple"))
    assert dropped == malformed == 185
    by_id = {q.id: q for q in bundle.questions}
    for source in questions:
        paragraphs = {p["idx"]: p for p in source["paragraphs"]}
        last = paragraphs[source["question_decomposition"][-1]["paragraph_support_idx"]]
        question = by_id[source["id"]]
        assert question.gold_chunk_ids == [chunk_id_for(last["title"], last["paragraph_text"])]
        assert sorted(question.all_gold_chunk_ids) == sorted(
            chunk_id_for(p["title"], p["paragraph_text"])
            for p in source["paragraphs"]
            if p["is_supporting"]
        )
        # Semantics never leak the answer or a bridge entity found by a later hop.
        hidden = {name_key(source["answer"])} | {
            name_key(step["answer"]) for step in source["question_decomposition"]
        }
        assert not {name_key(e) for e in question.semantics.entities} & hidden
        first = paragraphs[source["question_decomposition"][0]["paragraph_support_idx"]]
        assert question.semantics.entities in ((), (first["title"],))


def test_chunk_ids_are_stable_across_runs(converted: tuple[Path, Any], tmp_path: Path) -> None:
    out, _ = converted
    again = tmp_path / "again"
    convert_musique(SOURCE, again)
    assert (again / "chunks.jsonl").read_bytes() == (out / "chunks.jsonl").read_bytes()
    assert (again / "questions.jsonl").read_bytes() == (out / "questions.jsonl").read_bytes()


def test_unanswerable_bundle_removes_named_entities(converted: tuple[Path, Any]) -> None:
    out, report = converted
    bundle = read_bundle(out / "unanswerable")
    full = read_bundle(out)
    removed = {name_key(e) for e in report.unanswerable["removed_entities"]}
    assert removed and report.unanswerable["unanswerable_questions"] == len(removed)
    keys = {e.name_key for e in bundle.entities}
    assert not removed & keys
    assert len(full.chunks) - len(bundle.chunks) == report.unanswerable["removed_chunks"] > 0
    chunk_ids = {c.id for c in bundle.chunks}
    for question in bundle.questions:
        if question.answerable:
            assert set(question.all_gold_chunk_ids) <= chunk_ids
            assert not {name_key(e) for e in question.semantics.entities} & removed
        else:
            assert question.gold_chunk_ids == [] and question.semantics.entities
            assert name_key(question.semantics.entities[0]) in removed
    assert sum(not q.answerable for q in bundle.questions) == len(removed)
