"""A KB with two tenants for the scope leak suite (issue 35; ``tests/scope_leaks.py``).

Tenant A's and tenant B's documents (``source`` ``tenant-a`` / ``tenant-b``) share hub entities
(the same nodes: "Northwind Holdings", "Port Vela", ...) and relation types (``SUPPLIES``,
``LOCATED_IN``); B also has entities of its own, some one edit away from A's ("Teodor Vass" for
A's "Teodor Vasz"), relation types of its own (``SMUGGLES_TO``, ``BRIBED``, ``LAUNDERS_FOR``),
B-evidence relations between the shared hubs, and relations with no evidence chunk (one between
two A-mentioned hubs, which a scope to A may show; two with a B-only endpoint, which it may not).
Every B chunk text carries a marker (``tb-secret-N``) and every B id starts ``tb-``, so a scan of
any output finds a B chunk however it leaked. Embeddings are fixed pseudo-random unit vectors
(nothing to embed when loading); the question is embedded by the configured embedder.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from neo4j import Driver

from guidedrag_graph.config import Settings

SCOPE_A = "source('tenant-a')"

HUBS = ["Northwind Holdings", "Port Vela", "River Osk", "Ilsa Marr"]
A_ONLY = ["Ardent Mills", "Corvin Lake", "Teodor Vasz", "Mirela Quay", "Halden Bridge",
          "Sable Orchard"]  # fmt: skip
# B's own names; the last six are one edit from an A name (A_ONLY, in order).
B_OWN = ["Brask Foundry", "Zoltan Reyes", "Kestrel Array", "Velmora Station", "Oskar Dunmere",
         "Quilla Fenwick"]  # fmt: skip
B_NEAR = ["Ardent Mill", "Corvin Lane", "Teodor Vass", "Mirela Quai", "Halden Bridges",
          "Sable Orchart"]  # fmt: skip
B_ALIASES = ["Brask Works", "Z. Reyes"]
B_ONLY = B_OWN + B_NEAR
SHARED_TYPES = ["SUPPLIES", "LOCATED_IN"]
A_TYPES = ["OWNS"]
B_TYPES = ["SMUGGLES_TO", "BRIBED", "LAUNDERS_FOR"]

A_CHUNKS: list[tuple[str, list[str]]] = [
    ("Ardent Mills supplies grain to Northwind Holdings.", ["Ardent Mills", "Northwind Holdings"]),
    ("Northwind Holdings keeps its offices in Port Vela.", ["Northwind Holdings", "Port Vela"]),
    ("Teodor Vasz owns Ardent Mills since 1998.", ["Teodor Vasz", "Ardent Mills"]),
    ("Corvin Lake drains into the River Osk.", ["Corvin Lake", "River Osk"]),
    ("Mirela Quay is the old harbour of Port Vela.", ["Mirela Quay", "Port Vela"]),
    ("Ilsa Marr audited Northwind Holdings in 2004.", ["Ilsa Marr", "Northwind Holdings"]),
    ("Halden Bridge crosses the River Osk near Port Vela.",
     ["Halden Bridge", "River Osk", "Port Vela"]),
    ("Sable Orchard sells apples to Ardent Mills.", ["Sable Orchard", "Ardent Mills"]),
]  # fmt: skip
B_CHUNKS: list[tuple[str, list[str]]] = [
    ("Brask Foundry supplies steel to Northwind Holdings.",
     ["Brask Foundry", "Northwind Holdings"]),
    ("Zoltan Reyes smuggles crates to Port Vela.", ["Zoltan Reyes", "Port Vela"]),
    ("Northwind Holdings bribed Ilsa Marr in 2009.", ["Northwind Holdings", "Ilsa Marr"]),
    ("Port Vela launders money for Northwind Holdings.", ["Port Vela", "Northwind Holdings"]),
    ("Ilsa Marr supplies forged papers along the River Osk.", ["Ilsa Marr", "River Osk"]),
    ("Kestrel Array sits on Velmora Station.", ["Kestrel Array", "Velmora Station"]),
    ("Ardent Mill buys ingots from Brask Foundry.", ["Ardent Mill", "Brask Foundry"]),
    ("Oskar Dunmere and Quilla Fenwick met at Corvin Lane.",
     ["Oskar Dunmere", "Quilla Fenwick", "Corvin Lane"]),
    ("Teodor Vass rents a shed on Mirela Quai.", ["Teodor Vass", "Mirela Quai"]),
    ("Halden Bridges and Sable Orchart are ledgers of Port Vela.",
     ["Halden Bridges", "Sable Orchart", "Port Vela"]),
]  # fmt: skip

# (head, type, tail, evidence chunk index or None), per tenant.
A_RELATIONS = [
    ("Ardent Mills", "SUPPLIES", "Northwind Holdings", 0),
    ("Northwind Holdings", "LOCATED_IN", "Port Vela", 1),
    ("Teodor Vasz", "OWNS", "Ardent Mills", 2),
    ("Corvin Lake", "LOCATED_IN", "River Osk", 3),
    ("Mirela Quay", "LOCATED_IN", "Port Vela", 4),
    ("Port Vela", "LOCATED_IN", "River Osk", None),  # no evidence, both ends A-mentioned: shown
]
B_RELATIONS = [
    ("Brask Foundry", "SUPPLIES", "Northwind Holdings", 0),
    ("Zoltan Reyes", "SMUGGLES_TO", "Port Vela", 1),
    ("Northwind Holdings", "BRIBED", "Ilsa Marr", 2),  # between shared hubs, B evidence
    ("Port Vela", "LAUNDERS_FOR", "Northwind Holdings", 3),  # between shared hubs
    ("Ilsa Marr", "SUPPLIES", "River Osk", 4),  # shared type, shared hubs, B evidence
    ("Kestrel Array", "LOCATED_IN", "Velmora Station", 5),
    ("Ardent Mill", "SUPPLIES", "Brask Foundry", 6),
    ("Zoltan Reyes", "LOCATED_IN", "Port Vela", None),  # no evidence, a B-only end: hidden
    ("Velmora Station", "SMUGGLES_TO", "Kestrel Array", None),  # no evidence, B only: hidden
]
DOCS_PER_TENANT = 2


def a_chunk_id(i: int) -> str:
    return f"ta-chunk-{i}"


def b_chunk_id(i: int) -> str:
    return f"tb-chunk-{i}"


def b_marker(i: int) -> str:
    return f"tb-secret-{i}"


A_CHUNK_IDS = [a_chunk_id(i) for i in range(len(A_CHUNKS))]
B_CHUNK_IDS = [b_chunk_id(i) for i in range(len(B_CHUNKS))]
A_NAMES = HUBS + A_ONLY  # every entity an A chunk mentions
B_DOC_IDS = [f"tb-doc-{i}" for i in range(DOCS_PER_TENANT)]
B_DOC_TITLES = [f"Tenant B ledger {i}" for i in range(DOCS_PER_TENANT)]


def _unit(seed: int, dims: int) -> list[float]:
    vector = np.random.default_rng(1000 + seed).normal(size=dims)
    return [round(float(x), 6) for x in vector / np.linalg.norm(vector)]


def rows(dims: int = 384) -> dict[str, list[dict[str, Any]]]:
    """The bundle's files as rows (documents, chunks, entities, relations)."""
    documents = [
        {"id": f"ta-doc-{i}", "title": f"Tenant A report {i}", "source": "tenant-a"}
        for i in range(DOCS_PER_TENANT)
    ] + [
        {"id": B_DOC_IDS[i], "title": B_DOC_TITLES[i], "source": "tenant-b"}
        for i in range(DOCS_PER_TENANT)
    ]
    chunks = [
        {"id": a_chunk_id(i), "document_id": f"ta-doc-{i % DOCS_PER_TENANT}", "text": text,
         "position": i, "entities": names, "embedding": _unit(i, dims)}
        for i, (text, names) in enumerate(A_CHUNKS)
    ] + [
        {"id": b_chunk_id(i), "document_id": B_DOC_IDS[i % DOCS_PER_TENANT],
         "text": f"{text} ({b_marker(i)})", "position": i, "entities": names,
         "embedding": _unit(100 + i, dims)}
        for i, (text, names) in enumerate(B_CHUNKS)
    ]  # fmt: skip
    entities = [
        {"name": "Brask Foundry", "type": "Company", "aliases": [B_ALIASES[0]],
         "description": "B's steel works (tb-secret-desc)"},
        {"name": "Zoltan Reyes", "type": "Person", "aliases": [B_ALIASES[1]]},
        {"name": "Northwind Holdings", "type": "Company", "description": "A trading house"},
        {"name": "Ardent Mills", "type": "Company", "description": "A grain mill"},
    ]  # fmt: skip
    relations = [
        {"head": h, "type": t, "tail": tl, **({} if c is None else {"chunk_id": a_chunk_id(c)})}
        for h, t, tl, c in A_RELATIONS
    ] + [
        {"head": h, "type": t, "tail": tl, **({} if c is None else {"chunk_id": b_chunk_id(c)})}
        for h, t, tl, c in B_RELATIONS
    ]
    return {"documents": documents, "chunks": chunks, "entities": entities, "relations": relations}


def write_bundle(path: Path, dims: int = 384) -> Path:
    """The two-tenant bundle under ``path`` (a directory of JSON Lines files)."""
    path.mkdir(parents=True, exist_ok=True)
    for name, lines in rows(dims).items():
        text = "".join(json.dumps(r) + "\n" for r in lines)
        (path / f"{name}.jsonl").write_text(text, encoding="utf-8")
    return path


def load(driver: Driver, settings: Settings, path: Path) -> None:
    """Wipe the database, migrate it and load the two tenants."""
    from guidedrag_graph.kb.loader import load_bundle
    from guidedrag_graph.schema.presets import PRESETS
    from tests.conftest import wipe

    wipe(driver)
    load_bundle(driver, settings, PRESETS["guidedrag"], write_bundle(path), migrate=True)
    driver.execute_query("CALL db.awaitIndexes(120)")
