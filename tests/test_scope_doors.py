"""Scopes (issue 35), the doors: every trusted door sets the scope, and every output of a door
stays inside it — the CLI (``--scope``, ``GUIDEDRAG_SCOPE``; retrieve, select, cypher as
printed), the async pipeline, the LangChain, LlamaIndex and neo4j-graphrag adapters, and the
MCP server's tools (whose strict schemas refuse a ``scope`` argument).

Real server, sample KB. The scope is "every document but the one holding the unscoped top
chunk", so that chunk must be absent and every returned chunk in scope.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from neo4j import Driver

from guidedrag_graph.cli import cli
from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.selection import all_, document
from tests.async_rag import on_async_rag
from tests.conftest import sample_bundle
from tests.template_scripts import as_written, browser_params

QUESTION = sample_bundle().questions[0]
ENTITY = QUESTION.semantics.entities[0] if QUESTION.semantics else ""


@pytest.fixture
def rag(settings: Settings, embedder: Embedder, sample_db: Driver) -> Iterator[GuidedRAG]:
    with GuidedRAG(settings, driver=sample_db, embedder=embedder) as pipeline:
        yield pipeline


@pytest.fixture
def case(rag: GuidedRAG) -> tuple[str, str, set[str]]:
    """(the unscoped top chunk, a scope without its document, the chunks of that scope)."""
    top = rag.retrieve(QUESTION.question).chunks[0]
    expr = all_() - document(top.document_id)
    return top.id, expr.to_text(), set(rag.selector.chunk_ids(expr))


def _held(ids: list[str], case: tuple[str, str, set[str]]) -> None:
    top, _, allowed = case
    assert ids and set(ids) <= allowed and top not in ids, ids


# --------------------------------------------------------------------------- CLI
@pytest.fixture
def runner(
    sample_db: Driver, settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> CliRunner:
    monkeypatch.chdir(tmp_path)  # no .env from the checkout
    monkeypatch.setenv("NEO4J_URI", settings.neo4j_uri)
    monkeypatch.setenv("NEO4J_PASSWORD", settings.neo4j_password.get_secret_value())
    monkeypatch.setenv("NEO4J_DATABASE", settings.neo4j_database)
    return CliRunner()


def test_cli_doors_hold_the_scope(
    runner: CliRunner,
    sample_db: Driver,
    case: tuple[str, str, set[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, scope, allowed = case
    out = runner.invoke(cli, ["retrieve", QUESTION.question, "--scope", scope, "--json"])
    assert out.exit_code == 0, out.output
    _held([c["id"] for c in json.loads(out.output)["chunks"]], case)
    # the request's own selection cannot widen it
    out = runner.invoke(
        cli, ["retrieve", QUESTION.question, "--scope", scope, "--select", "all()", "--json"]
    )
    _held([c["id"] for c in json.loads(out.output)["chunks"]], case)
    # select: ids and sizes inside the scope
    out = runner.invoke(cli, ["select", "all()", "--scope", scope, "--json", "--max-ids", "0"])
    assert out.exit_code == 0, out.output
    selected = json.loads(out.output)
    assert set(selected["chunk_ids"]) == allowed and selected["tree"]["size"] == len(allowed)
    # cypher: the default ranking's script, as printed, returns the scoped ranking's ids
    out = runner.invoke(cli, ["cypher", "--question", QUESTION.question, "--scope", scope])
    assert out.exit_code == 0, out.output
    script = out.output
    assert "scope_u" in script and ":param scp_" in script
    rows = [
        r["id"]
        for statement in as_written(script)
        for r in sample_db.execute_query(statement, browser_params(sample_db, script)).records
    ]
    _held(rows, case)
    # GUIDEDRAG_SCOPE is the deployment's: the same, without --scope
    monkeypatch.setenv("GUIDEDRAG_SCOPE", scope)
    out = runner.invoke(cli, ["retrieve", QUESTION.question, "--json"])
    _held([c["id"] for c in json.loads(out.output)["chunks"]], case)


def test_a_bad_scope_is_one_line_naming_the_door(tmp_path: Path) -> None:
    from tests.cli_run import clean_env, run_cli

    done = run_cli(
        ["retrieve", "Who?", "--scope", "near('Rome')"],
        clean_env({"NEO4J_URI": "bolt://127.0.0.1:1", "NEO4J_PASSWORD": "not-the-default"}),
        cwd=tmp_path,
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode != 0 and len(lines) == 1, done.stderr
    assert "--scope" in lines[0] and "near()" in lines[0] and "document()" in lines[0]


# --------------------------------------------------------------------------- async
def test_the_async_doors_hold_the_scope(
    settings: Settings, embedder: Embedder, case: tuple[str, str, set[str]]
) -> None:
    _, scope, _ = case

    async def run(arag: GuidedRAG) -> list[list[str]]:
        view = arag.scoped(scope)
        got = [[c.id for c in (await view.aretrieve(QUESTION.question)).chunks]]
        answer = await view.aask(QUESTION.question, selection="all()")
        got.append([c.id for c in answer.retrieval.chunks])
        return got

    for ids in on_async_rag(settings, embedder, run):
        _held(ids, case)

    async def opened() -> list[str]:
        async with await GuidedRAG.aopen(settings, embedder=embedder, scope=scope) as arag:
            return [c.id for c in (await arag.aretrieve(QUESTION.question)).chunks]

    _held(asyncio.run(opened()), case)


# --------------------------------------------------------------------------- adapters
def test_langchain_and_llamaindex_hold_their_scope(
    rag: GuidedRAG, settings: Settings, embedder: Embedder, case: tuple[str, str, set[str]]
) -> None:
    from guidedrag_graph.integrations.langchain import GuidedLangChainRetriever
    from guidedrag_graph.integrations.llamaindex import GuidedLlamaIndexRetriever

    _, scope, _ = case
    chain = GuidedLangChainRetriever(rag=rag, scope=scope)
    assert rag.scope is None and chain.rag.scope is not None
    _held([d.id for d in chain.invoke(QUESTION.question)], case)
    _held([d.id for d in chain.invoke(QUESTION.question, selection="all()")], case)
    _held([d.id for d in chain.invoke(QUESTION.question, filters={"position": {"$gte": 0}})], case)
    llama = GuidedLlamaIndexRetriever(rag, scope=scope)
    _held([n.node.node_id for n in llama.retrieve(QUESTION.question)], case)
    _held([n.node.node_id for n in llama.retrieve(QUESTION.question, selection="all()")], case)

    async def run(arag: GuidedRAG) -> list[list[str]]:
        docs = await GuidedLangChainRetriever(rag=rag, async_rag=arag, scope=scope).ainvoke(
            QUESTION.question
        )
        nodes = await GuidedLlamaIndexRetriever(arag, scope=scope).aretrieve(QUESTION.question)
        return [[d.id for d in docs], [n.node.node_id for n in nodes]]

    for ids in on_async_rag(settings, embedder, run):
        _held(ids, case)


def test_neo4j_graphrag_doors_hold_their_scope(
    rag: GuidedRAG, sample_db: Driver, case: tuple[str, str, set[str]]
) -> None:
    from guidedrag_graph.integrations.graphrag_answer import GuidedGraphRAG
    from guidedrag_graph.integrations.neo4j_graphrag import GuidedRetriever

    _, scope, _ = case
    retriever = GuidedRetriever(sample_db, rag=rag, scope=scope)
    ids = [i.metadata["id"] for i in retriever.search(query_text=QUESTION.question).items]
    _held(ids, case)
    wide = retriever.search(
        query_text=QUESTION.question, selection="all()", filters={"position": {"$gte": 0}}
    )
    _held([i.metadata["id"] for i in wide.items], case)
    plain = GuidedRetriever(sample_db, rag=rag)
    narrowed = plain.scoped(scope)
    assert plain.rag.scope is None and narrowed.rag.scope == retriever.rag.scope
    # GraphRAG's door: an empty scope abstains without the LLM (nothing listens at its URL)
    from neo4j_graphrag.llm import OpenAILLM

    model = OpenAILLM(model_name="none", base_url="http://127.0.0.1:1/v1", api_key="none")
    empty = GuidedGraphRAG(plain, model, scope="document('No Such Document Anywhere')")
    done = empty.search(QUESTION.question)
    assert done.abstained and not done.llm_called and "scope" in (done.reason or "")
    assert plain.rag.scope is None  # the retriever given was not changed


# --------------------------------------------------------------------------- MCP
def test_mcp_tools_hold_the_servers_scope(
    rag: GuidedRAG,
    settings: Settings,
    embedder: Embedder,
    sample_db: Driver,
    case: tuple[str, str, set[str]],
) -> None:
    from guidedrag_graph.cli.mcp_server import build_server

    _, scope, allowed = case
    view = rag.scoped(scope)

    async def run(arag: GuidedRAG) -> list[Any]:
        server = build_server(view, arag)  # the async pipeline given unscoped: narrowed
        calls: list[tuple[str, dict[str, Any]]] = [
            ("retrieve", {"question": QUESTION.question}),
            ("retrieve", {"question": QUESTION.question, "selection": "all()"}),
            ("ask", {"question": QUESTION.question, "steering": "soft", "selection": "all()"}),
            ("select", {"expression": "all()", "max_ids": 10_000}),
            ("cypher", {"expression": "all()"}),
        ]
        done = [await server.call_tool(name, args) for name, args in calls]
        with pytest.raises(Exception, match="unknown argument 'scope'"):  # no tool takes one
            await server.call_tool("retrieve", {"question": QUESTION.question, "scope": "all()"})
        return done

    out = on_async_rag(settings, embedder, run)
    for result in out[:3]:
        _held([c["chunk_id"] for c in result.structured_content["chunks"]], case)
    selected = out[3].structured_content
    assert set(selected["chunk_ids"]) == allowed
    script = "\n".join(b.text for b in out[4].content if hasattr(b, "text"))
    assert "scope_u" in script
    rows = [
        r["chunk_id"]
        for statement in as_written(script)
        for r in sample_db.execute_query(statement, browser_params(sample_db, script)).records
    ]
    assert set(rows) == allowed
