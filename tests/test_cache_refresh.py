"""No call on a warm process waits for the dear reads of the KB state when they expire
(issue 36: the relation vocabulary and its counts, 309 ms on MuSiQue, were read again by the
first call after ``GUIDEDRAG_RESOLUTION_CACHE_S``: a p99 spike). Once expired they answer from
the expired value while one reload runs in the background (``ExpiringCache.refreshed``), as
the link index does. Real Neo4j (the tiny KB); the reads are told apart by the thread that
logged them (``guidedrag_graph.db.reads`` at DEBUG)."""

from __future__ import annotations

import logging
import threading
import time

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.semantics import Semantics

pytestmark = pytest.mark.neo4j

CACHE_S = 1.0
DEAR = {"kb_stats_relations", "relation_types", "link_index"}


class ReadsByThread(logging.Handler):
    """The template name of every read logged, with the thread that made it."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.reads: list[tuple[int, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.reads.append((record.thread or 0, str(record.args[0])))  # type: ignore[index]

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
    while not DEAR <= reads.others(start) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert DEAR <= reads.others(start)  # read again, in the background
