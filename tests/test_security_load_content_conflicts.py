"""A bundle never silently overwrites a document or chunk (issue 34, R6): an id the database
holds with other content is refused with ``file:line``, the id and the fields that differ,
before anything is written; ``--on-conflict=update`` replaces it and reports each id; reloading
the identical bundle stays a no-op. Against the real server, and through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.errors import LoadConflictError
from guidedrag_graph.kb import load_bundle
from guidedrag_graph.schema.presets import PRESETS
from tests.adopted_cli import connection_only
from tests.cli_run import error_line, run_cli
from tests.kb_bundles import make_bundle
from tests.security import schema_names, snapshot

pytestmark = pytest.mark.neo4j

GUIDEDRAG = PRESETS["guidedrag"]


def _reuser(
    root: Path, documents: list[dict[str, object]], chunks: list[dict[str, object]]
) -> Path:
    """A bundle of ``documents`` and ``chunks`` (line 1, 2, ...), no entities."""
    root.mkdir(parents=True)
    for name, rows in (("documents.jsonl", documents), ("chunks.jsonl", chunks)):
        (root / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def _value(driver: Driver, label: str, node_id: str, key: str) -> object:
    rows = driver.execute_query(
        f"MATCH (n:{label} {{id: $id}}) RETURN n[$key] AS v", id=node_id, key=key
    ).records
    return rows[0]["v"] if rows else None


# d1 as make_bundle writes it (a reload of it is no conflict) and a new document.
SAME_D1 = {"id": "d1", "title": "History 1", "source": "test", "date": "2011-01-01"}
NEW_DOC = {"id": "dnew", "title": "New"}


@pytest.fixture
def loaded(migrated_db: Driver, settings: Settings, tmp_path: Path) -> Driver:
    load_bundle(migrated_db, settings, GUIDEDRAG, make_bundle(tmp_path / "kb", embed=False))
    return migrated_db


def test_a_reused_document_id_is_refused_naming_file_line_and_fields(
    loaded: Driver, settings: Settings, tmp_path: Path
) -> None:
    root = _reuser(
        tmp_path / "reuse",
        [NEW_DOC, {"id": "d0", "title": "Another title", "source": "elsewhere"}],
        [{"id": "cnew", "document_id": "dnew", "text": "New text."}],
    )
    before, schema_before = snapshot(loaded), schema_names(loaded)
    with pytest.raises(LoadConflictError) as caught:
        load_bundle(loaded, settings, GUIDEDRAG, root)
    message = str(caught.value)
    assert message.startswith(f"{root}/documents.jsonl:2: document id 'd0' exists in the ")
    assert "another title, source, date;" in message  # d0 had a date, the bundle has none
    assert "--on-conflict=update" in message and "nothing was written" in message
    assert "\n" not in message
    assert snapshot(loaded) == before  # not even the new document or chunk
    assert schema_names(loaded) == schema_before
    assert _value(loaded, "Document", "d0", "title") == "History 0"


def test_a_reused_chunk_id_is_refused_and_several_are_counted(
    loaded: Driver, settings: Settings, tmp_path: Path
) -> None:
    root = _reuser(
        tmp_path / "reuse",
        [SAME_D1],
        [
            {"id": "c1", "document_id": "d1", "text": "Chunk 1: Carthage and Athens in year 101.",
             "position": 0, "metadata": {"page": 1}},  # as loaded: no conflict
            {"id": "c4", "document_id": "d1", "text": "Replaced text.", "position": 1,
             "metadata": {"page": 4}},
            {"id": "c7", "document_id": "d1", "text": "Chunk 7: Athens and Sparta in year 107.",
             "position": 2, "metadata": {"page": 70}},
        ],
    )  # fmt: skip
    before = snapshot(loaded)
    with pytest.raises(LoadConflictError) as caught:
        load_bundle(loaded, settings, GUIDEDRAG, root)
    message = str(caught.value)
    assert message.startswith(
        f"{root}/chunks.jsonl:2: chunk id 'c4' exists in the database with another text "
        f"(and 1 more); nothing was written: give the bundle's chunk another id, or replace "
        f"it with --on-conflict=update"
    ), message
    assert snapshot(loaded) == before
    assert str(_value(loaded, "Chunk", "c4", "text")).startswith("Chunk 4:")


def test_update_replaces_and_reports_each_id(
    loaded: Driver, settings: Settings, tmp_path: Path
) -> None:
    root = _reuser(
        tmp_path / "reuse",
        [{"id": "d1", "title": "Renamed", "source": "test", "date": "2011-01-01"}],
        [{"id": "c4", "document_id": "d1", "text": "Replaced text.", "position": 1,
          "metadata": {"page": 40}}],
    )  # fmt: skip
    report = load_bundle(loaded, settings, GUIDEDRAG, root, on_conflict="update")
    assert report.replaced == [
        f"{root}/documents.jsonl:1: document 'd1' replaced (title differed)",
        f"{root}/chunks.jsonl:1: chunk 'c4' replaced (text, metadata.page differed)",
    ]
    assert report.to_dict()["replaced"] == report.replaced
    assert _value(loaded, "Document", "d1", "title") == "Renamed"
    assert _value(loaded, "Chunk", "c4", "text") == "Replaced text."


def test_reloading_the_same_bundle_is_no_conflict_and_writes_nothing(
    loaded: Driver, settings: Settings, tmp_path: Path
) -> None:
    before = snapshot(loaded)
    report = load_bundle(loaded, settings, GUIDEDRAG, make_bundle(tmp_path / "kb", embed=False))
    assert report.replaced == [] and report.entities_renamed == []
    assert report.nodes_created == 0 and report.relationships_created == 0
    after = snapshot(loaded)
    assert (after.nodes, after.relationships) == (before.nodes, before.relationships)


def test_cli_refuses_in_one_line_and_replaces_with_the_flag(
    loaded: Driver, settings: Settings, tmp_path: Path
) -> None:
    root = _reuser(
        tmp_path / "reuse",
        [SAME_D1],
        [{"id": "c4", "document_id": "d1", "text": "Replaced text.", "position": 1,
          "metadata": {"page": 4}}],
    )  # fmt: skip
    env = connection_only(settings)
    before = snapshot(loaded)
    refused = run_cli(["load", str(root), "--no-progress"], env, cwd=tmp_path)
    line = error_line(refused)
    assert line.startswith(f"error: {root}/chunks.jsonl:1: chunk id 'c4' exists in the database")
    assert "another text;" in line and "--on-conflict=update" in line
    assert snapshot(loaded) == before
    updated = run_cli(
        ["load", str(root), "--no-progress", "--on-conflict=update"], env, cwd=tmp_path
    )
    assert updated.returncode == 0, updated.stderr
    assert f"{root}/chunks.jsonl:1: chunk 'c4' replaced (text differed)" in updated.stdout
    assert _value(loaded, "Chunk", "c4", "text") == "Replaced text."
