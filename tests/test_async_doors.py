"""Every door's async form runs on the async core: LangChain ``ainvoke``/``abatch``, LlamaIndex
``aretrieve``, ``GuidedRetriever.asearch`` and the MCP ``retrieve``/``ask`` tools await
``GuidedRAG.aretrieve``/``aask`` on a pipeline opened with ``GuidedRAG.aopen`` (a
``neo4j.AsyncDriver``), and return what ``GuidedRAG.retrieve`` returns.

Real langchain-core, llama-index-core, neo4j-graphrag and the ``mcp`` SDK, the real server and
the sample KB: the same ids and abstentions for stated, bare and abstaining questions; no read
of an async call goes through the sync runner, even when the adapter also holds a sync
pipeline; a 5 ms ticker keeps its ticks during 20 concurrent calls through LangChain and through
LlamaIndex; a form whose kind of pipeline is missing is refused in one line naming the fix.
(MCP over stdio and streamable HTTP: tests/test_mcp_transports.py.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.semantics import merge_stated
from tests.async_rag import kept, on_async_rag, ticker_rounds
from tests.conftest import sample_bundle

pytestmark = pytest.mark.neo4j

UNKNOWN = "No Such Entity Anywhere"
CALLS = 20


@pytest.fixture
def rag(settings: Settings, embedder: Embedder, sample_db: Driver) -> Iterator[GuidedRAG]:
    # Per test, opened after the sample KB is in place: cheap (the KB's state is shared per
    # driver), and it observes the database's version after any reload (context.KBState).
    with GuidedRAG(settings, driver=sample_db, embedder=embedder) as pipeline:
        yield pipeline


def cases() -> list[tuple[str, dict[str, Any]]]:
    """(question, options): three sample questions stated, the same three bare (linked), and
    one stating a name the KB does not know (it abstains)."""
    questions = sample_bundle().questions[:3]
    stated = []
    for q in questions:
        assert q.semantics is not None
        stated.append(
            (
                q.question,
                {"entities": list(q.semantics.entities), "relations": list(q.semantics.relations)},
            )
        )
    bare: list[tuple[str, dict[str, Any]]] = [(q.question, {}) for q in questions]
    return [*stated, *bare, (questions[0].question, {"entities": [UNKNOWN]})]


def expected(rag: GuidedRAG) -> list[tuple[list[str], bool]]:
    """(ids, abstained) of ``GuidedRAG.retrieve`` for every case."""
    out = []
    for question, options in cases():
        semantics = merge_stated(None, options.get("entities"), options.get("relations"))
        result = rag.retrieve(question, semantics=semantics)
        out.append(([c.id for c in result.chunks], result.abstained))
    assert [abstained for _, abstained in out] == [False] * 6 + [True]
    assert all(ids for ids, _ in out[:6])
    return out


# ------------------------------------------------------------------- same ids at every door
def test_langchain_ainvoke_returns_what_retrieve_returns(
    sample_db: Driver, rag: GuidedRAG, settings: Settings
) -> None:
    from guidedrag_graph.integrations.langchain import GuidedLangChainRetriever

    async def run() -> tuple[list[Any], Any]:
        retriever = await GuidedLangChainRetriever.aopen(settings)
        try:
            tool = retriever.convert_to_tool()  # its async form: ainvoke, on the async core
            question, options = cases()[0]
            used = await tool.ainvoke(
                {
                    "type": "tool_call",
                    "id": "1",
                    "name": tool.name,
                    "args": {"question": question, **options},
                }
            )
            return [await retriever.ainvoke(q, **o) for q, o in cases()], used
        finally:
            await retriever.rag.aclose()

    outputs, used = asyncio.run(run())
    got = [([d.id for d in docs], docs.abstained) for docs in outputs]
    assert got == expected(rag)
    assert [d.id for d in used.artifact] == got[0][0] and got[0][0][0] in used.content


def test_llamaindex_aretrieve_returns_what_retrieve_returns(
    sample_db: Driver, rag: GuidedRAG, settings: Settings
) -> None:
    from guidedrag_graph.integrations.llamaindex import GuidedLlamaIndexRetriever

    async def run() -> list[Any]:
        retriever = await GuidedLlamaIndexRetriever.aopen(settings)
        try:
            return [await retriever.aretrieve(q, **o) for q, o in cases()]
        finally:
            await retriever.rag.aclose()

    got = [([n.node.node_id for n in nodes], nodes.abstained) for nodes in asyncio.run(run())]
    assert got == expected(rag)


def test_guided_retriever_asearch_returns_what_retrieve_returns(
    sample_db: Driver, rag: GuidedRAG, settings: Settings
) -> None:
    from neo4j_graphrag.types import RetrieverResult

    from guidedrag_graph.integrations.neo4j_graphrag import GuidedRetriever

    async def run() -> list[RetrieverResult]:
        retriever = await GuidedRetriever.aopen(settings)
        try:
            return [await retriever.asearch(query_text=q, **o) for q, o in cases()]
        finally:
            await retriever.rag.aclose()

    found = asyncio.run(run())
    got = [
        ([item.metadata["id"] for item in r.items], r.metadata["abstained"])  # type: ignore[index]
        for r in found
    ]
    assert got == expected(rag)
    assert all(r.metadata and r.metadata["__retriever"] == "GuidedRetriever" for r in found)


def test_mcp_tools_await_the_async_core(
    sample_db: Driver,
    rag: GuidedRAG,
    settings: Settings,
    embedder: Embedder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The server's ``retrieve`` and ``ask`` (called through the SDK's ``call_tool``) return
    what ``GuidedRAG.retrieve`` returns with no sync read, though the server also holds the
    sync pipeline its other tools use."""
    from guidedrag_graph.cli.mcp_server import build_server

    want = expected(rag)
    _refuse_sync_reads(monkeypatch)

    async def run(arag: GuidedRAG) -> list[Any]:
        server = build_server(rag, arag)
        out = []
        for question, options in cases():
            for tool in ("retrieve", "ask"):
                result = await server.call_tool(tool, {"question": question, **options})
                out.append(result.structured_content)  # type: ignore[union-attr]
        return out

    got = on_async_rag(settings, embedder, run)
    retrieved, asked = got[0::2], got[1::2]
    assert [([c["chunk_id"] for c in r["chunks"]], r["abstained"]) for r in retrieved] == want
    assert [([c["chunk_id"] for c in a["chunks"]], a["abstained"]) for a in asked] == want


# -------------------------------------------------------------------- on the loop, no thread
def _refuse_sync_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    from guidedrag_graph.db import reads as reader

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a sync read in an async door")

    monkeypatch.setattr(reader, "_read_sync", refuse)
    monkeypatch.setattr(reader, "read_query", refuse)


def test_no_read_of_an_async_door_is_sync(
    sample_db: Driver,
    rag: GuidedRAG,
    settings: Settings,
    embedder: Embedder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each adapter holds a sync and an async pipeline; its async forms read only through the
    async one (every read awaited on the loop), on stated, bare and abstaining questions."""
    from guidedrag_graph.integrations.langchain import GuidedLangChainRetriever
    from guidedrag_graph.integrations.llamaindex import GuidedLlamaIndexRetriever
    from guidedrag_graph.integrations.neo4j_graphrag import GuidedRetriever

    want = expected(rag)
    _refuse_sync_reads(monkeypatch)

    async def run(arag: GuidedRAG) -> list[list[Any]]:
        chain = GuidedLangChainRetriever(rag=rag, async_rag=arag)
        index = GuidedLlamaIndexRetriever(rag, async_rag=arag)
        graphrag = GuidedRetriever(rag.driver, rag=rag, async_rag=arag)
        questions = [q for q, _ in cases()]
        configs: list[Any] = [{"configurable": {"guidedrag": o}} for _, o in cases()]
        batch = await chain.abatch(questions, config=configs)
        gathered = await asyncio.gather(*(index.aretrieve(q, **o) for q, o in cases()))
        searched = [await graphrag.asearch(query_text=q, **o) for q, o in cases()]
        return [
            [([d.id for d in docs], docs.abstained) for docs in batch],
            [([n.node.node_id for n in nodes], nodes.abstained) for nodes in gathered],
            [([i.metadata["id"] for i in s.items], s.metadata["abstained"]) for s in searched],
        ]

    for got in on_async_rag(settings, embedder, run):
        assert got == want


def _vector(embedder: Embedder, question: str) -> list[float]:
    return [float(x) for x in embedder.embed_queries([question])[0]]


@pytest.mark.parametrize("door", ["langchain", "llamaindex"])
def test_a_ticker_keeps_its_ticks_during_20_concurrent_calls(
    sample_db: Driver, rag: GuidedRAG, settings: Settings, embedder: Embedder, door: str
) -> None:
    """20 concurrent ``ainvoke``/``aretrieve`` calls (the adapter also holding a sync pipeline,
    the questions already embedded: what is measured is the calls' reads and planning) leave a
    5 ms ticker >= 80% of its ticks, against an idle loop and the bare AsyncDriver."""
    from guidedrag_graph.integrations.langchain import GuidedLangChainRetriever
    from guidedrag_graph.integrations.llamaindex import GuidedLlamaIndexRetriever

    question, options = cases()[0]
    options = {**options, "query_vector": _vector(embedder, question), "k": 5}

    async def run(arag: GuidedRAG) -> list[tuple[float, float, float]]:
        chain = GuidedLangChainRetriever(rag=rag, async_rag=arag)
        index = GuidedLlamaIndexRetriever(rag, async_rag=arag)

        async def one() -> Any:
            if door == "langchain":
                return await chain.ainvoke(question, **options)
            return await index.aretrieve(question, **options)

        warm = (await one()).result  # facts, link index, plugin cache
        driver: Any = arag.graph.driver

        async def calls() -> None:
            results = await asyncio.gather(*(one() for _ in range(CALLS)))
            assert all(r for r in results)

        async def bare() -> None:
            async def read() -> None:
                async with driver.session(database=settings.neo4j_database) as session:
                    await (await session.run(warm.cypher, warm.params)).consume()

            await asyncio.gather(*(read() for _ in range(CALLS)))

        return await ticker_rounds(calls, bare)

    rounds = on_async_rag(settings, embedder, run)
    print(f"ticker rounds ({door}, bare driver, idle):", rounds)
    assert kept(rounds), rounds


# ----------------------------------------------------------------- the missing kind, one line
def test_a_form_without_its_kind_of_pipeline_is_refused_in_one_line(
    sample_db: Driver, rag: GuidedRAG, settings: Settings, embedder: Embedder
) -> None:
    """A sync pipeline is never run for an async call (on a thread or on the loop), nor an
    async one for a sync call: one line naming ``GuidedRAG.aopen`` or ``GuidedRAG(settings)``."""
    from mcp.server.mcpserver.exceptions import ToolError

    from guidedrag_graph.cli.mcp_server import build_server
    from guidedrag_graph.integrations.langchain import GuidedLangChainRetriever
    from guidedrag_graph.integrations.llamaindex import GuidedLlamaIndexRetriever
    from guidedrag_graph.integrations.neo4j_graphrag import GuidedRetriever

    question = cases()[0][0]
    sync_doors = {
        "GuidedLangChainRetriever.ainvoke": GuidedLangChainRetriever(rag=rag).ainvoke(question),
        "GuidedLlamaIndexRetriever.aretrieve": GuidedLlamaIndexRetriever(rag).aretrieve(question),
        "GuidedRetriever.asearch": GuidedRetriever(rag.driver, rag=rag).asearch(
            query_text=question
        ),
    }
    for door, call in sync_doors.items():
        with pytest.raises(ConfigurationError) as caught:
            asyncio.run(call)
        message = str(caught.value)
        assert message.startswith(f"{door} needs a GuidedRAG opened on a neo4j.AsyncDriver")
        assert "GuidedRAG.aopen" in message and "\n" not in message
    with pytest.raises(ToolError) as refused:
        asyncio.run(build_server(rag).call_tool("retrieve", {"question": question}))
    assert str(refused.value).startswith(
        "guidedrag mcp.retrieve needs a GuidedRAG opened on a neo4j.AsyncDriver"
    )

    async def sync_forms(arag: GuidedRAG) -> list[str]:
        out = []
        for door, call in (
            ("GuidedLangChainRetriever.invoke", GuidedLangChainRetriever(rag=arag).invoke),
            ("GuidedLlamaIndexRetriever.retrieve", GuidedLlamaIndexRetriever(arag).retrieve),
        ):
            with pytest.raises(ConfigurationError) as caught:
                call(question)
            out.append(str(caught.value))
            assert out[-1].startswith(f"{door} needs a GuidedRAG opened on a neo4j.Driver"), door
        with pytest.raises(ConfigurationError) as caught:
            GuidedRetriever(arag.graph.driver, rag=arag).search(query_text=question)
        out.append(str(caught.value))
        return out

    for message in on_async_rag(settings, embedder, sync_forms):
        assert "GuidedRAG(settings)" in message and "\n" not in message
