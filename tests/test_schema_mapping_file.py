"""Schema mapping without Python: a TOML/JSON file, ``--schema`` / GUIDEDRAG_SCHEMA_FILE, and the
user's own KG from issue 13 used through a file only:
``(:Article)-[:HAS_PART]->(:Passage {pid, content, vec})``,
``(:Passage)-[:ABOUT]->(:Thing {title})``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from neo4j import Driver

from guidedrag_graph.cli import cli
from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.embeddings import Embedder, embedder_for
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.kb.adopt import adopt, unadopt
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.schema.presets import (
    ELEMENT_ID,
    PRESETS,
    SchemaMapping,
    load_schema_file,
    mapping_document,
    schema_from_settings,
    to_toml,
)
from guidedrag_graph.selection.selector import Selector
from guidedrag_graph.templates import queries as templates
from guidedrag_graph.testing.builders_corpus import DOCUMENTS, extract
from tests.conftest import wipe

USER_MAPPING = """\
# The user's own KG (issue 13), mapped without Python.
[document]
label = "Article"
id = "aid"
title = "name"

[chunk]
label = "Passage"
id = "pid"
text = "content"
embedding = "vec"

[entity]
label = "Thing"
id = "title"
name = "title"

[part_of]
type = "HAS_PART"
direction = "in"        # (:Article)-[:HAS_PART]->(:Passage)

[mentions]
type = "ABOUT"
direction = "out"       # (:Passage)-[:ABOUT]->(:Thing)
"""


def _plain_settings(**update: object) -> Settings:
    return Settings(_env_file=None, **update)  # type: ignore[call-arg]


# --- the file format (no database) ----------------------------------------------------------
def test_toml_file_maps_every_name_and_direction(tmp_path: Path) -> None:
    path = tmp_path / "kg.toml"
    path.write_text(USER_MAPPING)
    schema = load_schema_file(path)
    assert schema.preset == "custom"
    assert (schema.chunk_label, schema.chunk_id, schema.chunk_text, schema.chunk_embedding) == (
        "Passage",
        "pid",
        "content",
        "vec",
    )
    pattern = "(c)/*part_of*/-[:PART_OF]->(d), (c)/*mentions*/-[:MENTIONS]->(e)"
    rendered = templates.render(templates.parse(pattern, "t.cypher"), schema)
    assert rendered == "(c)<-[:`HAS_PART`]-(d), (c)-[:`ABOUT`]->(e)"
    entity = (schema.entity_label, schema.entity_id, schema.entity_name)
    assert entity == ("Thing", "title", "title")


def test_json_file_and_a_preset_base(tmp_path: Path) -> None:
    path = tmp_path / "kg.json"
    path.write_text(json.dumps({"base": "neo4j-graphrag-builder", "chunk": {"text": "body"}}))
    schema = load_schema_file(path)
    assert schema.chunk_text == "body"
    assert schema.chunk_id == ELEMENT_ID and schema.mentions_type == "FROM_CHUNK"


def test_a_written_mapping_reads_back_the_same(tmp_path: Path) -> None:
    for preset in PRESETS.values():
        path = tmp_path / f"{preset.preset}.toml"
        path.write_text(to_toml(mapping_document(preset), "round trip"))
        again = load_schema_file(path)
        assert again.model_copy(update={"preset": preset.preset}) == preset


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[chunk]\nlabl = 'X'\n", "unknown key chunk.labl"),
        ("[chunk]\nlabel = ''\n", "chunk_label is empty"),
        ("[entity]\nname = 'elementId()'\n", "only document_id, chunk_id, entity_id"),
        ("[part_of]\ndirection = 'sideways'\n", "part_of_direction"),
        ("chunk = [", "not valid TOML"),
        ("base = 'nope'\n", "unknown schema preset 'nope'"),
    ],
)
def test_bad_mapping_files_are_one_line_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigurationError, match=message) as caught:
        load_schema_file(path)
    assert "\n" not in str(caught.value) and str(path) in str(caught.value)


def test_custom_preset_without_a_file_says_pass_schema() -> None:
    with pytest.raises(ConfigurationError, match=r"--schema FILE") as caught:
        schema_from_settings(_plain_settings(schema_preset="custom"))
    assert "\n" not in str(caught.value)


def test_the_environment_names_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "kg.toml"
    path.write_text(USER_MAPPING)
    monkeypatch.setenv("GUIDEDRAG_SCHEMA_FILE", str(path))
    assert schema_from_settings(_plain_settings()).chunk_label == "Passage"


# --- the user's KG in the real database --------------------------------------------------------
def _build_user_kg(driver: Driver, embedder: Embedder) -> dict[str, str]:
    """The user's layout, written by plain Cypher as their own code would; returns title -> pid."""
    vectors = embedder.embed_passages(list(DOCUMENTS.values()))
    pids: dict[str, str] = {}
    for n, ((title, text), vec) in enumerate(zip(DOCUMENTS.items(), vectors, strict=True)):
        pid = f"p{n + 1}"
        pids[title] = pid
        found = extract(text)
        driver.execute_query(
            "MERGE (a:Article {aid: $aid}) SET a.name = $title "
            "CREATE (a)-[:HAS_PART]->(p:Passage {pid: $pid, content: $text, vec: $vec}) "
            "WITH p UNWIND $things AS thing MERGE (t:Thing {title: thing}) "
            "CREATE (p)-[:ABOUT]->(t)",
            aid=f"a{n + 1}",
            title=title,
            pid=pid,
            text=text,
            vec=[float(x) for x in vec],
            things=[name for name, _ in found.entities],
        )
        for head, rel, tail in found.relations:
            driver.execute_query(
                f"MATCH (h:Thing {{title: $h}}), (t:Thing {{title: $t}}) MERGE (h)-[:{rel}]->(t)",
                h=head,
                t=tail,
            )
    return pids


@pytest.fixture(scope="module")
def embedder(main_settings: Settings) -> Embedder:
    return embedder_for(main_settings)


@pytest.fixture
def user_kg(
    driver: Driver, settings: Settings, embedder: Embedder, tmp_path: Path
) -> tuple[Settings, dict[str, str], Path]:
    wipe(driver)
    pids = _build_user_kg(driver, embedder)
    path = tmp_path / "my-kg.toml"
    path.write_text(USER_MAPPING)
    return settings.model_copy(update={"schema_file": path}), pids, path


@pytest.mark.neo4j
def test_users_kg_through_a_mapping_file_only(
    driver: Driver, user_kg: tuple[Settings, dict[str, str], Path], embedder: Embedder
) -> None:
    configured, pids, _ = user_kg
    schema = schema_from_settings(configured)
    try:
        # Before adopt there is no full-text index: the error says so instead of staying silent.
        unknown = Selector(GraphContext.open(configured, driver)).prepare("entity('Phobso')")
        assert unknown.empty is not None
        assert "full-text index 'entity_names'" in unknown.empty.message
        assert "guidedrag kb adopt" in unknown.empty.message
        # Their own vector index, declared without filter properties.
        driver.execute_query(
            "CREATE VECTOR INDEX passage_vec FOR (p:Passage) ON p.vec OPTIONS {indexConfig: "
            "{`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}}"
        )
        driver.execute_query("CALL db.awaitIndexes(120)")
        report = adopt(driver, configured, schema)
        assert report.vector_index_name == "passage_vec" and not report.vector_index_filtered
        theirs = configured.model_copy(
            update={"vector_index_name": "passage_vec", "planner_exact_max": 0}
        )
        with GuidedRAG(theirs, driver=driver, embedder=embedder) as rag:
            moons = rag.retrieve("Which moons orbit Mars?", "hop('Mars', ['ORBITS'], 1, 'in')")
        # A selection past the exact-ranking size on an index without WITH [p.pid] goes
        # through the index with a post-filter instead of failing inside SEARCH.
        assert moons.path == "index"
        assert sorted(c.id for c in moons.chunks) == sorted([pids["Mars"], pids["Deimos"]])
        assert {c.document_title for c in moons.chunks} == {"Mars", "Deimos"}  # via HAS_PART

        # Without their index, adopt makes one WITH [p.pid] where the server has filters.
        unadopt(driver, configured, schema)
        driver.execute_query("DROP INDEX passage_vec")
        report = adopt(driver, configured, schema)
        tuned = configured.model_copy(update={"planner_exact_max": 0})
        with GuidedRAG(tuned, driver=driver, embedder=embedder) as rag:
            supports = rag.graph.server.supports_search_in_filter
            assert report.vector_index_filtered == supports
            phobos = rag.retrieve("How often does Phobos orbit Mars?", "entity('Phobos')")
            typo = Selector(GraphContext.open(configured, driver)).prepare("entity('Phobso')")
        assert phobos.path == ("search_in" if supports else "index")
        assert [c.id for c in phobos.chunks] == [pids["Mars"]]
        assert phobos.chunks[0].document_title == "Mars"
        assert typo.empty is not None and "did you mean 'Phobos'" in typo.empty.message
    finally:
        wipe(driver)


@pytest.mark.neo4j
def test_cli_inspect_proposes_the_users_mapping_and_adopt_uses_it(
    driver: Driver,
    settings: Settings,
    user_kg: tuple[Settings, dict[str, str], Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, _, mapping_path = user_kg
    monkeypatch.setenv("NEO4J_URI", settings.neo4j_uri)
    monkeypatch.setenv("NEO4J_PASSWORD", settings.neo4j_password.get_secret_value())
    monkeypatch.delenv("GUIDEDRAG_SCHEMA_FILE", raising=False)
    monkeypatch.delenv("GUIDEDRAG_SCHEMA_PRESET", raising=False)
    monkeypatch.chdir(tmp_path)  # no .env of the machine's
    runner = CliRunner()
    try:
        proposed_path = tmp_path / "proposed.toml"
        result = runner.invoke(cli, ["kb", "inspect", "--out", str(proposed_path)])
        assert result.exit_code == 0, result.output
        assert ":Passage" in result.output
        assert "configured mapping: does not fit: preset 'guidedrag' expects :Chunk" in (
            result.output
        )
        proposed = load_schema_file(proposed_path)
        wanted = load_schema_file(mapping_path)
        for name in SchemaMapping.model_fields:
            if name in ("preset", "document_source", "document_date", "chunk_position"):
                continue
            if name.startswith(("entity_", "relation", "generic")) and name not in (
                "entity_label",
                "entity_id",
                "entity_name",
            ):
                continue
            assert getattr(proposed, name) == getattr(wanted, name), name

        result = runner.invoke(cli, ["kb", "adopt"])
        assert result.exit_code != 0
        assert "expects :Chunk chunk nodes, but there are none" in str(result.exception)
        result = runner.invoke(cli, ["kb", "adopt", "--schema", str(mapping_path)])
        assert result.exit_code == 0, result.output
        assert "created index entity_names" in result.output
        result = runner.invoke(cli, ["kb", "adopt", "--drop", "--schema", str(mapping_path)])
        assert result.exit_code == 0 and "dropped index entity_names" in result.output
    finally:
        wipe(driver)


def test_builder_presets_are_for_reading_not_loading() -> None:
    for name in ("neo4j-graphrag-builder", "langchain", "llamaindex"):
        with pytest.raises(ConfigurationError, match="guidedrag kb adopt"):
            PRESETS[name].check_loadable()
    PRESETS["guidedrag"].check_loadable()
    PRESETS["neo4j-graphrag"].check_loadable()
