"""A bundle never renames an entity it did not create: an entity id the database holds under
another name is refused with ``file:line`` before anything is written (migrations included), or,
with ``--on-conflict=update``, renamed and reported. Against the real server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.errors import EntityConflictError
from guidedrag_graph.kb import load_bundle
from guidedrag_graph.schema.presets import PRESETS
from tests.cli_run import run_cli
from tests.kb_bundles import make_bundle
from tests.security import schema_names, snapshot

GUIDEDRAG = PRESETS["guidedrag"]


def _hijacker(root: Path, rows: list[dict[str, object]]) -> Path:
    """A one-document bundle whose entities.jsonl is ``rows`` (line 1, 2, ...)."""
    root.mkdir(parents=True)
    (root / "documents.jsonl").write_text(json.dumps({"id": "dx", "title": "X"}) + "\n")
    chunk = {"id": "cx", "document_id": "dx", "text": "Hijack.", "entities": ["Rome"]}
    (root / "chunks.jsonl").write_text(json.dumps(chunk) + "\n")
    (root / "entities.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def _name(driver: Driver, entity_id: str) -> str | None:
    rows = driver.execute_query(
        "MATCH (e:Entity {id: $id}) RETURN e.name AS name", id=entity_id
    ).records
    return rows[0]["name"] if rows else None


@pytest.fixture
def loaded(migrated_db: Driver, settings: Settings, tmp_path: Path) -> Driver:
    load_bundle(migrated_db, settings, GUIDEDRAG, make_bundle(tmp_path / "kb", embed=False))
    assert _name(migrated_db, "rome") == "Rome"
    return migrated_db


def test_a_conflict_is_refused_naming_file_line_and_nothing_is_written(
    loaded: Driver, settings: Settings, tmp_path: Path
) -> None:
    root = _hijacker(
        tmp_path / "evil",
        [{"id": "other", "name": "Other"}, {"id": "rome", "name": "Hijacked Name"}],
    )
    before, schema_before = snapshot(loaded), schema_names(loaded)
    with pytest.raises(EntityConflictError) as caught:
        load_bundle(loaded, settings, GUIDEDRAG, root)
    message = str(caught.value)
    assert message.startswith(f"{root}/entities.jsonl:2: entity id 'rome' ")
    assert "'Rome'" in message and "'Hijacked Name'" in message
    assert "--on-conflict=update" in message and "nothing was written" in message
    assert "\n" not in message
    assert snapshot(loaded) == before  # not even the new document, chunk or entity 'other'
    assert schema_names(loaded) == schema_before


def test_several_conflicts_are_counted_in_the_one_line(
    loaded: Driver, settings: Settings, tmp_path: Path
) -> None:
    root = _hijacker(
        tmp_path / "evil",
        [{"id": "rome", "name": "Roma Invicta"}, {"id": "carthage", "name": "Qart-hadasht"}],
    )
    with pytest.raises(EntityConflictError, match=r"entities\.jsonl:1: .* \(and 1 more\);"):
        load_bundle(loaded, settings, GUIDEDRAG, root)
    assert _name(loaded, "carthage") == "Carthage"


def test_update_renames_and_reports_each_rename(
    loaded: Driver, settings: Settings, tmp_path: Path
) -> None:
    root = _hijacker(tmp_path / "evil", [{"id": "rome", "name": "Roma Invicta"}])
    report = load_bundle(loaded, settings, GUIDEDRAG, root, on_conflict="update")
    assert report.entities_renamed == [
        f"{root}/entities.jsonl:1: entity 'rome' renamed 'Rome' -> 'Roma Invicta'"
    ]
    assert report.to_dict()["entities_renamed"] == report.entities_renamed
    assert _name(loaded, "rome") == "Roma Invicta"
    key = loaded.execute_query("MATCH (e:Entity {id: 'rome'}) RETURN e.name_key AS k").records
    assert key[0]["k"] == "roma invicta"


def test_the_same_name_is_no_conflict_and_a_reload_writes_nothing_new(
    loaded: Driver, settings: Settings, tmp_path: Path
) -> None:
    """Reloading what is there (same ids, same names), or naming an entity only by reference,
    is never a conflict."""
    before = snapshot(loaded)
    report = load_bundle(loaded, settings, GUIDEDRAG, make_bundle(tmp_path / "kb", embed=False))
    assert report.entities_renamed == [] and report.nodes_created == 0
    after = snapshot(loaded)
    assert (after.nodes, after.relationships) == (before.nodes, before.relationships)
    same = _hijacker(tmp_path / "same", [{"id": "rome", "name": "Rome", "type": "City"}])
    assert load_bundle(loaded, settings, GUIDEDRAG, same).entities_renamed == []
    assert _name(loaded, "rome") == "Rome"


def test_cli_refuses_in_one_line_and_updates_with_the_flag(
    loaded: Driver, settings: Settings, tmp_path: Path
) -> None:
    root = _hijacker(tmp_path / "evil", [{"id": "rome", "name": "Hijacked Name"}])
    env = {
        "NEO4J_URI": settings.neo4j_uri,
        "NEO4J_PASSWORD": settings.neo4j_password.get_secret_value(),
    }
    before = snapshot(loaded)
    refused = run_cli(["load", str(root), "--no-progress"], env, cwd=tmp_path)
    assert refused.returncode != 0
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1, refused.stderr
    assert lines[0].startswith(f"error: {root}/entities.jsonl:1: entity id 'rome' ")
    assert "--on-conflict=update" in lines[0]
    assert snapshot(loaded) == before
    updated = run_cli(
        ["load", str(root), "--no-progress", "--on-conflict=update"], env, cwd=tmp_path
    )
    assert updated.returncode == 0, updated.stderr
    assert f"{root}/entities.jsonl:1: entity 'rome' renamed 'Rome' -> 'Hijacked Name'" in (
        updated.stdout
    )
    assert _name(loaded, "rome") == "Hijacked Name"
