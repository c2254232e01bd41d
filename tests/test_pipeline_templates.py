"""Every retrieval/augmentation/tagging template runs as-is, the way Neo4j Browser would run it.

Browser evaluates each ``:param name => expression`` line, then runs the rest of the file (slot
comments included: Cypher ignores them); we do the same against the real server (on the tiny KB),
so a template cannot drift from its header. The selection templates have their own such test
(test_selection_templates.py).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from click.testing import CliRunner
from neo4j import Driver, Record
from neo4j.graph import Node, Relationship

from guidedrag_graph.cli import cli
from guidedrag_graph.config import Settings
from guidedrag_graph.db import server_info
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.resources import cypher_template
from guidedrag_graph.retrieval.filters import compile_filter
from guidedrag_graph.schema import PRESETS
from guidedrag_graph.templates import query

pytestmark = pytest.mark.neo4j

_PARAM = re.compile(r"^:param\s+(\w+)\s*=>\s*(.+?);?\s*$", re.M)

TEMPLATES = [
    "selection_size",
    "retrieve_exact",
    "retrieve_index",
    "retrieve_search",
    "retrieve_search_in",
    "selection_members",
    "augmentation",
    "tag_fulltext",
    "tag_resolve",
    "entity_name_embeddings",
    "selection_chunks",
    "retrieve_filter",
    "retrieve_filter_tiers",
    "eval_entity_edges",
    "property_keys",
    "vector_index_filters",
    # the rank plugin's (the test server has it, see conftest)
    "retrieve_plugin",
    "procedure_listed",
    "rank_plugin_cache",
    # the package's own bookkeeping and inspection
    "selection_ids",
    "selection_boosts",
    "selection_given",
    "server_version",
    "connection_check",
    "await_indexes",
    "migration_records",
    "kb_stats",
    "kb_stats_relations",
    "kb_stats_indexes",
]
# Templates that write: run as written in a transaction that is rolled back.
WRITES = ["migration_record_write", "kb_wipe", "memory_graph_load"]
RETRIEVE = ["retrieve_exact", "retrieve_index", "retrieve_search", "retrieve_search_in"]
_COLUMNS = re.compile(r"^// Columns[^:]*:\s*([^(.\n]*)", re.M)
NEEDS_SEARCH = {"retrieve_search", "retrieve_search_in"}


def browser_params(driver: Driver, text: str) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for name, expression in _PARAM.findall(text):
        params[name] = driver.execute_query(f"RETURN {expression} AS v").records[0]["v"]
    return params


def as_written(text: str) -> list[str]:
    """The file's statements as Browser runs them, split at a ``;`` that ends a line: without
    the ``:param`` and full-line comment lines, with everything else (slot comments included)."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith((":param", "//"))]
    statements = [s.strip() for s in re.split(r";[ \t]*$", "\n".join(lines), flags=re.M)]
    return [s for s in statements if s]


def documented_columns(text: str) -> list[str] | None:
    documented = _COLUMNS.search(text)
    if not documented:
        return None
    columns = [c.strip() for c in documented.group(1).split(",")]
    return [] if columns == ["none"] else columns


@pytest.mark.parametrize("name", TEMPLATES)
def test_template_runs_as_written(
    name: str,
    tiny_kb: Driver,
    settings: Settings,
) -> None:
    text = cypher_template(name)
    assert text.startswith("//"), "each template opens with a comment saying why it exists"
    if name in NEEDS_SEARCH and not server_info(tiny_kb).supports_search_clause:
        pytest.skip("SEARCH needs Neo4j 2026.01+ (5.26 uses retrieve_index)")
    params = browser_params(tiny_kb, text)
    statements = as_written(text)
    assert statements, name
    results = [tiny_kb.execute_query(statement, params) for statement in statements]
    for statement, result in zip(statements, results, strict=True):
        if documented_columns(text) is not None:
            assert result.keys == documented_columns(text), (name, statement)
        for record in result.records:
            assert_no_raw_vectors(record, name)
    records = results[0].records
    if name == "selection_size":
        assert records[0]["selection_size"] == 0  # the example ids are not in the tiny KB
    if name == "procedure_listed":
        assert records[0]["listed"] is True
    if name == "retrieve_plugin":
        params["sel_chunk_ids"] = ["ada-1", "ada-2"]
        rows = tiny_kb.execute_query(statements[0], params).records
        assert sorted(r["id"] for r in rows) == ["ada-1", "ada-2"]
    if name == "augmentation":
        params["chunk_ids"] = ["ada-1"]
        row = tiny_kb.execute_query(statements[0], params).records[0]
        assert {(t["head"], t["type"], t["tail"]) for t in row["triplets"]} >= {
            ("Ada Lovelace", "BORN_IN", "London"),
            ("Ada Lovelace", "CHILD_OF", "Lord Byron"),
        }


def assert_no_raw_vectors(record: Record, where: str) -> None:
    """Browser shows ids, titles, text and scores: no node (with its embedding), no vector."""
    for key, value in record.items():
        assert not isinstance(value, (Node, Relationship)), (where, key)
        is_vector = isinstance(value, list) and len(value) > 16
        assert not (is_vector and all(isinstance(x, float) for x in value)), (where, key)


@pytest.fixture
def cli_env(
    tiny_kb: Driver,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: object,
) -> CliRunner:
    monkeypatch.chdir(str(tmp_path))  # no .env from the checkout
    monkeypatch.setenv("NEO4J_URI", settings.neo4j_uri)
    monkeypatch.setenv("NEO4J_PASSWORD", settings.neo4j_password.get_secret_value())
    monkeypatch.setenv("NEO4J_DATABASE", settings.neo4j_database)
    monkeypatch.setenv("GUIDEDRAG_SCHEMA_PRESET", "guidedrag")
    return CliRunner()


def script_params(driver: Driver, script: str) -> tuple[dict[str, Any], str]:
    """A `guidedrag cypher` script as Browser runs it: its :param values, then its one query."""
    params = browser_params(driver, script)
    body = "\n".join(line for line in script.splitlines() if not line.startswith((":param", "//")))
    return params, body.strip().rstrip(";")


def test_cypher_question_script_ranks_like_guidedrag_and_feeds_every_retrieve_template(
    cli_env: CliRunner,
    tiny_kb: Driver,
    settings: Settings,
    embedder: Embedder,
) -> None:
    question = "Who was the father of Ada Lovelace?"
    expression = "entity('Ada Lovelace') | entity('Lord Byron')"
    out = cli_env.invoke(cli, ["cypher", expression, "--question", question, "-k", "3"])
    assert out.exit_code == 0, out.output
    assert ":param query_vector => [" in out.output
    params, query = script_params(tiny_kb, out.output)
    assert len(params["query_vector"]) == embedder.dimensions
    assert params["with_embedding"] is False and params["fetch_k"] == 3
    assert sorted(params["sel_chunk_ids"]) == ["ada-1", "ada-2", "byron-1"]

    with GuidedRAG(settings, driver=tiny_kb, embedder=embedder) as rag:
        guided = rag.retrieve(question, expression, k=3, path="exact", steering="hard")
        base = rag.retrieve(question, k=3)
    expected = [c.id for c in guided.chunks]
    assert len(expected) == 3

    rows = tiny_kb.execute_query(query, params).records
    assert [r["id"] for r in rows] == expected  # the script as printed
    for row in rows:
        assert_no_raw_vectors(row, "cypher --question")
        assert row["document_title"] and row["text"] and row["embedding"] is None

    # Every shipped retrieve_* template, its own :param lines then the script's on top.
    search = server_info(tiny_kb).supports_search_clause
    for name in RETRIEVE:
        if name in NEEDS_SEARCH and not search:
            continue
        text = cypher_template(name)
        merged = {**browser_params(tiny_kb, text), **params}
        ranked = [r["id"] for r in tiny_kb.execute_query(as_written(text)[0], merged).records]
        want = (
            [c.id for c in base.chunks]
            if name in ("retrieve_index", "retrieve_search")
            else (expected)
        )
        assert ranked == want, name


def test_cypher_script_shows_ids_titles_and_text(
    cli_env: CliRunner,
    tiny_kb: Driver,
) -> None:
    out = cli_env.invoke(cli, ["cypher", "entity('Charles Babbage')"])
    assert out.exit_code == 0, out.output
    assert "RETURN c AS" not in out.output and "query_vector" not in out.output
    params, query = script_params(tiny_kb, out.output)
    rows = tiny_kb.execute_query(query, params).records
    assert [(r["chunk_id"], r["document_title"]) for r in rows] == [
        ("ada-2", "Ada Lovelace"),
        ("babbage-1", "Charles Babbage"),
        ("babbage-2", "Charles Babbage"),
    ]
    for row in rows:
        assert_no_raw_vectors(row, "cypher")


@pytest.mark.parametrize("name", WRITES)
def test_write_template_runs_as_written(
    name: str,
    tiny_kb: Driver,
) -> None:
    text = cypher_template(name)
    params = browser_params(tiny_kb, text)
    with tiny_kb.session() as session, session.begin_transaction() as tx:
        for statement in as_written(text):
            assert list(tx.run(statement, params).keys()) == documented_columns(text), name
        tx.rollback()


def test_rendering_maps_the_default_schema_onto_neo4j_graphrag() -> None:
    schema = PRESETS["neo4j-graphrag"]
    out = query("augmentation", schema)
    assert "(c:`Chunk`)<-[:`FROM_CHUNK`]-(e:`__Entity__`)" in out
    assert "`MENTIONS`" not in out and ":`Entity`" not in out
    out = query("retrieve_exact", schema)
    assert "[:`FROM_DOCUMENT`]" in out and "`PART_OF`" not in out
    assert "vector.similarity.cosine(c.`embedding`, $query_vector)" in out
    condition = compile_filter({"index": {"$lte": 1}}).condition
    assert "c.`index` <= $flt_0" in query("retrieve_filter", schema, selection=condition)
    assert "e.`name` AS name" in query("tag_fulltext", schema)
