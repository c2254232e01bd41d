"""Parameters handed to the driver, rows taken from it, and a read cut off: what the neo4j
Python driver (6.x) does at a cost no setting turns off, or has no public way to do.

- **RUN's debug line is formatted whether or not anyone logs it.** The Bolt connection builds
  ``" ".join(map(repr, (query, parameters, extra)))`` before calling ``log.debug``, so a
  384-float query vector is turned into text on every read (137 us measured, about a tenth of a
  whole retrieval on loopback), and a write batch's embeddings on every batch. ``unlogged``
  hands the driver the same values with long lists as ``UnloggedList``: a ``list`` (the packer
  sends it as the same Bolt list) whose ``repr`` names its length instead of its items.
- **``Record.data()`` walks every value** through ``isinstance`` checks against abstract base
  classes to turn nodes, relationships and paths into dicts; five ranked rows cost 83 us where
  ``dict(zip(keys, values))`` costs 7. ``row`` takes the short way when every value is a
  scalar or a list of scalars (what our retrieval queries return) and ``data()`` otherwise, so
  a row is the same dict either way.
- **A running query cannot be cancelled** through the driver's API. ``cut_off`` is what the
  read deadline's watchdog calls (``read_deadline``, ``db.read_query``); the driver then logs
  the connection it finds dead at ERROR, and ``ReadCut`` drops those records of a read we
  cut (the caller gets its one-line ``QueryTimeoutError`` instead).
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
from collections.abc import Mapping
from typing import Any

from neo4j import Record, Session

# Lists at least this long are handed over unlogged (a query vector, a batch's rows, a long id
# list); shorter ones print as they are, which keeps a debug log that is switched on readable.
UNLOGGED_MIN = 16

_SCALARS = frozenset({str, int, float, bool, type(None)})


class UnloggedList(list[Any]):
    """A list whose ``repr`` is its length: the driver formats every RUN's parameters for a
    debug line, and formatting a vector costs more than sending it."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<list of {len(self)}>"


def unlogged(params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` with every long list (or tuple) as an ``UnloggedList`` of the same items."""
    return {
        name: UnloggedList(value)
        if type(value) in (list, tuple) and len(value) >= UNLOGGED_MIN
        else value
        for name, value in params.items()
    }


def row(record: Record) -> dict[str, Any]:
    """``record.data()``, without its walk when no value needs converting."""
    values = record.values()
    for value in values:
        kind = type(value)
        if kind in _SCALARS:
            continue
        if kind is list and all(type(item) in _SCALARS for item in value):
            continue
        return record.data()
    return dict(zip(record.keys(), values, strict=True))


# Threads whose read the watchdog is cutting off: the driver logs the connection it then finds
# dead at ERROR ("Failed to read from defunct connection"), which is our own doing and would
# print beside the one-line QueryTimeoutError; ``_QuietCuts`` drops those records.
_CUT_THREADS: set[int] = set()


class _QuietCuts(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.thread not in _CUT_THREADS


logging.getLogger("neo4j.io").addFilter(_QuietCuts())


class ReadCut:
    """One read as ``cut_off`` sees it: its thread, its session once opened, and whether it is
    still running. ``with ReadCut() as cut:`` around the read drops the driver's log records of
    a cut read from the cut until the read has returned (and never after: a cut that comes as the
    read ends takes its thread out again)."""

    __slots__ = ("owner", "running", "session")

    def __init__(self) -> None:
        self.owner = threading.get_ident()
        self.running = True
        self.session: Session | None = None

    def __enter__(self) -> ReadCut:
        return self

    def __exit__(self, *exc: object) -> None:
        self.running = False
        _CUT_THREADS.discard(self.owner)


def cut_off(cut: ReadCut) -> bool:
    """Wake a read blocked on the server: shut down the socket of the connection its session
    holds (the receive fails, the driver drops the connection, the server ends the transaction
    of a client that went away). The driver has no public way to cancel a running query, so
    this reads its session's connection; ``tests/test_driver_io_db.py`` fails if a driver
    release moves it. False while there is no connection yet (it is being opened, bounded by
    the driver's ``connection_timeout``): the watchdog tries again."""
    wrapped = getattr(getattr(cut.session, "_connection", None), "socket", None)
    raw = getattr(wrapped, "_socket", wrapped)
    if not isinstance(raw, socket.socket):
        return False
    _CUT_THREADS.add(cut.owner)
    if not cut.running:  # it ended meanwhile: nothing to quiet, nothing to cut
        _CUT_THREADS.discard(cut.owner)
        return True
    with contextlib.suppress(OSError):  # already closed: the read has its error
        socket.socket.shutdown(raw, socket.SHUT_RDWR)  # the fd itself, TLS or not
    return True
