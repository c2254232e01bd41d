"""``guidedrag mcp`` over both transports, strict in and typed out, with the SDK's own client.

The official ``mcp`` SDK's ``ClientSession`` talks to the real server process — spawned over
stdio, and started with ``--transport streamable-http`` on a free port and reached over HTTP —
against the real Neo4j and the sample KB. The same calls go through both: the input schemas
refuse what they do not name (``"entity"`` for ``"entities"``) in one line, bad values too and
in the core's words, the output schemas list their fields, and each result carries its own
abstention, linked names, tier sizes and steering. ``retrieve`` and ``ask`` run on the async
core in both (the server opens a ``GuidedRAG`` with ``aopen`` on its event loop) and return the
ids ``GuidedRAG.retrieve`` returns: stated, bare (linked), filtered, and abstaining.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.retrieve_args import QUESTION_EMPTY, k_problem
from guidedrag_graph.semantics import merge_stated
from tests.cli_run import clean_env
from tests.conftest import REPO_ROOT, free_port, sample_bundle

pytestmark = pytest.mark.neo4j

UNKNOWN = "No Such Entity Anywhere"


@pytest.fixture
def rag(settings: Settings, embedder: Embedder, sample_db: Driver) -> Iterator[GuidedRAG]:
    # Per test, opened after the sample KB is in place: cheap (the KB's state is shared per
    # driver), and it observes the database's version after any reload (context.KBState).
    with GuidedRAG(settings, driver=sample_db, embedder=embedder) as pipeline:
        yield pipeline


def env_for(settings: Settings) -> dict[str, str]:
    return clean_env(
        {
            "NEO4J_URI": settings.neo4j_uri,
            "NEO4J_PASSWORD": settings.neo4j_password.get_secret_value(),
            "PYTHONPATH": str(REPO_ROOT),
        }
    )


def question_and_entity() -> tuple[str, str]:
    q = sample_bundle().questions[0]
    assert q.semantics is not None
    return q.question, q.semantics.entities[0]


def calls() -> list[tuple[str, dict[str, Any]]]:
    question, entity = question_and_entity()
    return [
        ("retrieve", {"question": question, "entities": [entity]}),
        ("retrieve", {"question": question, "entities": [entity], "top_k": 2}),
        ("retrieve", {"question": question, "entities": [UNKNOWN]}),
        ("retrieve", {"question": question, "entity": [entity]}),
        ("retrieve", {"question": "   "}),
        ("retrieve", {"question": ""}),
        ("retrieve", {"question": question, "k": 0}),
        ("retrieve", {"question": question, "steering": "sideways"}),
        ("ask", {"question": question, "selection": f"entity({entity!r})", "k": 2}),
        ("ask", {"question": question, "entities": [UNKNOWN]}),
        ("select", {"expression": f"entity({entity!r})", "max_id": 3}),
        ("retrieve", {"question": question, "entities": [entity], "filters": filters_for(entity)}),
        ("retrieve", {"question": question}),  # bare: entities linked from the question
    ]


def filters_for(entity: str) -> dict[str, Any]:
    """Only the chunks of the entity's own article (the sample KB's document ids)."""
    return {"document_id": {"$in": [f"wiki:{entity}"]}}


async def _session(read: Any, write: Any) -> tuple[list[Any], list[Any]]:
    from mcp import ClientSession

    async with ClientSession(read, write) as session:
        await session.initialize()
        tools = (await session.list_tools()).tools
        results = [await session.call_tool(name, arguments) for name, arguments in calls()]
    return tools, results


async def over_stdio(settings: Settings, cwd: Path) -> tuple[list[Any], list[Any]]:
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "guidedrag_graph.cli", "mcp", "--transport", "stdio"],
        env=env_for(settings),
        cwd=cwd,
    )
    async with stdio_client(params) as (read, write):
        return await _session(read, write)


async def over_http(url: str) -> tuple[list[Any], list[Any]]:
    from mcp.client.streamable_http import streamable_http_client

    async with streamable_http_client(url) as (read, write):
        return await _session(read, write)


def wait_for_port(
    port: int, process: subprocess.Popen[bytes], log: Path, timeout: float = 120
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text("utf-8", "replace")[-2000:]
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError(f"the MCP server did not listen on {port} in {timeout} s")


def check(tools: list[Any], results: list[Any], rag: GuidedRAG) -> None:
    question, entity = question_and_entity()
    by_name = {t.name: t for t in tools}
    for tool in tools:  # strict in, typed out
        assert tool.input_schema.get("additionalProperties") is False, tool.name
        assert tool.output_schema and tool.output_schema.get("properties"), tool.name
    retrieve_in = by_name["retrieve"].input_schema["properties"]
    assert {"question", "entities", "relations", "k", "steering", "selection", "filters"} <= set(
        retrieve_in
    )
    assert {"selection", "filters"} <= set(by_name["ask"].input_schema["properties"])
    retrieve_out = by_name["retrieve"].output_schema
    assert {"chunks", "abstained", "reason", "linked", "tier_sizes", "steering"} <= set(
        retrieve_out["properties"]
    )
    assert {"text", "llm_called", "citations", "abstained"} <= set(
        by_name["ask"].output_schema["properties"]
    )

    found, two, unknown, misspelt, blank, empty, zero, sideways, *rest = results
    asked, ask_unknown, bad_select, filtered, bare = rest
    want = rag.retrieve(question, semantics=merge_stated(None, [entity]))
    data = found.structured_content
    assert not found.is_error
    assert [c["chunk_id"] for c in data["chunks"]] == [c.id for c in want.chunks]
    assert data["tier_sizes"] == want.tier_sizes and data["steering"] == want.steering
    assert data["abstained"] is False and data["reason"] is None
    assert [c["chunk_id"] for c in two.structured_content["chunks"]] == [
        c.id for c in want.chunks[:2]
    ]
    gone = unknown.structured_content
    assert gone["abstained"] is True and gone["chunks"] == [] and UNKNOWN in gone["reason"]

    def refusal(result: Any) -> str:
        assert result.is_error and result.structured_content is None
        text = result.content[0].text
        assert "\n" not in text and "https://" not in text and "pydantic" not in text, text
        return str(text)

    assert refusal(misspelt) == (
        "retrieve got an unknown argument 'entity'; known: question, entities, relations, k, "
        "steering, selection, filters"
    )
    assert refusal(blank) == refusal(empty) == QUESTION_EMPTY
    assert refusal(zero) == k_problem(0)
    assert refusal(sideways).startswith("invalid steering='sideways'")
    assert "select got an unknown argument 'max_id'" in refusal(bad_select)

    only = rag.retrieve(
        question, semantics=merge_stated(None, [entity]), filters=filters_for(entity)
    )
    assert only.chunks and [c.id for c in only.chunks] != [c.id for c in want.chunks]
    assert [c["chunk_id"] for c in filtered.structured_content["chunks"]] == [
        c.id for c in only.chunks
    ]

    hard = rag.retrieve(question, f"entity({entity!r})", k=2)
    answer = asked.structured_content
    assert not asked.is_error and answer["abstained"] is False and answer["prompt"]
    assert [c["chunk_id"] for c in answer["chunks"]] == [c.id for c in hard.chunks]
    assert answer["selection"] == hard.selection_text and answer["llm_called"] is False
    none = ask_unknown.structured_content
    assert none["abstained"] is True and UNKNOWN in none["reason"] and none["text"] is None

    linked = rag.retrieve(question)  # the server awaits aretrieve: the same ids and links
    assert [c["chunk_id"] for c in bare.structured_content["chunks"]] == [
        c.id for c in linked.chunks
    ]
    assert bare.structured_content["linked"] == linked.linked and linked.linked


def test_mcp_over_stdio_is_strict_and_typed(
    sample_db: Driver, rag: GuidedRAG, settings: Settings, tmp_path: Path
) -> None:
    tools, results = asyncio.run(over_stdio(settings, tmp_path))
    check(tools, results, rag)


def test_mcp_over_streamable_http_is_strict_and_typed(
    sample_db: Driver, rag: GuidedRAG, settings: Settings, tmp_path: Path
) -> None:
    port = free_port()
    command = [sys.executable, "-m", "guidedrag_graph.cli", "mcp"]
    command += ["--transport", "streamable-http", "--port", str(port)]
    log = tmp_path / "server.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command, env=env_for(settings), cwd=tmp_path, stdout=sink, stderr=subprocess.STDOUT
        )
        try:
            wait_for_port(port, process, log)
            tools, results = asyncio.run(over_http(f"http://127.0.0.1:{port}/mcp"))
        finally:
            process.terminate()
            process.wait(timeout=30)
    check(tools, results, rag)
    assert f"127.0.0.1:{port}" in log.read_text("utf-8", "replace")  # loopback by default
