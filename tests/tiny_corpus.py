"""The tiny KB several database tests share: eight chunks about Ada Lovelace, Babbage, London
and Paris, five documents, five relations (the ``tiny_kb`` fixture in conftest loads it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CHUNKS = [
    (
        "ada-1",
        "d-ada",
        "Ada Lovelace was born in London in 1815. She was the daughter of Lord Byron.",
        ["Ada Lovelace", "London", "Lord Byron"],
    ),
    (
        "ada-2",
        "d-ada",
        "Ada Lovelace wrote the first published algorithm for Charles Babbage's Analytical Engine.",
        ["Ada Lovelace", "Charles Babbage", "Analytical Engine"],
    ),
    (
        "babbage-1",
        "d-babbage",
        "Charles Babbage designed the Analytical Engine, a mechanical general-purpose computer.",
        ["Charles Babbage", "Analytical Engine"],
    ),
    (
        "babbage-2",
        "d-babbage",
        "Charles Babbage was born in London in 1791.",
        ["Charles Babbage", "London"],
    ),
    (
        "london-1",
        "d-london",
        "London is the capital of England and lies on the River Thames.",
        ["London", "River Thames"],
    ),
    (
        "paris-1",
        "d-paris",
        "Paris is the capital of France, on the river Seine.",
        ["Paris", "Seine"],
    ),
    (
        "paris-2",
        "d-paris",
        "The Eiffel Tower in Paris was completed in 1889.",
        ["Paris", "Eiffel Tower"],
    ),
    (
        "byron-1",
        "d-byron",
        "Lord Byron was an English poet who was born in London in 1788.",
        ["Lord Byron", "London"],
    ),
]
DOCUMENTS = {
    "d-ada": "Ada Lovelace",
    "d-babbage": "Charles Babbage",
    "d-london": "London",
    "d-paris": "Paris",
    "d-byron": "Lord Byron",
}
RELATIONS = [
    ("Ada Lovelace", "born in", "London", "ada-1"),
    ("Ada Lovelace", "child of", "Lord Byron", "ada-1"),
    ("Ada Lovelace", "wrote algorithm for", "Analytical Engine", "ada-2"),
    ("Charles Babbage", "designed", "Analytical Engine", "babbage-1"),
    ("Paris", "capital of", "Seine", "paris-1"),
]


def write_bundle(path: Path) -> Path:
    def jsonl(name: str, rows: list[dict[str, Any]]) -> None:
        (path / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")

    jsonl("documents.jsonl", [{"id": k, "title": v} for k, v in DOCUMENTS.items()])
    jsonl(
        "chunks.jsonl",
        [
            {"id": cid, "document_id": doc, "text": text, "position": 0, "entities": ents}
            for cid, doc, text, ents in CHUNKS
        ],
    )
    jsonl(
        "entities.jsonl",
        [
            {"name": "Ada Lovelace", "type": "person", "description": "English mathematician"},
            {"name": "Charles Babbage", "type": "person", "aliases": ["Babbage"]},
        ],
    )
    jsonl(
        "relations.jsonl",
        [{"head": h, "type": t, "tail": tl, "chunk_id": c} for h, t, tl, c in RELATIONS],
    )
    return path
