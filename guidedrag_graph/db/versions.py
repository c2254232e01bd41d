"""The database's version (the bookmark of a ``RETURN 1``), read once for the threads that ask
together.

Who asks: ``GraphContext.open`` (every ``GuidedRAG``: a write made before it opened is seen by
its first call), ``Resolver`` (a name the KB lacked is
trusted only while the version has not moved: a reused instance asked about a typo pays one
``RETURN 1`` per call). Issue 36 measured a version read per open at 0.5-0.6x
``VectorRetriever``'s throughput at 8 threads with a new instance per request.

Threads that ask while a read is in flight share the *next* read: one that starts after each of
them asked, so its answer is as new as each one's own read would have been (a write committed
before a thread asked is in it); it is not the read in flight, which may have started before
the write. 400 opens on 8 threads sent 101 reads (MuSiQue, loopback server). A read that fails is
not shared (each waiter reads on its own). The rule is ``_NextRead``'s; threads wait on a
condition (``SharedRead``), async callers (``bridged``) share theirs per event loop
(``LoopSharedRead``), waiting on the loop: a thread lock would block it.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import weakref
from collections.abc import Callable
from typing import Any

from guidedrag_graph.db.reads import Read, await_, bridged_now, read_versioned


class _NextRead:
    """The rule, once: a caller is answered by the next read to start after it asked (waiting
    while one is in flight that started before), or reads itself when none is in flight; a
    failed read's callers read on their own. How a caller waits is the subclass's."""

    def __init__(self) -> None:
        self._started = 0  # reads started so far; the one in flight (if any) is the last
        self._running = False
        self._done = 0  # the last read that ended, and its answer
        self._value: Any = None
        self._failed = False

    def _guard(self) -> contextlib.AbstractContextManager[Any]:
        raise NotImplementedError

    def _wait(self) -> None:
        """Wait (inside ``_guard``) for the read in flight to end."""
        raise NotImplementedError

    def _begun(self) -> None:
        """A read starts (inside ``_guard``)."""

    def _ended(self) -> None:
        """The read in flight ended (inside ``_guard``): wake its waiters."""
        raise NotImplementedError

    def __call__(self, fetch: Callable[[], Any]) -> Any:
        """``fetch()``'s answer from a read that started after this call began."""
        with self._guard():
            wanted = self._started + 1  # the next read to start: it starts after now
            while self._running and self._done < wanted:
                self._wait()
            if self._done >= wanted:  # a read that started after this call has ended
                if not self._failed:
                    return self._value
                mine = 0  # an error is not shared: this caller reads on its own
            else:  # none in flight, none new enough: this caller's read is the next one
                self._running = True
                self._started += 1
                mine = self._started
                self._begun()
        if not mine:
            return fetch()
        value, failed = None, True
        try:
            value = fetch()
            failed = False
            return value
        finally:
            with self._guard():
                self._running = False
                self._done, self._value, self._failed = mine, value, failed
                self._ended()


class SharedRead(_NextRead):
    """The threads' waiter: a condition variable (see the module)."""

    def __init__(self) -> None:
        super().__init__()
        self._turn = threading.Condition()

    def _guard(self) -> contextlib.AbstractContextManager[Any]:
        return self._turn

    def _wait(self) -> None:
        self._turn.wait()

    def _ended(self) -> None:
        self._turn.notify_all()


class LoopSharedRead(_NextRead):
    """The async callers of one event loop: the rule kept by the loop's one thread (a bridged
    call switches only at ``await_``, so no lock is needed), the waiters awaiting the next
    read's end on the loop."""

    def __init__(self) -> None:
        super().__init__()
        self._end = asyncio.Event()

    def _guard(self) -> contextlib.AbstractContextManager[Any]:
        return contextlib.nullcontext()

    def _wait(self) -> None:
        await_(self._end.wait())

    def _begun(self) -> None:
        self._end = asyncio.Event()  # one read in flight at a time: its own event

    def _ended(self) -> None:
        self._end.set()


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
