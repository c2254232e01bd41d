"""A tiny corpus and a deterministic "extraction LLM" shared by the KG-builder tests.

The builders' own writers store the graph (tests/test_builders_*.py); only the model is
replaced: each chunk's entities and relations are looked up in the tables below by the names
that occur in its text, so every run writes the same graph.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# One paragraph per document; the builders' splitters keep each paragraph as one chunk.
DOCUMENTS: dict[str, str] = {
    "Mars": (
        "Phobos is the larger and closer of the two moons of Mars. "
        "Phobos orbits Mars three times a day."
    ),
    "Deimos": "Deimos is the smaller moon of Mars and takes thirty hours to orbit it.",
    "Euro": "The Euro is the currency of Germany and France, issued by the European Central Bank.",
    "Deutsche Mark": "The Deutsche Mark was the currency of Germany before the Euro replaced it.",
}

# name -> type (the "label" an extraction model would give it)
ENTITIES: dict[str, str] = {
    "Phobos": "Moon",
    "Deimos": "Moon",
    "Mars": "Planet",
    "Euro": "Currency",
    "Deutsche Mark": "Currency",
    "Germany": "Country",
    "France": "Country",
    "European Central Bank": "Organization",
}

# (head, relation type, tail); kept when both names occur in the chunk
RELATIONS: tuple[tuple[str, str, str], ...] = (
    ("Phobos", "ORBITS", "Mars"),
    ("Deimos", "ORBITS", "Mars"),
    ("Euro", "CURRENCY_OF", "Germany"),
    ("Euro", "CURRENCY_OF", "France"),
    ("Deutsche Mark", "CURRENCY_OF", "Germany"),
    ("European Central Bank", "ISSUES", "Euro"),
)


@dataclass(frozen=True)
class Extraction:
    entities: list[tuple[str, str]]  # (name, type)
    relations: list[tuple[str, str, str]]


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) is not None


def extract(text: str) -> Extraction:
    """Entities named in ``text`` (longest names first, so 'Mars' inside no other name counts)."""
    found = [(name, kind) for name, kind in ENTITIES.items() if _mentions(text, name)]
    names = {name for name, _ in found}
    rels = [r for r in RELATIONS if r[0] in names and r[2] in names]
    return Extraction(found, rels)


def chunk_text_in_prompt(prompt: str) -> str:
    """The chunk a builder's extraction prompt is about: the one corpus paragraph it quotes."""
    hits = [text for text in DOCUMENTS.values() if text in prompt]
    if len(hits) != 1:
        raise AssertionError(f"prompt quotes {len(hits)} corpus paragraphs: {prompt[-400:]!r}")
    return hits[0]
