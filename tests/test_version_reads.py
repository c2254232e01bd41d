"""The database's version read once for the threads that ask together (``db/versions.py``,
issue 36): a thread that asks while a read is in flight gets the answer of the next read, one
that started after it asked, never the one in flight (which may predate a write it must see);
a thread that asks when none is in flight reads; a failed read is not shared."""

from __future__ import annotations

import threading
import time

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.db.versions import SharedRead
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.pipeline import GuidedRAG
from tests.probes import CountingDriver


class Reads:
    """A stand-in for the version read: numbered answers, the first one held until released."""

    def __init__(self) -> None:
        self.started = 0
        self.hold = threading.Event()
        self.in_flight = threading.Event()

    def __call__(self) -> int:
        self.started += 1
        number = self.started
        if number == 1:
            self.in_flight.set()
            assert self.hold.wait(5)
        return number


def test_threads_asking_during_a_read_share_the_next_one_not_the_one_in_flight() -> None:
    shared, reads = SharedRead(), Reads()
    answers: dict[str, int] = {}
    first = threading.Thread(target=lambda: answers.__setitem__("first", shared(reads)))
    first.start()
    assert reads.in_flight.wait(5)
    waiters = [
        threading.Thread(target=lambda i=i: answers.__setitem__(f"w{i}", shared(reads)))
        for i in range(6)
    ]
    for t in waiters:
        t.start()
    time.sleep(0.2)  # all six wait on the read in flight
    reads.hold.set()
    for t in [first, *waiters]:
        t.join(5)
    assert answers.pop("first") == 1
    assert set(answers.values()) == {2}, answers  # the read that started after they asked
    assert reads.started == 2


def test_a_thread_asking_after_a_read_ended_reads_again() -> None:
    shared, reads = SharedRead(), Reads()
    reads.hold.set()
    assert [shared(reads) for _ in range(3)] == [1, 2, 3]


def test_a_failed_read_is_not_shared() -> None:
    shared = SharedRead()
    calls: list[int] = []
    go, in_flight = threading.Event(), threading.Event()

    def fetch() -> int:
        calls.append(1)
        if len(calls) == 1:  # the read in flight when the two others ask: it answers
            in_flight.set()
            assert go.wait(5)
            return 1
        if len(calls) == 2:  # the next one, which they share: it fails
            raise RuntimeError("server down")
        return 7

    got: list[object] = []

    def ask() -> None:
        try:
            got.append(shared(fetch))
        except RuntimeError as exc:
            got.append(exc)

    first = threading.Thread(target=ask)
    first.start()
    assert in_flight.wait(5)
    others = [threading.Thread(target=ask) for _ in range(2)]
    for t in others:
        t.start()
    time.sleep(0.2)
    go.set()
    for t in [first, *others]:
        t.join(5)
    assert got[0] == 1
    assert sorted(map(repr, got[1:])) == sorted([repr(RuntimeError("server down")), "7"]), got
    assert len(calls) == 3  # the one the error was not handed to read on its own


@pytest.mark.neo4j
def test_instances_opened_together_on_threads_still_see_a_write_made_before_them(
    tiny_kb: Driver, settings: Settings, embedder: Embedder
) -> None:
    counting = CountingDriver(tiny_kb)
    first = GuidedRAG(settings, driver=counting, embedder=embedder)  # type: ignore[arg-type]
    state = first.graph.state
    assert state is not None and state.version is not None
    before = len(counting.queries)
    opened: list[GuidedRAG] = []

    def open_many() -> None:
        for _ in range(10):
            opened.append(GuidedRAG(settings, driver=counting, embedder=embedder))  # type: ignore[arg-type]

    pool = [threading.Thread(target=open_many) for _ in range(8)]
    for t in pool:
        t.start()
    for t in pool:
        t.join(60)
    reads = sum(q.strip().startswith("RETURN 1") for q in counting.queries[before:])
    assert len(opened) == 80 and 0 < reads <= 80
    assert {id(r.graph.state) for r in opened} == {id(state)}
    seen = state.version
    tiny_kb.execute_query("CREATE (:Scratch {n: 1})")
    try:
        GuidedRAG(settings, driver=counting, embedder=embedder)  # type: ignore[arg-type]
        assert state.version != seen, "an instance opened after a write saw the old version"
    finally:
        tiny_kb.execute_query("MATCH (n:Scratch) DELETE n")


def test_async_callers_on_one_loop_share_the_next_read_too() -> None:
    import asyncio

    from guidedrag_graph.db.reads import await_, bridged
    from guidedrag_graph.db.versions import LoopSharedRead

    async def main() -> tuple[list[int], int]:
        shared, started = LoopSharedRead(), [0]
        release = asyncio.Event()

        def fetch() -> int:  # runs bridged, as read_versioned does on an AsyncDriver
            started[0] += 1
            number = started[0]
            if number == 1:
                await_(release.wait())
            else:
                await_(asyncio.sleep(0.01))
            return number

        first = asyncio.ensure_future(bridged(shared, fetch))
        await asyncio.sleep(0.05)  # the first read is in flight
        others = [asyncio.ensure_future(bridged(shared, fetch)) for _ in range(6)]
        await asyncio.sleep(0.05)
        release.set()
        answers = [await first, *[await o for o in others]]
        late = await bridged(shared, fetch)  # asked after every read ended: a read of its own
        return [*answers, late], started[0]

    answers, reads = asyncio.run(main())
    assert answers == [1, 2, 2, 2, 2, 2, 2, 3], answers
    assert reads == 3
