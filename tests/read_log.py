"""The template names of the reads a test made, in order, from ``GraphContext.read``'s DEBUG
log (``guidedrag_graph/db/reads.py``: ``read <template> {params} in <ms> ms: <n> rows``): for
tests that an edge reads its facts in the order its pure decision asks for them."""

from __future__ import annotations

import re

import pytest

READS_LOGGER = "guidedrag_graph.db.reads"
_READ = re.compile(r"^read (\w+) ")


def read_names(caplog: pytest.LogCaptureFixture) -> list[str]:
    """Each logged read's template name, in the order they were made."""
    lines = [r.getMessage() for r in caplog.records if r.name == READS_LOGGER]
    return [m.group(1) for m in map(_READ.match, lines) if m]
