"""The database versions the reads of one piece of work saw (the bookmark of each read).

A fact read once and kept (``context.KBState``, for ``GUIDEDRAG_RESOLUTION_CACHE_S``) can go
stale when someone writes, and for most facts that is harmless: a name resolved a minute ago
still ranks what it ranked. One fact is not: that a trusted scope holds **every** chunk of the
KB, which lets a call run the unscoped plan (so its rankings equal the unscoped ones). If
another tenant's documents are written after that fact was read, a call that trusted it would
rank them. So a call on such a scope collects the version of every read it makes (``seen``),
and compares them with the version the fact was read at: a read that saw a later write means
the fact may be stale, and the call is run again inside the scope. The bookmark a read
returns names the last transaction committed to the database when it ran, so a read that could
have seen the write always reports a version after it; nothing is read twice to know.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

Version = frozenset[str]

# The open ``seen`` blocks of this context, innermost last: a read is told to each of them.
_SEEN: contextvars.ContextVar[tuple[list[Version], ...]] = contextvars.ContextVar(
    "guidedrag_versions_seen", default=()
)


@contextlib.contextmanager
def seen() -> Iterator[list[Version]]:
    """Collect, in the list it yields, the version of every read made inside the block (on
    this thread or greenlet: a context variable, so concurrent calls keep their own; an
    enclosing block sees the reads of the blocks inside it too)."""
    versions: list[Version] = []
    token = _SEEN.set((*_SEEN.get(), versions))
    try:
        yield versions
    finally:
        _SEEN.reset(token)


def saw(version: Version) -> None:
    """A read saw ``version`` (called by both runners, in the caller's context)."""
    for versions in _SEEN.get():
        versions.append(version)


def collecting() -> bool:
    """Whether a ``seen`` block is open: the runners ask only then for the bookmark."""
    return bool(_SEEN.get())
