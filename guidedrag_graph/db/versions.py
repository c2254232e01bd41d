"""The database's version (the bookmark of a ``RETURN 1``), read once for the threads that ask
together.

``GraphContext.open`` reads the version every time a context opens, so that a write made before
the open (ours, another tool's, another process's) is seen at once (``context.KBState``), and a
name the KB lacked is trusted only while the version has not moved (``Resolver``). An app that
opens a ``GuidedRAG`` per request pays that round trip per request: issue 36 measured a new
instance per request at 0.5-0.6x ``VectorRetriever``'s throughput at 8 threads, the reused one
at 1.0x.

Threads that ask while a read is in flight share the *next* read: one that starts after each of
them asked, so its answer is as new as each one's own read would have been (a write committed
before a thread asked is in it); it is not the read in flight, which may have started before
the write. 400 opens on 8 threads sent 101 reads (MuSiQue, loopback server). A read that fails is
not shared (each waiter reads on its own). Async callers (``bridged``) share theirs per event
loop (``LoopSharedRead``), waiting on the loop: a thread lock would block it.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Callable
from typing import Any

from guidedrag_graph.db.reads import Read, await_, bridged_now, read_versioned


class SharedRead:
    """One read at a time, shared by the threads that asked before it started (see the
    module)."""

    def __init__(self) -> None:
        self._turn = threading.Condition()
        self._started = 0  # reads started so far; the one in flight (if any) is the last
        self._running = False
        self._done = 0  # the last read that ended, and its answer
        self._value: Any = None
        self._failed = False

    def __call__(self, fetch: Callable[[], Any]) -> Any:
        """``fetch()``'s answer from a read that started after this call began."""
        with self._turn:
            wanted = self._started + 1  # the next read to start: it starts after now
            while self._running and self._done < wanted:
                self._turn.wait()
            if self._done >= wanted:  # a read that started after this call has ended
                if not self._failed:
                    return self._value
                shared = False  # an error is not shared: this caller reads on its own
            else:  # none in flight, none new enough: this caller's read is the next one
                shared = True
                self._running = True
                self._started += 1
                mine = self._started
        if not shared:
            return fetch()
        value, failed = None, True
        try:
            value = fetch()
            failed = False
            return value
        finally:
            with self._turn:
                self._running = False
                self._done, self._value, self._failed = mine, value, failed
                self._turn.notify_all()


class LoopSharedRead:
    """``SharedRead`` for the async callers of one event loop: the same rule, kept by the loop's
    one thread (a bridged call switches only at ``await_``, so no lock is needed), the waiters
    awaiting the next read's end on the loop."""

    def __init__(self) -> None:
        self._started = 0
        self._running = False
        self._done = 0
        self._value: Any = None
        self._failed = False
        self._ended = asyncio.Event()

    def __call__(self, fetch: Callable[[], Any]) -> Any:
        """``fetch()``'s answer (run in this bridged call) from a read started after it asked."""
        wanted = self._started + 1
        while self._running and self._done < wanted:
            await_(self._ended.wait())
        if self._done >= wanted:
            return fetch() if self._failed else self._value
        self._running, self._ended = True, asyncio.Event()
        self._started += 1
        mine, ended = self._started, self._ended
        value, failed = None, True
        try:
            value = fetch()
            failed = False
            return value
        finally:
            self._running = False
            self._done, self._value, self._failed = mine, value, failed
            ended.set()


# driver -> database -> its shared read: weak on the driver.
_SHARED: weakref.WeakKeyDictionary[Any, dict[str | None, SharedRead]] = weakref.WeakKeyDictionary()
_SHARED_LOCK = threading.Lock()
# loop -> driver -> database -> its shared read, for async callers: weak on both.
_LOOP_SHARED: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop,
    weakref.WeakKeyDictionary[Any, dict[str | None, LoopSharedRead]],
] = weakref.WeakKeyDictionary()


def database_version(driver: Any, database: str | None, query: Read) -> frozenset[str]:
    """The version of ``database`` (``read_versioned``'s bookmark of ``query``, a ``RETURN
    1``): read now by an async caller; shared with the threads asking at the same time by a
    sync one."""

    def fetch() -> frozenset[str]:
        return read_versioned(driver, query, database=database)[1]

    if bridged_now():
        loop = asyncio.get_running_loop()
        with _SHARED_LOCK:
            on_loop = _LOOP_SHARED.setdefault(loop, weakref.WeakKeyDictionary())
            shared_on_loop = on_loop.setdefault(driver, {}).setdefault(database, LoopSharedRead())
        return shared_on_loop(fetch)  # type: ignore[no-any-return]
    with _SHARED_LOCK:
        shared = _SHARED.setdefault(driver, {}).setdefault(database, SharedRead())
    return shared(fetch)  # type: ignore[no-any-return]
