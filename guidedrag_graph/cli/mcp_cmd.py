"""``guidedrag mcp``: the MCP server on stdio (guidedrag_graph/cli/mcp_server.py)."""

from __future__ import annotations

import click

from guidedrag_graph.cli.common import load_settings
from guidedrag_graph.errors import ConfigurationError


@click.command("mcp")
def mcp_command() -> None:
    """Serve GuidedRAG's read-only tools to an MCP client over stdio.

    The tools: retrieve, select, cypher, suggest_entities and ask. It connects with the usual
    settings (NEO4J_URI, NEO4J_PASSWORD, GUIDEDRAG_*); a client starts it as a
    subprocess: {"command": "guidedrag", "args": ["mcp"]}.
    """
    try:
        from guidedrag_graph.cli.mcp_server import serve
    except ModuleNotFoundError as exc:
        if exc.name is None or not exc.name.startswith("mcp"):
            raise
        raise ConfigurationError(
            "the MCP server needs the mcp package: pip install 'guidedrag-graph[mcp]'"
        ) from exc
    from guidedrag_graph.pipeline import GuidedRAG

    with GuidedRAG(load_settings()) as rag:
        serve(rag)
