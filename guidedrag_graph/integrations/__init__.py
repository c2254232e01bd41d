"""Adapters to other libraries: neo4j-graphrag (core: a retriever, an embedder and a GraphRAG
that does not call its LLM on an abstention), LangChain (``[langchain]``) and
LlamaIndex (``[llamaindex]``); the MCP server (``[mcp]``) is ``guidedrag mcp``
(guidedrag_graph/cli/mcp_server.py).

The names below are imported on first use, each from its own module, so importing this package
never pulls in an optional library; a missing one fails with the ``pip install`` line to run.

>>> from guidedrag_graph.integrations import GuidedLangChainRetriever   # needs [langchain]
"""

from __future__ import annotations

import importlib
from typing import Any

# name -> (module, the extra that installs what it imports)
_EXPORTS: dict[str, tuple[str, str | None]] = {
    "GuidedRetriever": ("guidedrag_graph.integrations.neo4j_graphrag", None),
    "GuidedGraphRAG": ("guidedrag_graph.integrations.neo4j_graphrag", None),
    "GuidedEmbedder": ("guidedrag_graph.integrations.embedder", None),
    "GuidedLangChainRetriever": ("guidedrag_graph.integrations.langchain", "langchain"),
    "GuidedEmbeddings": ("guidedrag_graph.integrations.langchain", "langchain"),
    "GuidedLlamaIndexRetriever": ("guidedrag_graph.integrations.llamaindex", "llamaindex"),
    "GuidedEmbedding": ("guidedrag_graph.integrations.llamaindex", "llamaindex"),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, extra = _EXPORTS[name]
    try:
        loaded = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if extra is None or (exc.name or "").startswith("guidedrag_graph"):
            raise
        raise ModuleNotFoundError(
            f"{name} needs {exc.name}: pip install 'guidedrag-graph[{extra}]'", name=exc.name
        ) from exc
    return getattr(loaded, name)
