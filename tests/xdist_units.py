"""The work units ``--dist loadfile`` hands to the xdist workers: one per module, except the
modules that talk to the second server (Neo4j 5.26 with APOC, ``apoc_settings`` in conftest),
which travel as one unit.

That server is session-scoped per worker: spread over both workers, these modules started it
twice (a JVM start of half a minute or more on CI's two cores, and its memory), and each worker
loaded the tiny KB on its own copy. The controller collects nothing, so it cannot see which
modules use the fixture: it reads them from ``SERVER_526_MODULES``, and conftest refuses a
collection in which a module that uses the fixture is missing from it.
"""

from __future__ import annotations

from xdist.scheduler import LoadFileScheduling  # type: ignore[import-untyped]

SERVER_526_MODULES = frozenset(
    {
        "tests/test_builders_apoc.py",
        "tests/test_builders_langchain.py",
        "tests/test_builders_llamaindex.py",
        "tests/test_builders_neo4j_graphrag.py",
        "tests/test_scope_526.py",
        "tests/test_templates_526.py",
    }
)
SERVER_526_UNIT = "the modules on the Neo4j 5.26 server"


def work_unit(nodeid: str) -> str:
    """The unit a test travels in: its module, or the 5.26 server's one unit."""
    module = nodeid.split("::", 1)[0]
    return SERVER_526_UNIT if module in SERVER_526_MODULES else module


class LoadFileSharingServers(LoadFileScheduling):  # type: ignore[misc]
    """``--dist loadfile`` with the 5.26 server's modules in one unit (first seen, first sent,
    as xdist sends modules when ``--no-loadscope-reorder`` keeps the collection order)."""

    def _split_scope(self, nodeid: str) -> str:
        return work_unit(nodeid)
