"""The template names of the reads a test made, in order, from ``GraphContext.read``'s DEBUG
log (``guidedrag_graph/db/reads.py``: ``read <template> {params} in <ms> ms: <n> rows``): for
tests that an edge reads its facts in the order its pure decision asks for them."""

from __future__ import annotations

import re
import threading

import pytest

from guidedrag_graph.context import GraphContext

READS_LOGGER = "guidedrag_graph.db.reads"
_READ = re.compile(r"^read (\w+) ")


def read_names(caplog: pytest.LogCaptureFixture) -> list[str]:
    """Each logged read's template name, in the order they were made."""
    lines = [r.getMessage() for r in caplog.records if r.name == READS_LOGGER]
    return [m.group(1) for m in map(_READ.match, lines) if m]


# The names ``db.reads.spawn`` gives the threads that refresh an expired answer in the background.
_REFRESHERS = ("guidedrag-link-index", "guidedrag-cache-refresh")


def settled(graph: GraphContext) -> None:
    """Wait for the background refreshes earlier tests' calls started on this process's shared
    state (a read of theirs would be logged inside this test's window: CI once saw a
    ``link_index`` read land in a later call's list), then forget what is held, so the next call
    reads everything in the foreground and nothing expires for a cache period."""
    for thread in threading.enumerate():
        if thread.name in _REFRESHERS:
            thread.join(timeout=60)
    graph.data.clear()
