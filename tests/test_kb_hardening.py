"""Issue 10 regressions in the bundle reader and loader: D9, D10, D12 and case-merged entities."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from neo4j import Driver, GraphDatabase

from guidedrag_graph.config import Settings
from guidedrag_graph.errors import BundleError, DatabaseUnavailableError
from guidedrag_graph.kb import load_bundle, read_bundle
from guidedrag_graph.kb.bundle import safe_relation_type
from guidedrag_graph.schema.presets import PRESETS
from tests.conftest import free_port
from tests.kb_bundles import make_bundle

GUIDEDRAG = PRESETS["guidedrag"]


def _append(root: Path, name: str, rows: list[dict[str, object]]) -> None:
    with (root / name).open("a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(r) + "\n" for r in rows)


def test_structural_predicates_are_prefixed_and_keep_their_text(
    migrated_db: Driver, settings: Settings, tmp_path: Path
) -> None:
    """D9: "part of" / "mentions" must not become the lexical graph's PART_OF / MENTIONS."""
    assert safe_relation_type("part of") == "REL_PART_OF"
    assert safe_relation_type("Mentions") == "REL_MENTIONS"
    assert safe_relation_type("from chunk") == "REL_FROM_CHUNK"
    assert safe_relation_type("fought against") == "FOUGHT_AGAINST"
    root = make_bundle(tmp_path / "kb", chunks=4)
    _append(root, "relations.jsonl", [
        {"head": "Rome", "type": "part of", "tail": "Carthage", "chunk_id": "c0"},
        {"head": "Athens", "type": "mentions", "tail": "Sparta"},
    ])  # fmt: skip
    load_bundle(migrated_db, settings, GUIDEDRAG, root)
    wrong = migrated_db.execute_query(
        "MATCH (:Entity)-[r:PART_OF|MENTIONS]->(:Entity) RETURN count(r) AS n"
    ).records[0]["n"]
    assert wrong == 0
    kept = migrated_db.execute_query(
        "MATCH (:Entity)-[r:REL_PART_OF|REL_MENTIONS]->(:Entity) "
        "RETURN type(r) AS t, r.predicate AS p ORDER BY t"
    ).records
    assert [(r["t"], r["p"]) for r in kept] == [
        ("REL_MENTIONS", "mentions"),
        ("REL_PART_OF", "part of"),
    ]


@pytest.mark.parametrize("defect", ["bad_utf8", "bom"])
def test_bad_byte_or_bom_on_line_3_is_reported_at_line_3_only(tmp_path: Path, defect: str) -> None:
    """D10: the exact line, and no knock-on errors from the lines after it or other files."""
    root = make_bundle(tmp_path / "kb", chunks=8)
    path = root / "chunks.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    if defect == "bad_utf8":
        lines[2] = lines[2].replace(b"Chunk 2", b"Chunk \xff2")
    else:
        lines[2] = b"\xef\xbb\xbf" + lines[2]
    path.write_bytes(b"".join(lines))
    with pytest.raises(BundleError) as caught:
        read_bundle(root)
    message = str(caught.value)
    assert message.startswith("chunks.jsonl:3: "), message
    assert "\n" not in message, message  # one problem: relations naming c2 are not blamed
    assert ("not UTF-8" if defect == "bad_utf8" else "byte-order mark") in message


def test_bom_at_file_start_is_accepted(tmp_path: Path) -> None:
    root = make_bundle(tmp_path / "kb", chunks=5)
    for name in ("documents.jsonl", "chunks.jsonl", "relations.jsonl"):
        path = root / name
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    bundle = read_bundle(root)
    assert len(bundle.chunks) == 5 and len(bundle.documents) == 3


def test_embedding_problems_name_their_line(tmp_path: Path) -> None:
    """Bulk vector checks still blame the right line (NaN, zero vector, strings, bools)."""
    root = make_bundle(tmp_path / "kb", chunks=6, dims=4)
    path = root / "chunks.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[1]["embedding"] = [0.0, 0.0, 0.0, 0.0]
    rows[3]["embedding"] = [1.0, "2", 0.0, 0.0]
    rows[4]["embedding"] = [1e39, 0.0, 0.0, 1.0]
    rows[5]["embedding"] = [True, 0.0, 0.0, 1.0]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(BundleError) as caught:
        read_bundle(root)
    lines = str(caught.value).splitlines()
    assert lines == [
        "chunks.jsonl:4: embedding must contain numbers only",
        "chunks.jsonl:6: embedding must contain numbers only",
        "chunks.jsonl:2: embedding is the zero vector (cosine is undefined)",
        "chunks.jsonl:5: embedding contains NaN or infinity (or a number too large for float32)",
    ]


def test_entities_differing_only_by_case_are_merged_and_reported(
    migrated_db: Driver, settings: Settings, tmp_path: Path
) -> None:
    """Bundles from other tools: `Queen of Spades` / `queen of spades` are one entity."""
    root = make_bundle(tmp_path / "kb", chunks=4)
    _append(root, "entities.jsonl", [
        {"name": "Queen of Spades", "type": "Opera"},
        {"name": "queen  of spades", "aliases": ["Pikovaya dama"], "description": "by Tchaikovsky"},
    ])  # fmt: skip
    bundle = read_bundle(root)
    queen = [e for e in bundle.entities if e.name_key == "queen of spades"]
    assert len(queen) == 1
    assert (queen[0].name, queen[0].type, queen[0].description, queen[0].aliases) == (
        "Queen of Spades", "Opera", "by Tchaikovsky", ("Pikovaya dama",)
    )  # fmt: skip
    assert bundle.merged_entities and "entities.jsonl:4" in bundle.merged_entities[0]
    report = load_bundle(migrated_db, settings, GUIDEDRAG, bundle)
    assert report.entities_merged == 1
    assert any("differ only by case" in w for w in report.warnings)
    stored = migrated_db.execute_query(
        "MATCH (e:Entity {name_key: 'queen of spades'}) RETURN e.alias_keys AS k"
    ).records
    assert [r["k"] for r in stored] == [["pikovaya dama"]]
    # Explicit duplicate ids are still an error.
    _append(root, "entities.jsonl", [{"id": "rome", "name": "ROME"}])
    with pytest.raises(BundleError, match=r"entities.jsonl:5: duplicate entity id 'rome'"):
        read_bundle(root)


def test_lost_server_says_rerun_the_same_command(settings: Settings, tmp_path: Path) -> None:
    """D12: a connection lost during the load is one line that says how to resume."""
    root = make_bundle(tmp_path / "kb", chunks=3)
    dead = settings.model_copy(update={"neo4j_uri": f"bolt://127.0.0.1:{free_port()}"})
    drv = GraphDatabase.driver(dead.neo4j_uri, auth=("neo4j", "x"), connection_timeout=2)
    started = time.monotonic()
    with drv, pytest.raises(DatabaseUnavailableError) as caught:
        load_bundle(drv, dead, GUIDEDRAG, root, migrate=False)
    message = str(caught.value)
    assert "rerun the same command to resume" in message and "\n" not in message
    # Down before the load starts: no read waits out the driver's 30 s of retries (each did).
    assert time.monotonic() - started < 15.0
