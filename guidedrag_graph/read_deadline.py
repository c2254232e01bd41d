"""A read that returns by its deadline even when the server is late to end it.

The transaction timeout is the server's to enforce, and it does: the transaction is marked
terminated at the timeout (the managed server checks every 200 ms). But a terminated query only
stops at its next termination check, and a server that is oversubscribed (16 worst-case
selections on 2 cores), in a long GC pause or frozen gets there late: the exhaustion run saw
calls return 6.7 s after a 30 s timeout. A caller was promised ``GUIDEDRAG_QUERY_TIMEOUT``, so
the client bounds its wait too: the read runs on a worker thread and the caller waits at most the
timeout plus ``GRACE_S``. Past that it gets ``DeadlinePassed`` while the worker stays with the
session until the server ends the transaction, so the connection goes back to the pool clean
(never killed mid-message) and the server, not a cancelled socket, decides what ran.

The timeout bounds a *call*, not each of its queries: ``budgeted`` (on ``GuidedRAG.retrieve``
and the ``Selector``'s runs) opens a budget of ``GUIDEDRAG_QUERY_TIMEOUT`` for the whole call,
and each read inside it gets what is left, as its transaction timeout and as its wait. Name
resolution, the cost-bound counts and the question's embedding count against it, so a call
that spent its time before its last query does not start it.

Workers are daemon threads made on demand and reused (a hop costs ~40 us against a retrieval's
several ms); being daemons, a worker still waiting on a frozen server never blocks the process
from exiting.
"""

from __future__ import annotations

import functools
import queue
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

_T = TypeVar("_T")
_P = ParamSpec("_P")

# How long past the transaction timeout the caller waits for the server's own timeout error
# (which normally comes at the timeout plus one monitor check, well inside this).
GRACE_S = 1.0


class DeadlinePassed(Exception):
    """The server had not answered by the deadline (the caller maps it to its own error)."""


class _Workers:
    """Daemon threads that run reads; one is started only when none is idle."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]] = queue.SimpleQueue()
        self._idle = 0
        self._lock = threading.Lock()

    def submit(self, job: Callable[[], _T]) -> Future[_T]:
        future: Future[_T] = Future()
        with self._lock:
            spawn = self._idle == 0
            if not spawn:
                self._idle -= 1
        self._jobs.put((job, future))
        if spawn:
            threading.Thread(target=self._work, name="guidedrag-read", daemon=True).start()
        return future

    def _work(self) -> None:
        while True:
            job, future = self._jobs.get()
            result: Any = None
            error: BaseException | None = None
            try:
                result = job()
            except BaseException as exc:  # handed to the caller, who re-raises it
                error = exc
            # Idle before the caller wakes, so its next read reuses this thread.
            with self._lock:
                self._idle += 1
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(result)
            del job, future, result, error  # the rows are the caller's, not this thread's


_WORKERS = _Workers()


def within(seconds: float, job: Callable[[], _T]) -> _T:
    """``job()``'s result, or ``DeadlinePassed`` once ``seconds`` have gone by without one."""
    future = _WORKERS.submit(job)
    try:
        return future.result(timeout=seconds)
    except FutureTimeout:
        raise DeadlinePassed(seconds) from None


_BUDGET = threading.local()


@contextmanager
def call_budget(seconds: float) -> Iterator[None]:
    """Every read inside runs within ``seconds`` from now, together (nested budgets keep the
    outer, earlier deadline: a call inside a call does not get a fresh one)."""
    outer: float | None = getattr(_BUDGET, "until", None)
    until = time.monotonic() + seconds
    _BUDGET.until = until if outer is None else min(outer, until)
    try:
        yield
    finally:
        _BUDGET.until = outer


def remaining() -> float | None:
    """Seconds left in this thread's call budget, or None outside a budget."""
    until: float | None = getattr(_BUDGET, "until", None)
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
