"""Every template in cypher/, in every variant it declares, runs as-is, the way Neo4j Browser
would run it (``templates.browser_script``: the file for one choice of variants).

Browser evaluates each ``:param name => expression`` line, then runs the rest of the file (slot
comments included: Cypher ignores them); we do the same against the real server (on the tiny KB),
so a template cannot drift from its header. The file list is the glob of cypher/ (no hand list);
the selection templates run on the sample KB in test_selection_templates.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner
from neo4j import Driver, Record
from neo4j.graph import Node, Relationship

from guidedrag_graph.cli import cli
from guidedrag_graph.config import Settings
from guidedrag_graph.db.connection import server_info
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.retrieval.filters import compile_filter
from guidedrag_graph.schema.presets import PRESETS
from guidedrag_graph.templates.queries import browser_script, query
from tests.template_scripts import (
    NAMES,
    as_written,
    browser_params,
    case_id,
    cases,
    documented_columns,
)

pytestmark = pytest.mark.neo4j

# The selection templates run on the sample KB in test_selection_templates.py (same glob).
SELECTION = ("select_", "set_", "resolve_", "relation_type", "suggest_entities")
CASES = cases([n for n in NAMES if not n.startswith(SELECTION)])
# Why a file is not run in a rolled-back transaction like every other one (each must say why):
NOT_IN_A_TRANSACTION = {
    "show_databases": "runs on the system database",
}
# Files whose rows carry vectors by design (Browser shows ids, titles, text and scores only).
RAW_VECTORS = {
    "eval_chunk_graph": "the evaluation's peers read every chunk's embedding",
    "conformance_snapshot": "the retrieval conformance reference ranks the stored vectors itself",
}
# Variants a server lacks the feature for (the retriever never picks them there).
NEEDS = {
    "search": lambda info: info.supports_search_clause,
    "search_in": lambda info: info.supports_search_in_filter,
}
RETRIEVE = [
    ("retrieve_exact", {"rank": "cypher"}),
    ("retrieve_exact", {"rank": "plugin"}),
    ("retrieve_search", {"u_search": "search"}),
    ("retrieve_search", {"u_search": "index"}),
    ("retrieve_search_in", {}),
]


def runnable(info: Any, name: str, variant: dict[str, str]) -> bool:
    """Whether this server has what the script uses (SEARCH: 2026.01+, filtered: 2026.06+)."""
    script = browser_script(name, variant)
    if "SEARCH c IN" in script and " WHERE " in script.split("SEARCH c IN", 1)[1].split(")")[0]:
        return bool(NEEDS["search_in"](info))
    return "SEARCH " not in script or bool(NEEDS["search"](info))


def test_every_template_and_variant_is_covered() -> None:
    """The glob is the list: every file, every declared variant (the selection files are
    test_selection_templates.py's)."""
    assert len(CASES) > 90
    assert (
        "retrieve_boost",
        {"u_search": "index", "rank_tiers": "plugin", "scope": "exact"},
    ) in CASES
    assert (
        "retrieve_boost",
        {"u_search": "search", "rank_tiers": "cypher", "scope": "index"},
    ) in CASES
    assert (
        "retrieve_boost",
        {"u_search": "search", "rank_tiers": "plugin", "scope": "property"},
    ) in CASES
    assert ("scope_search", {}) in CASES
    assert ("load_relations", {"mode": "property", "write": "no_chunk"}) in CASES


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_template_runs_as_written(
    case: tuple[str, dict[str, str]],
    tiny_kb: Driver,
    settings: Settings,
) -> None:
    name, variant = case
    text = browser_script(name, variant)
    assert text.startswith("//"), "each template opens with a comment saying why it exists"
    if not runnable(server_info(tiny_kb), name, variant):
        pytest.skip(f"{case_id(case)} needs a newer server (the retriever picks another variant)")
    params = browser_params(tiny_kb, text)
    statements = as_written(text)
    assert statements, name
    results = []
    if name in NOT_IN_A_TRANSACTION:
        for statement in statements:
            records, _, keys = tiny_kb.execute_query(statement, params, database_="system")
            results.append((keys, records))
    else:
        # Browser would commit a write; here each file runs as written, then is rolled back.
        with tiny_kb.session() as session, session.begin_transaction() as tx:
            for statement in statements:
                result = tx.run(statement, params)
                records = list(result)
                results.append((list(result.keys()), records))
            tx.rollback()
    for statement, (keys, records) in zip(statements, results, strict=True):
        if documented_columns(text) is not None:
            assert keys == documented_columns(text), (case_id(case), statement)
        for record in records if name not in RAW_VECTORS else ():
            assert_no_raw_vectors(record, name)
    records = results[0][1]
    if name == "selection_size":
        assert records[0]["selection_size"] == 0  # the example ids are not in the tiny KB
    if name == "procedure_listed":  # the example name is the rank procedure, not a function
        assert records[0]["listed"] is (case[1].get("kind") != "function"), case_id(case)
    if name == "retrieve_exact":
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

    # Every retrieve_* ranking variant, its own :param lines then the script's on top.
    info = server_info(tiny_kb)
    for name, variant in RETRIEVE:
        if not runnable(info, name, variant):
            continue
        text = browser_script(name, variant)
        merged = {**browser_params(tiny_kb, text), **params}
        ranked = [r["id"] for r in tiny_kb.execute_query(as_written(text)[0], merged).records]
        want = [c.id for c in base.chunks] if name == "retrieve_search" else expected
        assert ranked == want, case_id((name, variant))


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
