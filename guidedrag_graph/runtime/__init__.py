"""Managed local Neo4j servers for tests, CI and the demo (see ``neo4j_local``)."""

from guidedrag_graph.runtime.neo4j_local import (
    PINNED_VERSIONS,
    LocalNeo4j,
    ServerStatus,
    find_java,
    install,
    server_line,
)

__all__ = ["PINNED_VERSIONS", "LocalNeo4j", "ServerStatus", "find_java", "install", "server_line"]
