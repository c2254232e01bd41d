"""What a failed read becomes: retried, re-raised, or one of the one-line errors — decided once
for both runners (``connection.read_query`` on a ``neo4j.Driver``, ``reads._read_async`` on a
``neo4j.AsyncDriver``), so a timeout, a memory limit or a server that stays down reads the same
whichever door the question came through.

The rule: the server's timeout (or its termination of the transaction) and a client-side cut
off ``GRACE_S`` after it are a ``QueryTimeoutError`` naming ``GUIDEDRAG_QUERY_TIMEOUT``; the
transaction memory limit a ``QueryMemoryError`` naming the settings; what the driver calls
retryable is retried for ``READ_RETRY_S`` (doubling waits from 0.1 s up to 2 s, as its managed
transactions do), after which a server that stayed unreachable is a ``DatabaseUnavailableError``;
anything else (a syntax error, a missing index, a refused write) is the driver's own error.
"""

from __future__ import annotations

import time

from neo4j.exceptions import (
    ClientError,
    DriverError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
)

from guidedrag_graph.db.deadline import GRACE_S, DeadlinePassed, remaining
from guidedrag_graph.errors import DatabaseUnavailableError, QueryMemoryError, QueryTimeoutError


def within_budget(seconds: float) -> float:
    """A read's transaction timeout: ``seconds`` bounded by what is left of the call's budget
    (``deadline.remaining``); a budget already spent is the one-line timeout error (a 0 ms
    transaction timeout would mean none at all)."""
    left = remaining()
    if left is None:
        return seconds
    if left < 0.01:
        raise QueryTimeoutError(
            f"the call spent its {seconds:g} s (GUIDEDRAG_QUERY_TIMEOUT) before its last "
            f"query: narrow the selection (fewer or more specific terms) or raise the timeout"
        )
    return min(seconds, left)


def _timed_out(exc: Neo4jError) -> bool:
    """The server ended the transaction at its timeout (a ClientError) or terminated it (a
    TransientError the driver would retry: the same query would only be stopped again)."""
    code = exc.code or ""
    return "TransactionTimedOut" in code or "Terminated" in code


def _out_of_memory(exc: Neo4jError) -> bool:
    """The transaction hit ``db.memory.transaction.max`` (or the global pool): retrying the
    same query would only hit it again."""
    return "MemoryPoolOutOfMemoryError" in (exc.code or "")


class ReadRetries:
    """One read's retries: ``failure`` classifies each error, ``wait`` the pause before the next
    try. ``at`` is `` at <uri>`` (``connection.where``) or empty."""

    def __init__(self, retry_s: float, seconds: float, at: str = "") -> None:
        self.started = time.monotonic()
        self.give_up_at = self.started + retry_s
        self.seconds = seconds  # the query's transaction timeout, for the timeout lines
        self.at = at
        self.delay = 0.1

    def wait(self) -> float:
        """Seconds to sleep before the next try (doubling, at most 2 s)."""
        delay, self.delay = self.delay, min(2 * self.delay, 2.0)
        return delay

    def failure(self, exc: BaseException) -> BaseException | None:
        """The error to raise for ``exc`` (a one-line error, or ``exc`` itself), or None: retry."""
        seconds, at = self.seconds, self.at
        giving_up = time.monotonic() + self.delay > self.give_up_at
        if isinstance(exc, (DeadlinePassed, TimeoutError)):  # our cut-off, GRACE_S after
            return QueryTimeoutError(
                f"Neo4j{at} had not ended the query {GRACE_S:g} s after its {seconds:g} s "
                f"timeout (GUIDEDRAG_QUERY_TIMEOUT; the server is overloaded or not answering): "
                f"narrow the selection (fewer or more specific terms), retry later, or raise the "
                f"timeout"
            )
        if isinstance(exc, Neo4jError):
            if _timed_out(exc):
                return QueryTimeoutError(
                    f"Neo4j stopped the query after {seconds:g} s (GUIDEDRAG_QUERY_TIMEOUT): "
                    f"narrow the selection (fewer or more specific terms) or raise the timeout"
                )
            if _out_of_memory(exc):
                return QueryMemoryError(
                    f"Neo4j{at} stopped the query at its memory limit (per transaction "
                    f"db.memory.transaction.max, or all together "
                    f"dbms.memory.transaction.total.max): narrow the selection (fewer or more "
                    f"specific terms, a smaller top_k), retry later, or raise it in neo4j.conf"
                )
            if isinstance(exc, ClientError) or not exc.is_retryable() or giving_up:
                return exc
            return None
        if isinstance(exc, (ServiceUnavailable, SessionExpired)):
            if not giving_up:
                return None
            return DatabaseUnavailableError(
                f"Neo4j{at} is down ({exc.__class__.__name__} for "
                f"{time.monotonic() - self.started:.0f} s of retries): start it with "
                f"`guidedrag neo4j start` or set NEO4J_URI to a running server"
            )
        if isinstance(exc, DriverError) and exc.is_retryable() and not giving_up:
            return None
        return exc
