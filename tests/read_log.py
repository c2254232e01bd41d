"""The template names of the reads a test made, in order, from ``GraphContext.read``'s DEBUG
log (``guidedrag_graph/db/reads.py``: ``read <template> {params} in <ms> ms: <n> rows``): for
tests that an edge reads its facts in the order its pure decision asks for them."""

from __future__ import annotations

import re

import pytest

from guidedrag_graph.context import GraphContext
from guidedrag_graph.db.reads import SPAWNED

READS_LOGGER = "guidedrag_graph.db.reads"
_READ = re.compile(r"^read (\w+) ")


def read_names(caplog: pytest.LogCaptureFixture) -> list[str]:
    """Each logged read's template name, in the order they were made."""
    lines = [r.getMessage() for r in caplog.records if r.name == READS_LOGGER]
    return [m.group(1) for m in map(_READ.match, lines) if m]


def settled(graph: GraphContext) -> None:
    """Wait for the background refreshes earlier tests' calls started on this process's shared
    state (``db.reads.spawn``'s threads: a read of theirs would be logged inside this test's
    window: CI once saw a ``link_index`` read land in a later call's list), then forget what is
    held, so the next call reads everything in the foreground and nothing expires for a cache
    period. Sync callers only: an async caller's refreshes are tasks on its own loop."""
    for thread in list(SPAWNED):
        thread.join(timeout=60)
    graph.data.clear()
