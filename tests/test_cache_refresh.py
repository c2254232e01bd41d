"""No call on a warm process waits for the dear reads of the KB state when they expire
(issue 36: the relation vocabulary and its counts, 309 ms on MuSiQue, were read again by the
first call after ``GUIDEDRAG_RESOLUTION_CACHE_S``: a p99 spike). Once expired they answer from
the expired value while one reload runs in the background (``ExpiringCache.refreshed``), as
the link index does. Real Neo4j (the tiny KB); the reads are told apart by the thread that
logged them (``guidedrag_graph.db.reads`` at DEBUG)."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
import time

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.db.reads import open_async_driver
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.semantics import Semantics

pytestmark = pytest.mark.neo4j

CACHE_S = 1.0
DEAR = {"kb_stats_relations", "relation_types", "link_index", "relation_type_in_use"}


# Set by an async test around its own calls: a read logged where it is set is the call's own
# (a background refresh starts from an empty context, reads.spawn).
ASKING: contextvars.ContextVar[bool] = contextvars.ContextVar("asking", default=False)


class ReadsByThread(logging.Handler):
    """The template name of every read logged, with the thread that made it (and, for the
    async test, whether the asking call's context made it)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.reads: list[tuple[int, str]] = []
        self.asked: list[tuple[bool, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.reads.append((record.thread or 0, str(record.args[0])))  # type: ignore[index]
        self.asked.append((ASKING.get(), str(record.args[0])))  # type: ignore[index]

    def mine(self, since: int) -> set[str]:
        here = threading.get_ident()
        return {name for thread, name in self.reads[since:] if thread == here}

    def others(self, since: int) -> set[str]:
        here = threading.get_ident()
        return {name for thread, name in self.reads[since:] if thread != here}


@pytest.fixture
def reads() -> ReadsByThread:
    logger = logging.getLogger("guidedrag_graph.db.reads")
    handler, level = ReadsByThread(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)


def test_a_call_after_expiry_does_not_wait_for_the_dear_reads(
    tiny_kb: Driver, settings: Settings, embedder: Embedder, reads: ReadsByThread
) -> None:
    short = settings.model_copy(update={"resolution_cache_s": CACHE_S})
    rag = GuidedRAG(short, driver=tiny_kb, embedder=embedder)

    def ask() -> None:  # a bare question (link index, vocabulary) and a stated relation
        rag.retrieve("Where was Ada Lovelace born?")
        rag.retrieve(
            "Where was Ada born?",
            semantics=Semantics(entities=("Ada Lovelace",), relations=("BORN_IN",)),
        )

    start = len(reads.reads)
    ask()  # cold: the first call of a process reads them itself
    assert {"kb_stats_relations", "relation_types", "link_index"} <= reads.mine(start)
    time.sleep(CACHE_S + 0.3)  # every answer expired
    start = len(reads.reads)
    ask()
    assert not reads.mine(start) & DEAR, reads.mine(start)  # answered from the expired ones
    deadline = time.monotonic() + 10
    while not reads.others(start) >= DEAR and time.monotonic() < deadline:
        time.sleep(0.05)
    assert reads.others(start) >= DEAR  # read again, in the background


def test_an_async_call_after_expiry_does_not_wait_either(
    tiny_kb: Driver, settings: Settings, embedder: Embedder, reads: ReadsByThread
) -> None:
    """On an event loop the refresh is a task (``reads.spawn``), in a context of its own: the
    call's own reads are told apart by a context variable the refresh does not inherit."""
    short = settings.model_copy(update={"resolution_cache_s": CACHE_S})

    async def run() -> tuple[set[str], set[str], set[str]]:
        driver = open_async_driver(settings)
        try:
            rag = await GuidedRAG.aopen(short, driver=driver, embedder=embedder)

            async def ask() -> None:
                ASKING.set(True)  # in this task's context only
                await rag.aretrieve("Where was Ada Lovelace born?")

            start = len(reads.asked)
            await asyncio.create_task(ask())
            cold = {name for own, name in reads.asked[start:] if own}
            await asyncio.sleep(CACHE_S + 0.3)
            start = len(reads.asked)
            await asyncio.create_task(ask())
            own = {name for mine, name in reads.asked[start:] if mine}
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                background = {name for mine, name in reads.asked[start:] if not mine}
                if {"kb_stats_relations", "link_index"} <= background:
                    break
                await asyncio.sleep(0.05)
            return cold, own, background
        finally:
            await driver.close()

    cold, own, background = asyncio.run(run())
    assert {"kb_stats_relations", "link_index"} <= cold  # the cold call read them itself
    assert not own & DEAR, own
    assert {"kb_stats_relations", "link_index"} <= background
