"""``kb wipe`` deletes only what guidedrag's loader created (issue 34, R5), against the real
server and through the real CLI.

Beside a loaded KB: a neo4j-graphrag-builder-style graph (1 ``:Document``, 5 ``:Chunk``, 5
``:__Entity__``) and a CRM ``:Customer:Entity`` node — 12 user nodes sharing the KB's labels.
The wipe must delete the KB and leave all 12 nodes and every relationship between them, and say
how many chunk/document/entity nodes it left and why. A user's entity a bundle merged onto stays
too; a KB loaded before the loader marked its nodes stays unless ``--force``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.kb import load_bundle
from guidedrag_graph.schema.presets import PRESETS
from tests.adopted_cli import connection_only
from tests.cli_run import run_cli
from tests.kb_bundles import make_bundle

pytestmark = pytest.mark.neo4j

GUIDEDRAG = PRESETS["guidedrag"]

# The user's graph: what neo4j-graphrag's SimpleKGPipeline writes, and a CRM node beside it.
USER_GRAPH = """
CREATE (d:Document {path: 'reports/q3.pdf', createdAt: '2026-01-01'})
WITH d
UNWIND range(0, 4) AS i
CREATE (c:Chunk {id: 'kgb-chunk-' + i, index: i, text: 'builder chunk ' + i})-[:FROM_DOCUMENT]->(d)
CREATE (e:__Entity__:Person {id: 'kgb-entity-' + i, name: 'Person ' + i})-[:FROM_CHUNK]->(c)
WITH collect(e) AS people
UNWIND range(0, 3) AS i
WITH people[i] AS a, people[i + 1] AS b
CREATE (a)-[:KNOWS]->(b)
"""
CUSTOMER = "CREATE (:Customer:Entity {customer_no: 'C-1001', name: 'ACME Ltd'})"
# Everything of the user's, identified by what the user wrote (never by our label).
USER_NODES = (
    "MATCH (n) WHERE n:Customer OR n:__Entity__ OR n.path = 'reports/q3.pdf' "
    "OR n.id STARTS WITH 'kgb-' RETURN elementId(n) AS id, labels(n) AS labels, "
    "properties(n) AS props ORDER BY id"
)
USER_RELS = (
    "MATCH (a)-[r]->(b) WHERE type(r) IN ['FROM_DOCUMENT', 'FROM_CHUNK', 'KNOWS'] "
    "RETURN elementId(r) AS id, type(r) AS type, elementId(a) AS a, elementId(b) AS b "
    "ORDER BY id"
)


def _user_graph(driver: Driver) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    nodes = [r.data() for r in driver.execute_query(USER_NODES).records]
    rels = [r.data() for r in driver.execute_query(USER_RELS).records]
    return nodes, rels


def _count(driver: Driver, query: str) -> int:
    return int(driver.execute_query(query).records[0]["n"])


@pytest.fixture
def beside_a_kb(migrated_db: Driver, settings: Settings, tmp_path: Path) -> Driver:
    """The 12 user nodes, then the small KB loaded beside them (with the default preset)."""
    migrated_db.execute_query(USER_GRAPH)
    migrated_db.execute_query(CUSTOMER)
    load_bundle(migrated_db, settings, GUIDEDRAG, make_bundle(tmp_path / "kb", embed=False))
    return migrated_db


def test_wipe_leaves_every_user_node_and_relationship(
    beside_a_kb: Driver, settings: Settings, tmp_path: Path
) -> None:
    before = _user_graph(beside_a_kb)
    assert (len(before[0]), len(before[1])) == (12, 14)  # 1 + 5 + 5 + 1 nodes; 5 + 5 + 4 rels
    result = run_cli(["kb", "wipe", "--yes"], connection_only(settings), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert _user_graph(beside_a_kb) == before  # the same nodes, labels, properties and links
    # The KB is gone: its documents, chunks, entities (with their relationships).
    assert (
        _count(beside_a_kb, "MATCH (n) WHERE n.id IN ['d0', 'c0', 'rome'] RETURN count(n) AS n")
        == 0
    )
    assert _count(beside_a_kb, "MATCH (n:__GuidedRAGLoaded) RETURN count(n) AS n") == 0
    assert _count(beside_a_kb, "MATCH ()-[r:MENTIONS|PART_OF]->() RETURN count(r) AS n") == 0
    lines = result.stdout.strip().splitlines()
    assert lines[0].startswith("deleted ") and "(3 documents, 12 chunks and 5 entities)" in lines[0]
    assert lines[1].startswith("note: left 5 chunks, 1 documents, 1 entities that guidedrag's")
    assert "--force" in lines[1]


def test_wipe_json_counts_what_it_left(
    beside_a_kb: Driver, settings: Settings, tmp_path: Path
) -> None:
    result = run_cli(["kb", "wipe", "--yes", "--json"], connection_only(settings), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["left_nodes"] == {"chunks": 5, "documents": 1, "entities": 1}
    assert out["deleted_nodes"] == 3 + 12 + 5


def test_user_entities_a_bundle_merged_onto_stay_and_only_its_relation_goes(
    migrated_db: Driver, settings: Settings, tmp_path: Path
) -> None:
    """The bundle declares 'rome' and 'carthage' with the user's names: no conflict, the loader
    MERGEs onto them and draws its FOUGHT_AGAINST between them. The wipe must not delete a node
    the loader did not create, must delete the relation it drew, and keep the user's own."""
    migrated_db.execute_query(
        "CREATE (:Entity {id: 'rome', name: 'Rome', owner: 'me'})-[:TRADED_WITH]->"
        "(:Entity {id: 'carthage', name: 'Carthage', owner: 'me'})"
    )
    load_bundle(migrated_db, settings, GUIDEDRAG, make_bundle(tmp_path / "kb", embed=False))
    drawn = "MATCH (:Entity {id: 'rome'})-[r:FOUGHT_AGAINST]->() RETURN count(r) AS n"
    assert _count(migrated_db, drawn) == 1
    result = run_cli(["kb", "wipe", "--yes"], connection_only(settings), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    rows = migrated_db.execute_query(
        "MATCH (e:Entity) RETURN e.id AS id, e.owner AS owner ORDER BY id"
    ).records
    assert [r.data() for r in rows] == [
        {"id": "carthage", "owner": "me"},
        {"id": "rome", "owner": "me"},
    ]
    links = migrated_db.execute_query("MATCH (:Entity)-[r]->(:Entity) RETURN type(r) AS t")
    assert [r["t"] for r in links.records] == ["TRADED_WITH"]
    assert "deleted 1 relations the loader drew between entities it did not create" in (
        result.stdout
    )
    assert "left 2 entities" in result.stdout


def test_a_kb_loaded_without_the_mark_stays_unless_forced(
    migrated_db: Driver, settings: Settings, tmp_path: Path
) -> None:
    """A KB loaded by a version before the mark: the wipe cannot tell it from another tool's
    data, so it leaves it and says so; ``--force`` is the explicit opt-in that deletes it."""
    load_bundle(migrated_db, settings, GUIDEDRAG, make_bundle(tmp_path / "kb", embed=False))
    migrated_db.execute_query("MATCH (n:__GuidedRAGLoaded) REMOVE n:__GuidedRAGLoaded")
    env = connection_only(settings)
    kept = run_cli(["kb", "wipe", "--yes"], env, cwd=tmp_path)
    assert kept.returncode == 0, kept.stderr
    assert "deleted 0 nodes" in kept.stdout
    assert "left 12 chunks, 3 documents, 5 entities" in kept.stdout
    assert _count(migrated_db, "MATCH (c:Chunk) RETURN count(c) AS n") == 12
    forced = run_cli(["kb", "wipe", "--yes", "--force"], env, cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert (
        _count(
            migrated_db, "MATCH (n) WHERE n:Chunk OR n:Document OR n:Entity RETURN count(n) AS n"
        )
        == 0
    )
    assert "note:" not in forced.stdout
