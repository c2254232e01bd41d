"""A ``retrieve`` call is validated once, at its door (``RetrieveRequest.build``), whichever
door it came through: Python (sync and async), the CLI, neo4j-graphrag's retriever, LangChain,
LlamaIndex and MCP. Nothing below the door checks an argument again.

Counted: the argument model's check (``RetrieveArgs.check``) and the question's bounds
(``check_question``), per call. Real Neo4j, the sample KB.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from click.testing import CliRunner
from neo4j import Driver

from guidedrag_graph import retrieve_args
from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.semantics import Semantics

pytestmark = pytest.mark.neo4j

QUESTION = "What currency predated the Euro in the country Signmark is from?"
SIGNMARK = Semantics(entities=("Signmark",))


class Counts:
    def __init__(self) -> None:
        self.args = 0
        self.question = 0

    def reset(self) -> None:
        self.args = self.question = 0

    def __repr__(self) -> str:
        return f"args checked {self.args}x, question checked {self.question}x"


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Counts:
    counted = Counts()
    check_args = retrieve_args.RetrieveArgs.check.__func__  # type: ignore[attr-defined]
    check_question = retrieve_args.check_question

    def args(cls: Any, **kwargs: Any) -> Any:
        counted.args += 1
        return check_args(cls, **kwargs)

    def question(*a: Any, **kw: Any) -> Any:
        counted.question += 1
        return check_question(*a, **kw)

    monkeypatch.setattr(retrieve_args.RetrieveArgs, "check", classmethod(args))
    monkeypatch.setattr(retrieve_args, "check_question", question)
    return counted


@pytest.fixture
def rag(sample_db: Driver, settings: Settings, embedder: Embedder) -> Iterator[GuidedRAG]:
    with GuidedRAG(settings, driver=sample_db, embedder=embedder) as opened:
        yield opened


def _once(counts: Counts, call: Callable[[], Any]) -> Any:
    counts.reset()
    out = call()
    assert (counts.args, counts.question) == (1, 1), counts
    return out


@pytest.mark.parametrize(
    "options",
    [
        {"semantics": SIGNMARK, "k": 3},
        {"k": 3},  # bare: linked
        {"semantics": SIGNMARK, "steering": "hard", "ranker": "mmr"},
        {"semantics": SIGNMARK, "steering": "soft", "path": "exact"},
        {"filters": {"position": {"$lte": 3}}, "threshold": 0.1},
        {"semantics": Semantics(entities=("No Such Name",)), "steering": "hard"},  # abstains
    ],
    ids=["auto", "bare", "hard mmr", "soft exact", "filters", "abstains"],
)
def test_python_retrieve_and_ask(
    rag: GuidedRAG, counts: Counts, options: dict[str, Any], settings: Settings
) -> None:
    _once(counts, lambda: rag.retrieve(QUESTION, **options))
    _once(counts, lambda: rag.ask(QUESTION, **options))  # no LLM: the prompt only


def test_python_retrieve_with_a_selection_and_a_vector(
    rag: GuidedRAG, counts: Counts, embedder: Embedder
) -> None:
    vector = [float(x) for x in embedder.embed_queries([QUESTION])[0]]
    _once(counts, lambda: rag.retrieve(QUESTION, "entity('Signmark')", query_vector=vector))


def test_async_aretrieve(
    sample_db: Driver, settings: Settings, embedder: Embedder, counts: Counts
) -> None:
    async def run() -> None:
        async with await GuidedRAG.aopen(settings, embedder=embedder) as arag:
            counts.reset()
            await arag.aretrieve(QUESTION, semantics=SIGNMARK, k=3)
            assert (counts.args, counts.question) == (1, 1), counts
            counts.reset()
            await arag.aask(QUESTION, k=3)
            assert (counts.args, counts.question) == (1, 1), counts

    asyncio.run(run())


def test_cli_retrieve(
    sample_db: Driver,
    settings: Settings,
    counts: Counts,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Any,
) -> None:
    from guidedrag_graph.cli import cli

    monkeypatch.chdir(str(tmp_path))  # no stray .env
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    env = {
        "NEO4J_URI": settings.neo4j_uri,
        "NEO4J_PASSWORD": settings.neo4j_password.get_secret_value(),
        "NEO4J_DATABASE": settings.neo4j_database,
    }
    for args in (
        ["retrieve", QUESTION, "--entity", "Signmark", "-k", "2", "--json"],
        ["retrieve", QUESTION, "--select", "entity('Signmark')", "--steering", "soft"],
        ["ask", QUESTION, "-k", "2"],
    ):
        counts.reset()
        result = CliRunner().invoke(cli, args, env=env)
        assert result.exit_code == 0, result.output
        assert (counts.args, counts.question) == (1, 1), (args, counts)


def test_neo4j_graphrag_retriever(sample_db: Driver, rag: GuidedRAG, counts: Counts) -> None:
    from guidedrag_graph.integrations.neo4j_graphrag import GuidedRetriever

    retriever = GuidedRetriever(sample_db, rag=rag)
    found = _once(counts, lambda: retriever.search(query_text=QUESTION, top_k=2))
    assert len(found.items) == 2
    _once(counts, lambda: retriever.search(query_text=QUESTION, entities=["Signmark"]))


def test_langchain_and_llamaindex(rag: GuidedRAG, counts: Counts) -> None:
    from guidedrag_graph.integrations.langchain import GuidedLangChainRetriever
    from guidedrag_graph.integrations.llamaindex import GuidedLlamaIndexRetriever

    langchain = GuidedLangChainRetriever(rag=rag, k=2)
    assert len(_once(counts, lambda: langchain.invoke(QUESTION))) == 2
    llamaindex = GuidedLlamaIndexRetriever(rag)
    assert _once(counts, lambda: llamaindex.retrieve(QUESTION))


def test_mcp_tools(rag: GuidedRAG, counts: Counts, settings: Settings, embedder: Embedder) -> None:
    from guidedrag_graph.cli.mcp_server import build_server

    async def run() -> None:  # retrieve and ask await the pipeline opened with aopen
        async with await GuidedRAG.aopen(settings, embedder=embedder) as arag:
            server = build_server(rag, arag)
            for tool, arguments in (
                ("retrieve", {"question": QUESTION, "entities": ["Signmark"], "k": 2}),
                ("ask", {"question": QUESTION, "k": 2}),
            ):
                counts.reset()
                await server.call_tool(tool, arguments)
                assert (counts.args, counts.question) == (1, 1), (tool, counts)

    asyncio.run(run())


def test_the_counter_counts(rag: GuidedRAG, counts: Counts) -> None:
    """The direct retrieval door (``Retriever.rank``) checks its own arguments: counted."""
    vector = [0.1] * rag.settings.embedding_dimensions
    counts.reset()
    rag.retriever.rank(vector, None, k=2)
    assert counts.args == 1
