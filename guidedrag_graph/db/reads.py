"""The one way a query reaches Neo4j on the retrieval path, for sync and async callers alike.

Every read is a ``Read`` (template name, query text, parameters) handed to ``read``, which picks
one of two runners by the driver it is given: ``_read_sync`` over a ``neo4j.Driver`` (``db``'s
READ auto-commit with its deadline watchdog) or ``_read_async`` over a ``neo4j.AsyncDriver`` (a
READ session, the same transaction timeout as ``neo4j.Query(timeout=...)``, and an asyncio
timeout of that plus ``GRACE_S`` on the client's side). Both log at DEBUG, on the
``guidedrag_graph.db.reads`` logger, the template's name, its parameters (vectors and long lists
elided) and the time it took.

The planning code above (selection, linking, steering, the planner, the paths) is written once,
as plain functions that call ``GraphContext.read``. The async API runs that same code inside
``bridged``: a greenlet on the event loop's thread whose reads, through ``await_``, suspend it
while the loop awaits the async runner, so sync and async share every line of planning and
only the two runners differ; no database call runs on a thread, and CPU work the caller wants off
the loop (embedding the question) goes through ``off_loop`` (``asyncio.to_thread`` when bridged,
a plain call otherwise). A lock held across reads (``FlightLock``) waits on the loop, not the
thread; work started in the background (``spawn``) is a thread for sync callers and a task for
async ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import sys
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

import greenlet  # type: ignore[import-untyped]
from neo4j import READ_ACCESS, AsyncDriver, AsyncGraphDatabase, Bookmarks, Query
from neo4j.exceptions import DriverError, Neo4jError

from guidedrag_graph.config import Settings
from guidedrag_graph.db import connection
from guidedrag_graph.db.connection import DEFAULT_QUERY_TIMEOUT, check_uri, read_query
from guidedrag_graph.db.deadline import GRACE_S
from guidedrag_graph.db.driver_io import UNLOGGED_MIN, row, unlogged
from guidedrag_graph.db.read_errors import ReadRetries, within_budget
from guidedrag_graph.db.read_versions import collecting, saw, seen
from guidedrag_graph.errors import ConfigurationError

_T = TypeVar("_T")
_P = ParamSpec("_P")

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Read:
    """One read: the template it was rendered from, the query text and its parameters."""

    name: str
    query: str
    params: dict[str, Any]


def shown(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` for a log line: vectors and other long lists as their length only."""
    return {
        key: f"<{len(value)} items>"
        if isinstance(value, (list, tuple)) and len(value) >= UNLOGGED_MIN
        else value
        for key, value in params.items()
    }


def _logged(read: Read, started: float, outcome: str) -> None:
    log.debug(
        "read %s %s in %.2f ms: %s",
        read.name,
        shown(read.params),
        1000 * (time.perf_counter() - started),
        outcome,
    )


def read(
    driver: Any, query: Read, *, database: str | None, timeout: float | None = None
) -> list[dict[str, Any]]:
    """THE read function: ``query`` in a READ transaction under ``timeout`` (default: the
    driver's) and what is left of the call's budget; an ``AsyncDriver`` is awaited through the
    bridge (``aretrieve``), any other driver read on this thread."""
    if isinstance(driver, AsyncDriver):
        rows, version = await_(_read_async(driver, query, database, _seconds(timeout)))
        if collecting():  # here, in the caller's greenlet: the loop awaited the runner
            saw(version)
        return rows
    return _read_sync(driver, query, database, timeout)


def _read_sync(
    driver: Any, query: Read, database: str | None, timeout: float | None
) -> list[dict[str, Any]]:
    started = time.perf_counter()
    try:
        rows = read_query(driver, query.query, query.params, database=database, timeout=timeout)
    except Exception as exc:
        if log.isEnabledFor(logging.DEBUG):
            _logged(query, started, f"failed ({exc.__class__.__name__})")
        raise
    if log.isEnabledFor(logging.DEBUG):
        _logged(query, started, f"{len(rows)} rows")
    return rows


def _seconds(timeout: float | None) -> float:
    """The transaction timeout of one async read: the settings' bounded by the call's budget
    (read here, in the call's own context, before the read is awaited on the loop)."""
    return within_budget(timeout if timeout is not None else DEFAULT_QUERY_TIMEOUT)


async def _read_async(
    driver: AsyncDriver, query: Read, database: str | None, seconds: float
) -> tuple[list[dict[str, Any]], frozenset[str]]:
    """The async runner: one READ auto-commit (what ``db.read_query`` sends), retried like it on
    what the driver calls retryable, cut off ``GRACE_S`` after the server's own timeout."""
    started = time.perf_counter()
    retries = ReadRetries(connection.READ_RETRY_S, seconds)  # the read_query rule (read_errors)
    while True:
        try:
            rows, version = await _read_async_once(driver, query, database, seconds)
            if log.isEnabledFor(logging.DEBUG):
                _logged(query, started, f"{len(rows)} rows")
            return rows, version
        except (TimeoutError, Neo4jError, DriverError) as exc:
            error = retries.failure(exc)
            if error is not None:
                _failed(query, started, error.__class__.__name__)
                if error is exc:
                    raise
                raise error from exc
        await asyncio.sleep(retries.wait())


def _failed(query: Read, started: float, why: str) -> None:
    if log.isEnabledFor(logging.DEBUG):
        _logged(query, started, f"failed ({why})")


async def _read_async_once(
    driver: AsyncDriver, query: Read, database: str | None, seconds: float
) -> tuple[list[dict[str, Any]], frozenset[str]]:
    bookmarks = Bookmarks.from_raw_values(
        await driver.execute_query_bookmark_manager.get_bookmarks()
    )
    async with asyncio.timeout(seconds + GRACE_S):
        async with driver.session(
            database=database,
            default_access_mode=READ_ACCESS,
            bookmarks=bookmarks,
            notifications_min_severity="OFF",
        ) as session:
            result = await session.run(
                Query(query.query, timeout=seconds),
                unlogged(query.params),
            )
            rows = [row(record) async for record in result]
            return rows, frozenset((await session.last_bookmarks()).raw_values)


def read_versioned(
    driver: Any, query: Read, *, database: str | None
) -> tuple[list[dict[str, Any]], frozenset[str]]:
    """``query``'s rows and the database's version: the bookmark the server returns for a read
    names the last transaction committed to the database, so it moves with every write (ours,
    another tool's, another process's). ``read`` itself, whose runners report the version each
    read saw (``db/read_versions.py``); the one ``GraphContext.open`` makes (``context.KBState``
    compares the version)."""
    with seen() as versions:
        rows = read(driver, query, database=database)
    return rows, versions[-1]


# --------------------------------------------------------------------------- the bridge
class _Bridged(greenlet.greenlet):  # type: ignore[misc]
    """The greenlet a sync function runs in when an async caller called it through ``bridged``."""


def bridged_now() -> bool:
    """Whether this code runs inside ``bridged`` (an async caller's call)."""
    return isinstance(greenlet.getcurrent(), _Bridged)


def await_(awaitable: Awaitable[_T]) -> _T:
    """``await awaitable`` from sync code running inside ``bridged``: the greenlet is suspended
    while the event loop awaits it."""
    current = greenlet.getcurrent()
    if not isinstance(current, _Bridged):
        if asyncio.iscoroutine(awaitable):
            awaitable.close()
        raise ConfigurationError(_SYNC_ON_ASYNC)
    return current.parent.switch(awaitable)  # type: ignore[no-any-return]


_SYNC_ON_ASYNC = (
    "a neo4j.AsyncDriver is read from async code only: open the GuidedRAG with "
    "`await GuidedRAG.aopen(...)` and call aretrieve/aask, or give it a neo4j.Driver "
    "for retrieve/ask"
)


def reading(driver: Any) -> None:
    """Refuse what ``read`` would refuse on ``driver`` without reading: an ``AsyncDriver`` from
    outside ``bridged`` (an open that reads nothing still says what to call)."""
    if isinstance(driver, AsyncDriver) and not bridged_now():
        raise ConfigurationError(_SYNC_ON_ASYNC)


async def bridged(function: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
    """``function(*args, **kwargs)`` run on this event loop: each ``await_`` inside it (every
    read on an ``AsyncDriver``) is awaited here, so other tasks run while it waits. It runs in
    a copy of the caller's context (its call budget is its own)."""
    child = _Bridged(lambda: function(*args, **kwargs), greenlet.getcurrent())
    child.gr_context = contextvars.copy_context()
    result = child.switch()
    while not child.dead:
        try:
            value = await result
        except BaseException:
            result = child.throw(*sys.exc_info())
        else:
            result = child.switch(value)
    return result  # type: ignore[no-any-return]


def off_loop(function: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
    """CPU work (embedding a question): on a worker thread (``asyncio.to_thread``) when an async
    caller waits for it, so the event loop keeps running; called in place otherwise."""
    if bridged_now():
        return await_(asyncio.to_thread(function, *args, **kwargs))
    return function(*args, **kwargs)


class FlightLock:
    """A lock held while reading (one load for questions arriving together): a thread lock for
    sync callers; for async ones an ``asyncio.Lock`` of their event loop, awaited through the
    bridge (a thread lock there would block the loop, and with it the holder)."""

    def __init__(self) -> None:
        self._thread = threading.Lock()
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        if not bridged_now():
            with self._thread:
                yield
            return
        lock = self._loops.setdefault(asyncio.get_running_loop(), asyncio.Lock())
        await_(lock.acquire())
        try:
            yield
        finally:
            lock.release()


_TASKS: set[asyncio.Task[Any]] = set()
# The threads ``spawn`` started, while they exist: a caller (a test reading the reads log) can
# wait for the background reads in flight without knowing who started them or their names.
SPAWNED: weakref.WeakSet[threading.Thread] = weakref.WeakSet()


def spawn(function: Callable[[], None], name: str) -> None:
    """Run ``function`` in the background: a daemon thread for sync callers, a task on the
    event loop (``function`` bridged) for async ones. Either starts from an empty context, so
    its reads are not the caller's: outside the caller's budget and its ``seen`` blocks."""
    if bridged_now():
        loop = asyncio.get_running_loop()
        task = loop.create_task(bridged(function), name=name, context=contextvars.Context())
        _TASKS.add(task)
        task.add_done_callback(_TASKS.discard)
        return
    thread = threading.Thread(target=function, name=name, daemon=True)
    thread.start()
    SPAWNED.add(thread)  # after start: a thread in the set can always be joined


def open_async_driver(settings: Settings) -> AsyncDriver:
    """A ``neo4j.AsyncDriver`` for the configured server (``GuidedRAG.aopen``); its first read
    (the graph's adoption record) is what proves it reaches the database."""
    return AsyncGraphDatabase.driver(
        check_uri(settings.neo4j_uri),
        auth=(settings.neo4j_username, settings.neo4j_password.get_secret_value()),
        connection_timeout=5,
    )
