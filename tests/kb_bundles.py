"""Small KB bundles written on the fly, and the graph counts a load should produce (loader,
bulk-load and hardening tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.kb import kb_stats
from guidedrag_graph.schema.presets import SchemaMapping


def _unit(seed: int, dims: int = 384) -> list[float]:
    vector = np.random.default_rng(seed).normal(size=dims)
    return [round(float(x), 6) for x in vector / np.linalg.norm(vector)]


def make_bundle(
    root: Path, *, chunks: int = 12, embed: bool = True, dims: int = 384, docs: int = 3
) -> Path:
    """A small bundle: ``docs`` documents, numbered chunks that mention cities, a few relations."""
    root.mkdir(parents=True, exist_ok=True)
    cities = ["Rome", "Carthage", "Athens", "Sparta", "Alexandria"]
    lines: dict[str, list[dict[str, Any]]] = {
        "documents.jsonl": [
            {"id": f"d{i}", "title": f"History {i}", "source": "test", "date": f"20{10 + i}-01-01"}
            for i in range(docs)
        ],
        "entities.jsonl": [
            {"id": "rome", "name": "Rome", "type": "City", "aliases": ["Roma"]},
            {"name": "Carthage", "type": "City", "description": "Punic city"},
        ],
        "chunks.jsonl": [],
        "relations.jsonl": [
            {"head": "Rome", "type": "fought against", "tail": "Carthage", "chunk_id": "c0"},
            {"head": "Athens", "type": "allied with", "tail": "Sparta", "chunk_id": "c1"},
            {"head": "Sparta", "type": "fought against", "tail": "Athens"},
        ],
        "questions.jsonl": [
            {"id": "q1", "question": "Who fought Rome?", "answerable": True,
             "semantics": {"entities": ["Rome"]}, "gold_chunk_ids": ["c0"]},
        ],
    }  # fmt: skip
    for i in range(chunks):
        row: dict[str, Any] = {
            "id": f"c{i}",
            "document_id": f"d{i % docs}",
            "text": f"Chunk {i}: {cities[i % 5]} and {cities[(i + 1) % 5]} in year {100 + i}.",
            "position": i // docs,
            "entities": [cities[i % 5], cities[(i + 1) % 5].upper()],
            "metadata": {"page": i},
        }
        if embed:
            row["embedding"] = _unit(i, dims)
        lines["chunks.jsonl"].append(row)
    for name, rows in lines.items():
        (root / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return root


def graph_counts(driver: Driver, settings: Settings, schema: SchemaMapping) -> dict[str, int]:
    stats = kb_stats(driver, settings, schema)
    keys = ("documents", "chunks", "entities", "mentions", "relations", "relation_types")
    return {k: stats[k] for k in keys} | {
        "chunks_with_embedding": stats["chunks"] - stats["chunks_without_embedding"]
    }
