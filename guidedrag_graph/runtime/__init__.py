"""Managed local Neo4j servers for tests, CI and the demo (see ``neo4j_local``)."""

from guidedrag_graph.runtime.jars import install
from guidedrag_graph.runtime.neo4j_local import LocalNeo4j
from guidedrag_graph.runtime.plugins import (
    RANK_PROCEDURE,
    add_plugin,
    build_rank_plugin,
    install_rank_plugin,
)
from guidedrag_graph.runtime.server_env import ServerStatus
from guidedrag_graph.runtime.versions import PINNED_VERSIONS, find_java, server_line

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
