"""Adopted graphs remember what adoption found (issue 21), on the main server.

A LangChain-shaped graph written by hand the way ``add_graph_documents`` writes a source without
``title`` metadata (md5 ids, a ``source`` path), with its own vector index. After ``kb adopt
--preset langchain`` the real CLI, given only where the server is, finds the index, the preset
and a readable title; errors never say ``migrate``; ``kb wipe`` refuses the user's graph.
"""

from __future__ import annotations

import json
from hashlib import md5
from pathlib import Path

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.testing.builders_corpus import DOCUMENTS, extract
from tests.adopted_cli import cli_json, connection_only
from tests.cli_run import error_line, run_cli
from tests.conftest import wipe

pytestmark = pytest.mark.neo4j

INDEX = "lc_vector"


def _source(title: str) -> str:
    return f"notes/{title.lower().replace(' ', '_')}.txt"


@pytest.fixture
def langchain_like(driver: Driver, embedder: Embedder) -> Driver:
    wipe(driver)
    texts = list(DOCUMENTS.values())
    vectors = embedder.embed_passages(texts)
    for (title, text), vector in zip(DOCUMENTS.items(), vectors, strict=True):
        driver.execute_query(
            "CREATE (d:Document {id: $id, text: $text, source: $source, embedding: $vec})",
            id=md5(text.encode()).hexdigest(),
            text=text,
            source=_source(title),
            vec=[float(x) for x in vector],
        )
        for name, _kind in extract(text).entities:
            driver.execute_query(
                "MATCH (d:Document {id: $doc}) MERGE (e:__Entity__ {id: $name}) "
                "MERGE (d)-[:MENTIONS]->(e)",
                doc=md5(text.encode()).hexdigest(),
                name=name,
            )
    driver.execute_query(
        f"CREATE VECTOR INDEX {INDEX} FOR (d:Document) ON d.embedding OPTIONS {{indexConfig: "
        "{`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}}"
    )
    driver.execute_query("CALL db.awaitIndexes(120)")
    return driver


def test_inspect_names_the_preset_and_adopt_remembers_it(
    langchain_like: Driver, settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    # Under the default preset: what does not fit, and the preset that does (not "kb inspect").
    result = run_cli(["kb", "inspect"], connection_only(settings), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "does not fit: preset 'guidedrag' expects :Chunk" in result.stdout
    assert "fits preset 'langchain'" in result.stdout
    assert "fitting preset: langchain" in result.stdout
    assert "try `guidedrag kb inspect`" not in result.stdout

    adopted = cli_json(["kb", "adopt", "--preset", "langchain"], settings, tmp_path)
    assert adopted["vector_index_name"] == INDEX  # theirs, found and recorded
    assert any("'source'" in note for note in adopted["notes"])

    # The CLI with the connection alone: their index, the preset, a readable title.
    question = "How often does Phobos orbit Mars?"
    found = cli_json(["retrieve", question, "--entity", "Phobos"], settings, tmp_path)
    top = found["chunks"][0]
    assert top["document_title"] == _source("Mars")  # not the md5 id
    assert top["id"] == md5(DOCUMENTS["Mars"].encode()).hexdigest()
    assert top["short_id"] == top["id"][:10] + "…"
    text = run_cli(
        ["retrieve", question, "--entity", "Phobos"], connection_only(settings), cwd=tmp_path
    )
    assert f"{top['short_id']} {top['id']}" in text.stdout and _source("Mars") in text.stdout

    # The library too: Settings() with no preset and no index name.
    plain = Settings(
        _env_file=None,  # type: ignore[call-arg]
        neo4j_uri=settings.neo4j_uri,
        neo4j_password=settings.neo4j_password,
    )
    with GuidedRAG(plain, driver=langchain_like, embedder=embedder) as rag:
        assert rag.settings.vector_index_name == INDEX
        assert rag.schema.preset == "langchain" and rag.schema.document_title == "source"
        assert [c.id for c in rag.retrieve(question).chunks][:1] == [top["id"]]
    # A setting the user made wins over the record.
    mine = plain.model_copy(update={"vector_index_name": "my_own"})
    with GuidedRAG(mine, driver=langchain_like, embedder=embedder) as rag:
        assert rag.settings.vector_index_name == "my_own"

    # embed-entities creates the entity-name index it needs and records it.
    embedded = cli_json(["kb", "embed-entities"], settings, tmp_path)
    assert embedded["vector_index_created"] is True
    tagged = run_cli(
        ["retrieve", question, "--auto-semantics", "--tagger", "embedding"],
        connection_only(settings),
        cwd=tmp_path,
    )
    assert tagged.returncode == 0, tagged.stderr
    assert "auto-semantics (embedding tagger): " in tagged.stdout and "Phobos" in tagged.stdout

    # --drop removes what adopt and embed-entities created; their own index stays.
    dropped = cli_json(["kb", "adopt", "--drop"], settings, tmp_path)
    assert sorted(dropped["dropped"]) == sorted(
        ["entity_names", "guidedrag_entity_name_key", embedded["vector_index_name"]]
    )
    names = {r["name"] for r in langchain_like.execute_query("SHOW INDEXES YIELD name").records}
    assert INDEX in names


def test_an_index_error_on_an_adopted_graph_never_says_migrate(
    langchain_like: Driver, settings: Settings, tmp_path: Path
) -> None:
    cli_json(["kb", "adopt", "--preset", "langchain"], settings, tmp_path)
    langchain_like.execute_query(f"DROP INDEX {INDEX}")
    result = run_cli(
        ["retrieve", "Which currency did Germany use?"], connection_only(settings), cwd=tmp_path
    )
    line = error_line(result)
    assert "migrate" not in line and "guidedrag kb adopt" in line


def test_wipe_refuses_a_graph_it_did_not_load(
    langchain_like: Driver, settings: Settings, tmp_path: Path
) -> None:
    cli_json(["kb", "adopt", "--preset", "langchain"], settings, tmp_path)
    result = run_cli(["kb", "wipe", "--yes"], connection_only(settings), cwd=tmp_path)
    assert "--force" in error_line(result) and "adopted" in error_line(result)
    count = langchain_like.execute_query("MATCH (d:Document) RETURN count(d) AS n").records[0]["n"]
    assert count == len(DOCUMENTS)
    forced = cli_json(["kb", "wipe", "--yes", "--force"], settings, tmp_path)
    assert forced["deleted_nodes"] > len(DOCUMENTS)
    count = langchain_like.execute_query("MATCH (d:Document) RETURN count(d) AS n").records[0]["n"]
    assert count == 0


def test_load_sample_then_wipe_asks(driver: Driver, settings: Settings, tmp_path: Path) -> None:
    wipe(driver)
    env = connection_only(settings)
    loaded = run_cli(["load", "--sample", "--no-progress"], env, cwd=tmp_path)
    assert loaded.returncode == 0, loaded.stderr
    assert "loaded" in loaded.stdout and "397 chunks" in loaded.stdout
    migrated = cli_json(["migrate"], settings, tmp_path)
    assert migrated == {"applied": []}  # load migrated already
    states = run_cli(["migrate", "--status", "--json"], env, cwd=tmp_path)
    rows = json.loads(states.stdout)
    assert rows and all(r["state"] in ("applied", "not-for-this-server") for r in rows)
    assert all(r["migration"].startswith("V") for r in rows)
    both = run_cli(["load", "--sample", str(tmp_path)], env, cwd=tmp_path)
    assert "BUNDLE_DIR or --sample" in error_line(both)
    declined = run_cli(["kb", "wipe"], env, cwd=tmp_path, input="n\n")
    assert declined.returncode != 0 and "delete 386 documents, 397 chunks" in declined.stderr
    chunks = driver.execute_query("MATCH (c:Chunk) RETURN count(c) AS n").records[0]["n"]
    assert chunks == 397
    wiped = run_cli(["kb", "wipe", "--json"], env, cwd=tmp_path, input="y\n")
    assert wiped.returncode == 0, wiped.stderr
    assert json.loads(wiped.stdout[wiped.stdout.index("{") :])["deleted_nodes"] > 397
    chunks = driver.execute_query("MATCH (c:Chunk) RETURN count(c) AS n").records[0]["n"]
    assert chunks == 0


def test_adopt_drop_keeps_a_name_key_the_user_had(
    langchain_like: Driver, settings: Settings, tmp_path: Path
) -> None:
    """Issue 34, R7: with ``name_key = "user_key"`` in the mapping and an entity already holding
    ``user_key``, adopt writes the key only on the others, and ``--drop`` removes only those:
    the user's own value survives, and no mark of ours is left behind."""
    mapping = tmp_path / "kg.toml"
    mapping.write_text('base = "langchain"\n\n[entity]\nname_key = "user_key"\n')
    langchain_like.execute_query("MATCH (e:__Entity__ {id: 'Phobos'}) SET e.user_key = 'mine'")
    entities = langchain_like.execute_query("MATCH (e:__Entity__) RETURN count(e) AS n")
    total = int(entities.records[0]["n"])
    adopted = cli_json(["kb", "adopt", "--schema", str(mapping)], settings, tmp_path)
    assert adopted["name_keys_written"] == total - 1
    dropped = cli_json(["kb", "adopt", "--drop"], settings, tmp_path)
    assert dropped["name_keys_removed"] == total - 1
    rows = langchain_like.execute_query(
        "MATCH (e:__Entity__) WHERE e.user_key IS NOT NULL OR e:__GuidedRAGNameKey "
        "RETURN e.id AS id, e.user_key AS key"
    ).records
    assert [r.data() for r in rows] == [{"id": "Phobos", "key": "mine"}]
