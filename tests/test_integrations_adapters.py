"""The LangChain, LlamaIndex and MCP adapters run exactly what ``GuidedRAG.retrieve`` runs.

The real libraries (langchain-core, llama-index-core, the official ``mcp`` SDK's stdio client
spawning ``python -m guidedrag_graph.cli mcp``) against the real server and the sample KB: for
five sample questions, with their semantics and bare, every adapter returns the chunk ids
``GuidedRAG.retrieve`` returns, in its order.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.semantics import Semantics
from tests.async_rag import on_async_rag
from tests.cli_run import clean_env
from tests.conftest import REPO_ROOT, sample_bundle

pytestmark = pytest.mark.neo4j

QUESTIONS = 5


def cases() -> list[tuple[str, list[str], list[str]]]:
    """(question, entities, relations) of the first sample questions: what every adapter can
    state (the MCP tool takes entity and relation names)."""
    out = []
    for q in sample_bundle().questions[:QUESTIONS]:
        assert q.semantics is not None
        out.append((q.question, list(q.semantics.entities), list(q.semantics.relations)))
    return out


def semantics_of(entities: list[str], relations: list[str]) -> Semantics:
    return Semantics(
        entities=tuple(entities), relations=tuple(relations), relational=bool(relations)
    )


@pytest.fixture
def rag(settings: Settings, embedder: Embedder, sample_db: Driver) -> Iterator[GuidedRAG]:
    # Per test, opened after the sample KB is in place: cheap (the KB's state is shared per
    # driver), and it observes the database's version after any reload (context.KBState).
    with GuidedRAG(settings, driver=sample_db, embedder=embedder) as pipeline:
        yield pipeline


def expected(rag: GuidedRAG) -> list[list[str]]:
    """GuidedRAG.retrieve's ids: each question with its semantics, then bare."""
    with_semantics = [
        [c.id for c in rag.retrieve(q, semantics=semantics_of(e, r)).chunks] for q, e, r in cases()
    ]
    bare = [[c.id for c in rag.retrieve(q).chunks] for q, _, _ in cases()]
    assert all(with_semantics) and all(bare)
    return with_semantics + bare


def test_langchain_retriever_returns_what_guidedrag_retrieves(
    sample_db: Driver, rag: GuidedRAG, embedder: Embedder, settings: Settings
) -> None:
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

    from guidedrag_graph.integrations.langchain import GuidedLangChainRetriever

    retriever = GuidedLangChainRetriever(rag=rag)
    assert isinstance(retriever, BaseRetriever)
    got = [
        [
            d.metadata["chunk_id"]
            for d in retriever.invoke(
                q, semantics={"entities": e, "relations": r, "relational": bool(r)}
            )
        ]
        for q, e, r in cases()
    ]
    got += [[d.id for d in retriever.invoke(q)] for q, _, _ in cases()]
    assert got == expected(rag)

    question, entities, relations = cases()[0]
    docs = on_async_rag(  # ainvoke: on a pipeline opened with GuidedRAG.aopen
        settings,
        embedder,
        lambda arag: GuidedLangChainRetriever(rag=rag, async_rag=arag).ainvoke(
            question, semantics=semantics_of(entities, relations)
        ),
    )
    assert [d.id for d in docs] == got[0]
    first = docs[0]
    assert isinstance(first, Document) and first.page_content
    meta = first.metadata
    assert meta["chunk_id"] == first.id and meta["rank"] == 1
    assert meta["document_id"] and meta["document_title"]
    assert meta["steering"] == "auto" and meta["selection"] and meta["tier"] is not None
    assert 0.0 <= meta["score"] <= 1.0 and -1.0 <= meta["cosine"] <= 1.0
    # per call, or fixed on the retriever: k
    assert len(retriever.invoke(question, k=2)) == 2
    assert len(GuidedLangChainRetriever(rag=rag, k=3).invoke(question)) == 3
    # an unknown name abstains: no document, the reason on this call's own list
    abstained = retriever.invoke(question, entities=["No Such Entity Anywhere"])
    assert abstained == [] and abstained.abstained and abstained.reason  # type: ignore[attr-defined]


def test_langchain_embeddings_keep_the_query_passage_sides(embedder: Embedder) -> None:
    from langchain_core.embeddings import Embeddings

    from guidedrag_graph.integrations.langchain import GuidedEmbeddings

    adapter = GuidedEmbeddings(embedder)
    assert isinstance(adapter, Embeddings)
    text = "The euro is the currency of France."
    assert adapter.embed_query(text) == pytest.approx(list(embedder.embed_queries([text])[0]))
    assert adapter.embed_documents([text])[0] == pytest.approx(
        list(embedder.embed_passages([text])[0])
    )
    assert adapter.embed_query(text) != pytest.approx(adapter.embed_documents([text])[0])


def test_llamaindex_retriever_returns_what_guidedrag_retrieves(
    sample_db: Driver, rag: GuidedRAG, settings: Settings, embedder: Embedder
) -> None:
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle

    from guidedrag_graph.integrations.llamaindex import GuidedLlamaIndexRetriever

    retriever = GuidedLlamaIndexRetriever(rag)
    assert isinstance(retriever, BaseRetriever)
    got = [
        [
            n.node.node_id
            for n in retriever.retrieve(
                q, entities=e, semantics={"relations": r, "relational": bool(r)}
            )
        ]
        for q, e, r in cases()
    ]
    got += [[n.node.node_id for n in retriever.retrieve(QueryBundle(q))] for q, _, _ in cases()]
    assert got == expected(rag)

    question, entities, relations = cases()[0]
    nodes = on_async_rag(  # aretrieve: on a pipeline opened with GuidedRAG.aopen
        settings,
        embedder,
        lambda arag: GuidedLlamaIndexRetriever(arag).aretrieve(
            question, semantics=semantics_of(entities, relations)
        ),
    )
    assert [n.node.node_id for n in nodes] == got[0]
    assert all(isinstance(n, NodeWithScore) for n in nodes)
    scores = [n.score for n in nodes]
    assert scores == sorted(scores, reverse=True)  # the ranking score: our order survives a sort
    meta = nodes[0].node.metadata
    assert meta["chunk_id"] == nodes[0].node.node_id and meta["document_title"]
    assert meta["tier"] is not None and meta["selection"]
    fixed = GuidedLlamaIndexRetriever(rag, k=2, semantics=semantics_of(entities, relations))
    assert [n.node.node_id for n in fixed.retrieve(question)] == got[0][:2]


def test_llamaindex_embedding_keeps_the_query_passage_sides(embedder: Embedder) -> None:
    from llama_index.core.base.embeddings.base import BaseEmbedding

    from guidedrag_graph.integrations.llamaindex import GuidedEmbedding

    adapter = GuidedEmbedding(embedder)
    assert isinstance(adapter, BaseEmbedding)
    text = "The euro is the currency of France."
    assert adapter.get_query_embedding(text) == pytest.approx(
        list(embedder.embed_queries([text])[0])
    )
    assert adapter.get_text_embedding(text) == pytest.approx(
        list(embedder.embed_passages([text])[0])
    )
    assert asyncio.run(adapter.aget_query_embedding(text)) == adapter.get_query_embedding(text)


# --------------------------------------------------------------------------- MCP over stdio
def mcp_env(settings: Settings) -> dict[str, str]:
    env = clean_env(
        {
            "NEO4J_URI": settings.neo4j_uri,
            "NEO4J_PASSWORD": settings.neo4j_password.get_secret_value(),
            "PYTHONPATH": str(REPO_ROOT),
        }
    )
    return {k: v for k, v in env.items() if k in os.environ or k.startswith(("NEO4J_", "PYTHON"))}


async def _mcp_session(
    settings: Settings, cwd: Path, calls: list[tuple[str, dict[str, Any]]]
) -> tuple[list[Any], list[Any]]:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "guidedrag_graph.cli", "mcp"],
        env=mcp_env(settings),
        cwd=cwd,
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = (await session.list_tools()).tools
        results = [await session.call_tool(name, arguments) for name, arguments in calls]
    return tools, results


def _data(result: Any) -> Any:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        content = result.structured_content
        return content.get("result", content) if set(content) == {"result"} else content
    return json.loads(result.content[0].text)


def _counts(driver: Driver) -> tuple[int, int, int]:
    record = driver.execute_query(
        "CALL () { MATCH (n) RETURN count(n) AS nodes } "
        "CALL () { MATCH ()-[r]->() RETURN count(r) AS rels } "
        "CALL () { SHOW INDEXES YIELD name RETURN count(name) AS indexes } "
        "RETURN nodes, rels, indexes"
    ).records[0]
    return record["nodes"], record["rels"], record["indexes"]


def test_mcp_server_tools_over_stdio(
    sample_db: Driver, rag: GuidedRAG, settings: Settings, tmp_path: Path
) -> None:
    before = _counts(sample_db)
    entity = cases()[0][1][0]
    calls: list[tuple[str, dict[str, Any]]] = [
        ("retrieve", {"question": q, "entities": e, "relations": r}) for q, e, r in cases()
    ]
    calls += [("retrieve", {"question": q}) for q, _, _ in cases()]
    calls += [
        ("select", {"expression": f"entity({json.dumps(entity)})"}),
        ("cypher", {"expression": f"entity({json.dumps(entity)})"}),
        ("suggest_entities", {"text": entity[:-1]}),
        ("ask", {"question": cases()[0][0], "entities": [entity]}),
        ("retrieve", {"question": "Who?", "entities": ["No Such Entity Anywhere"]}),
        ("select", {"expression": "entity('unclosed"}),
    ]
    tools, results = asyncio.run(_mcp_session(settings, tmp_path, calls))

    assert sorted(t.name for t in tools) == [
        "ask",
        "cypher",
        "retrieve",
        "select",
        "suggest_entities",
    ]
    for tool in tools:
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
        assert tool.description and len(tool.description) > 40
        for name, prop in tool.input_schema["properties"].items():
            assert prop.get("description"), (tool.name, name)
    retrieve_schema = next(t for t in tools if t.name == "retrieve").input_schema["properties"]
    assert {"integer"} <= {
        s.get("type") for s in retrieve_schema["k"].get("anyOf", [retrieve_schema["k"]])
    }

    ids = [[c["chunk_id"] for c in _data(r)["chunks"]] for r in results[: 2 * QUESTIONS]]
    assert ids == expected(rag)
    selected, script, suggested, answer, abstained, bad = results[2 * QUESTIONS :]
    sel = _data(selected)
    assert sel["size"] == len(sel["chunk_ids"]) > 0 and sel["tree"]
    text = script.content[0].text
    assert ":param" in text and "MATCH" in text
    assert entity in _data(suggested)
    ans = _data(answer)
    assert ans["abstained"] is False and ans["prompt"] and ans["chunks"]
    empty = _data(abstained)
    assert empty["abstained"] is True and empty["chunks"] == []
    assert bad.is_error and "unterminated string" in bad.content[0].text
    assert _counts(sample_db) == before  # read-only: nothing written by any tool
