"""Answers about the data kept for a fixed time (``GUIDEDRAG_RESOLUTION_CACHE_S``): the cache
of ``context.KBState``, shared by every context on one driver, database, settings and schema.

An answer that is dear to read (the relation vocabulary and its counts: 309 ms on MuSiQue) is
kept with ``refreshed``: once it expires, calls are answered from the expired value (for up to
``STALE_PERIODS`` periods) while one reload runs in the background (``reads.spawn``: a thread,
or a task on an async caller's loop), as the link index is (``linking/index.py``), so no request
on a warm process waits for it once per period; only the first call of a cold process, or the
first after ``clear()`` (a write was seen), reads it in the foreground.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from guidedrag_graph.db.reads import spawn

_V = TypeVar("_V")

# How many periods an expired answer of ``refreshed`` may still answer while its reload runs.
STALE_PERIODS = 10


class ExpiringCache:
    """Answers about the data — which entity ids a name means, the relation types — kept for a
    fixed time (``GUIDEDRAG_RESOLUTION_CACHE_S``), so a question about entities asked before
    costs one round trip instead of two. The invalidation rule is that time, and ``clear()``:
    a graph changed by another tool is seen at the latest that many seconds later. A name the
    KB did not know is kept with the version it was read at and trusted only after a
    ``RETURN 1`` shows that version unchanged (``Resolver._still_unknown``): a new entity is
    found at once."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._values: dict[Any, tuple[float, Any]] = {}
        self._lock = threading.Lock()
        # ``refreshed``'s expired answers, kept STALE_PERIODS periods; the keys reloading; and
        # how many clear() calls so far (a reload begun before one does not keep its answer).
        self._stale: dict[Any, tuple[float, Any]] = {}
        self._reloading: set[Any] = set()
        self._cleared = 0

    def get(self, key: Any) -> Any:
        """The value kept under ``key``, or None (never kept, expired, or caching off)."""
        with self._lock:
            kept = self._values.get(key)
            if kept is None:
                return None
            if kept[0] < time.monotonic():
                del self._values[key]
                return None
            return kept[1]

    def put(self, key: Any, value: Any, seconds: float | None = None) -> None:
        """Keep ``value`` for the cache's time (or ``seconds``: a longer-lived companion entry,
        still forgotten by ``clear()``)."""
        if self.seconds <= 0:
            return
        with self._lock:
            self._values[key] = (time.monotonic() + (seconds or self.seconds), value)

    def refreshed(
        self, key: Any, load: Callable[[], _V], keep: Callable[[_V], bool] | None = None
    ) -> _V:
        """The value kept under ``key``; ``load()``'s, read now and kept, when none is held; and
        once it expired (for ``STALE_PERIODS`` periods more), the expired value while one
        ``load()`` in the background replaces it (see the module). ``keep``: which answers are
        kept at all (a relation type in use is, one not in use is asked again every call)."""
        if self.seconds <= 0:
            return load()
        now = time.monotonic()
        with self._lock:
            kept = self._values.get(key)
            if kept is not None and kept[0] >= now:
                return kept[1]  # type: ignore[no-any-return]
            stale = self._stale.get(key)
            usable = stale is not None and stale[0] >= now
            start = usable and key not in self._reloading
            if start:
                self._reloading.add(key)
            cleared = self._cleared
        if not usable:
            return self._keep(key, load(), cleared, keep)
        if start:
            spawn(lambda: self._reload(key, load, cleared, keep), name="guidedrag-cache-refresh")
        return stale[1]  # type: ignore[index, no-any-return]

    def _reload(
        self, key: Any, load: Callable[[], Any], cleared: int, keep: Callable[[Any], bool] | None
    ) -> None:
        try:
            self._keep(key, load(), cleared, keep)
        except Exception:  # the next call reads it in the foreground, and sees the error
            with self._lock:
                self._stale.pop(key, None)
        finally:
            with self._lock:
                self._reloading.discard(key)

    def _keep(
        self, key: Any, value: _V, cleared: int, keep: Callable[[_V], bool] | None = None
    ) -> _V:
        """Keep ``value`` (and its stale copy), unless ``clear()`` ran since it was asked for or
        ``keep`` refuses it (then an expired copy goes too)."""
        now = time.monotonic()
        with self._lock:
            if keep is not None and not keep(value):
                self._stale.pop(key, None)
            elif self._cleared == cleared:
                self._values[key] = (now + self.seconds, value)
                self._stale[key] = (now + STALE_PERIODS * self.seconds, value)
        return value

    def clear(self, kind: str | None = None) -> None:
        """Forget everything, or only the answers of one kind (``"entity"``: resolved names;
        keys are ``(kind, ...)`` tuples or a kind's own name)."""
        with self._lock:
            self._cleared += 1
            if kind is None:
                self._values.clear()
                self._stale.clear()
                return
            for kept in (self._values, self._stale):
                for key in [
                    k for k in kept if k == kind or (isinstance(k, tuple) and k[0] == kind)
                ]:
                    del kept[key]
