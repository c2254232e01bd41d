"""``guidedrag mcp``: the MCP server on stdio or streamable HTTP
(guidedrag_graph/cli/mcp_server.py)."""

from __future__ import annotations

import click

from guidedrag_graph.cli.common import load_settings
from guidedrag_graph.errors import ConfigurationError


@click.command("mcp")
@click.option(
    "--transport",
    type=click.Choice(["stdio", "streamable-http"]),
    default="stdio",
    show_default=True,
    help="stdio: a client starts the server as a subprocess; streamable-http: serve "
    "http://HOST:PORT/mcp to clients that connect",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="streamable-http: the address to listen on (the server has no authentication: keep "
    "it on loopback, or put it behind a proxy that authenticates)",
)
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=8000,
    show_default=True,
    help="streamable-http: the port",
)
@click.option(
    "--scope",
    default=None,
    help="the scope every tool is held to: a selection (DSL or JSON) that narrows "
    "GUIDEDRAG_SCOPE; no tool argument can widen it (docs/security.md, Scopes)",
)
def mcp_command(transport: str, host: str, port: int, scope: str | None) -> None:
    """Serve GuidedRAG's read-only tools to MCP clients (stdio or streamable HTTP).

    The tools: retrieve, select, cypher, suggest_entities and ask. It connects with the usual
    settings (NEO4J_URI, NEO4J_PASSWORD, GUIDEDRAG_*). Over stdio a client starts it as a
    subprocess: {"command": "guidedrag", "args": ["mcp"]}; over streamable HTTP clients connect
    to http://127.0.0.1:8000/mcp.
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

    with GuidedRAG(load_settings(), scope=scope) as rag:  # checked before serving
        serve(rag, "stdio" if transport == "stdio" else "streamable-http", host=host, port=port)
