"""A new instance's first call checks the warm state it trusted, instead of its ``open`` reading
the database's version (``context.adoption_and_version``).

An app that opens a ``GuidedRAG`` per request (a FastAPI dependency, a tenant's scoped
instance) paid a ``RETURN 1`` per request at open, so that a write made before the instance
opened is seen by it: the shared state (``context.KBState``) forgets its data answers when the
version moved. Every read already reports the version it saw (``db/read_versions.py``), so the
first call runs optimistically on the state and compares: when each of its reads saw the
version the state held at open, nothing was written since and the result stands; when one saw
another, the state forgets its data answers (``KBState.observe``) and the call runs again on
fresh reads, as ``on_one_version`` does for a trusted scope. A call that read nothing at all
(every answer kept) reads the version itself, one ``RETURN 1``, shared by the threads asking
together (``db/versions.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from guidedrag_graph.context import GraphContext, forget_adoption
from guidedrag_graph.db.read_versions import seen
from guidedrag_graph.db.reads import Read
from guidedrag_graph.db.versions import database_version
from guidedrag_graph.templates import queries as templates

_R = TypeVar("_R")


def checked_first(graph: GraphContext, run: Callable[[], _R]) -> _R:
    """``run()``; on a context that opened without reading (``graph.trusted``), its result only
    if no read of it saw a write made since the state's version, else ``run()`` again after the
    state forgot its data answers."""
    trusted = graph.trusted
    state = graph.state
    if trusted is None or state is None:
        return run()
    with seen() as versions:
        result = run()
    if not versions:  # every answer was kept: the version is asked for once
        check = Read("connection_check", templates.query("connection_check"), {})
        versions.append(database_version(graph.driver, graph.database, check))
    graph.trusted = None  # checked: later calls are a reused instance's
    if all(version == trusted for version in versions):
        return result
    state.observe(versions[-1])  # forgets the data answers read before the write
    forget_adoption(graph.driver, graph.database)  # the next open reads the record again
    return run()
