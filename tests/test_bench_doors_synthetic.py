"""``benchmarks/doors.py`` on a bundle with no questions (the synthetic KBs): questions made from
chunks spread over the file, each naming its chunk's least-mentioned entity."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from guidedrag_graph.kb import sample_kb_dir
from guidedrag_graph.kb.synthetic import SyntheticSpec, write_synthetic_bundle


def small_synthetic(
    path: Path,
) -> tuple[list[dict[str, Any]], dict[str, str], Counter[str]]:
    """A 300-chunk synthetic bundle at ``path``: its chunks, entity names by id, mention counts."""
    write_synthetic_bundle(path, SyntheticSpec(300), centres_dir=sample_kb_dir())
    chunks = [json.loads(line) for line in (path / "chunks.jsonl").open(encoding="utf-8")]
    names = {
        e["id"]: e["name"]
        for e in map(json.loads, (path / "entities.jsonl").open(encoding="utf-8"))
    }
    return chunks, names, Counter(e for c in chunks for e in c["entities"])


def test_synthetic_questions_name_each_chunks_least_mentioned_entity(tmp_path: Path) -> None:
    from benchmarks.doors import synthetic_questions

    chunks, names, mentions = small_synthetic(tmp_path)
    questions, vectors = synthetic_questions(tmp_path, 6)
    assert len(questions) == len(vectors) == 6
    by_id = {c["id"]: c for c in chunks}
    spread = set()
    for question, vector in zip(questions, vectors, strict=True):
        (gold,) = question.gold_chunk_ids
        chunk = by_id[gold]
        rarest = min(chunk["entities"], key=lambda e: (mentions[e], e))
        assert question.semantics.entities == (names[rarest],)
        assert names[rarest] in question.question
        assert vector == [float(x) for x in chunk["embedding"]]
        spread.add(chunks.index(chunk) // 50)
    assert len(spread) == 6  # one question per sixth of the file, not the first six chunks
