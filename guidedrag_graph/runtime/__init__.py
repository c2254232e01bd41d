"""Managed local Neo4j servers for tests, CI and the demo (see ``neo4j_local``)."""

from guidedrag_graph.runtime.neo4j_local import (
    PINNED_VERSIONS,
    LocalNeo4j,
    ServerStatus,
    find_java,
    install,
    server_line,
)
from guidedrag_graph.runtime.plugins import (
    RANK_PROCEDURE,
    add_plugin,
    build_rank_plugin,
    install_rank_plugin,
)

__all__ = [
    "PINNED_VERSIONS",
    "RANK_PROCEDURE",
    "LocalNeo4j",
    "ServerStatus",
    "add_plugin",
    "build_rank_plugin",
    "find_java",
    "install",
    "install_rank_plugin",
    "server_line",
]
