"""A read that returns by its deadline even when the server is late to end it.

The transaction timeout is the server's to enforce, and it does: the transaction is marked
terminated at the timeout (the managed server checks every 200 ms). But a terminated query only
stops at its next termination check, and a server that is oversubscribed (16 worst-case
selections on 2 cores), in a long GC pause or frozen gets there late: the exhaustion run saw
calls return 6.7 s after a 30 s timeout. A caller was promised ``GUIDEDRAG_QUERY_TIMEOUT``, so
the client bounds its wait too: a read still running at the timeout plus ``GRACE_S`` is cut off.

The read runs on the caller's own thread, armed with a ``Deadline``. One daemon thread, the
watchdog, keeps every armed deadline in a heap; at a deadline it calls the read's ``cancel``
(``db`` shuts the socket of the connection the read is waiting on down, which wakes the blocked
receive with an error; the driver drops that connection and the server ends the transaction of
a client that went away). An earlier design ran every read on a worker thread and waited on it
with a timeout; that hop cost ~0.05 ms in a hot loop and 0.25 ms (0.17x a whole
``VectorRetriever`` call) when other work ran between reads, on every read, for what only a
frozen server needs. Arming a deadline costs a heap push under a lock; the watchdog wakes at most
every ``TICK_S`` and is only notified when a deadline is earlier than its next wake. A forked
child starts with a watchdog of its own (the parent's thread does not come along).

The timeout bounds a *call*, not each of its queries: ``budgeted`` (on ``GuidedRAG.retrieve``
and the ``Selector``'s runs) opens a budget of ``GUIDEDRAG_QUERY_TIMEOUT`` for the whole call,
and each read inside it gets what is left, as its transaction timeout and as its deadline. Name
resolution, the cost-bound counts and the question's embedding count against it, so a call
that spent its time before its last query does not start it.
"""

from __future__ import annotations

import contextvars
import functools
import heapq
import itertools
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Concatenate, ParamSpec, Protocol, TypeVar

_T = TypeVar("_T")
_P = ParamSpec("_P")

# How long past the transaction timeout the caller waits for the server's own timeout error
# (which normally comes at the timeout plus one monitor check, well inside this).
GRACE_S = 1.0
# The watchdog's resolution: a deadline is acted on at most this late, and a cancel that found
# nothing to cut (a connection still being opened) is tried again this often.
TICK_S = 0.05


class DeadlinePassed(Exception):
    """The server had not answered by the deadline (the caller maps it to its own error)."""


class Deadline:
    """``with Deadline(seconds, cancel) as armed:`` runs the block on this thread; if it is still
    inside after ``seconds``, the watchdog calls ``cancel()`` (which returns whether it found
    something to cut; it is called again every ``TICK_S`` until it does or the block ends) and
    ``armed.fired`` is true from then on, so the block's error can be told from the cut."""

    __slots__ = ("_at", "cancel", "fired")

    def __init__(self, seconds: float, cancel: Callable[[], bool]) -> None:
        self._at = time.monotonic() + seconds
        self.cancel: Callable[[], bool] | None = cancel
        self.fired = False

    def __enter__(self) -> Deadline:
        _WATCHDOG.arm(self._at, self)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.cancel = None  # disarmed: the watchdog drops it, and holds nothing of the read


class _Watchdog:
    """The one thread that acts on deadlines. Disarmed deadlines stay in the heap until they come
    due (or a compaction drops them): arming is a push, disarming a store."""

    def __init__(self) -> None:
        self._start()

    def _start(self) -> None:
        """A fresh state (also in a forked child, which has the lock but not the thread)."""
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._heap: list[tuple[float, int, Deadline]] = []
        self._order = itertools.count()
        self._next_wake = float("inf")
        self._compact_at = 1024
        self._thread: threading.Thread | None = None

    def arm(self, at: float, deadline: Deadline) -> None:
        with self._lock:
            heapq.heappush(self._heap, (at, next(self._order), deadline))
            if len(self._heap) > self._compact_at:
                self._heap = [entry for entry in self._heap if entry[2].cancel is not None]
                heapq.heapify(self._heap)
                self._compact_at = max(1024, 2 * len(self._heap))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="guidedrag-deadlines", daemon=True
                )
                self._thread.start()
            elif at < self._next_wake - TICK_S:
                self._wake.notify()

    def pending(self) -> int:
        """Armed deadlines not yet disarmed (for tests: nothing is left behind)."""
        with self._lock:
            return sum(entry[2].cancel is not None for entry in self._heap)

    def _run(self) -> None:
        with self._lock:
            while True:
                now = time.monotonic()
                while self._heap and self._heap[0][0] <= now:
                    deadline = heapq.heappop(self._heap)[2]
                    cancel = deadline.cancel
                    if cancel is None:
                        continue  # ended in time
                    deadline.fired = True
                    if not _cut(cancel):  # nothing to cut yet: try again next tick
                        heapq.heappush(self._heap, (now + TICK_S, next(self._order), deadline))
                wait = max(self._heap[0][0] - now, TICK_S) if self._heap else None
                self._next_wake = float("inf") if wait is None else now + wait
                self._wake.wait(wait)


def _cut(cancel: Callable[[], bool]) -> bool:
    """``cancel()``, where an error counts as done: the watchdog must outlive any one read."""
    try:
        return cancel()
    except Exception:
        return True


_WATCHDOG = _Watchdog()
os.register_at_fork(after_in_child=_WATCHDOG._start)


# A context variable, not a thread-local: concurrent async calls share a thread, each in its own
# context (``reader.bridged``), and each thread has its own context too.
_BUDGET: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "guidedrag_call_budget", default=None
)


@contextmanager
def call_budget(seconds: float) -> Iterator[None]:
    """Every read inside runs within ``seconds`` from now, together (nested budgets keep the
    outer, earlier deadline: a call inside a call does not get a fresh one)."""
    outer = _BUDGET.get()
    until = time.monotonic() + seconds
    token = _BUDGET.set(until if outer is None else min(outer, until))
    try:
        yield
    finally:
        _BUDGET.reset(token)


def remaining() -> float | None:
    """Seconds left in this call's budget, or None outside a budget."""
    until = _BUDGET.get()
    return None if until is None else until - time.monotonic()


class _HasTimeout(Protocol):
    @property
    def query_timeout(self) -> float: ...


class _HasSettings(Protocol):
    @property
    def settings(self) -> _HasTimeout: ...


_S = TypeVar("_S", bound=_HasSettings)


def budgeted(method: Callable[Concatenate[_S, _P], _T]) -> Callable[Concatenate[_S, _P], _T]:
    """Run the method under a call budget of its object's ``settings.query_timeout``."""

    @functools.wraps(method)
    def wrapper(self: _S, /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        with call_budget(self.settings.query_timeout):
            return method(self, *args, **kwargs)

    return wrapper
