"""``guidedrag mcp``: GuidedRAG as a Model Context Protocol server (stdio; the official ``mcp``
SDK, ``pip install 'guidedrag-graph[mcp]'``).

An agent gets five tools over the configured database: ``retrieve`` (ranked chunks for a
question), ``select`` (the size of every term of a selection and its chunk ids), ``cypher`` (a
selection as a Neo4j Browser script), ``suggest_entities`` (names the KB knows close to a name,
or the entities a question names) and ``ask`` (retrieve, augment and, when an LLM is configured,
answer). Every parameter is typed and described in the tool's JSON schema.

Read-only by construction: no tool takes Cypher to run or writes anything. The tools are the
library's own read paths (``GuidedRAG.retrieve``/``ask``, ``Selector``, the resolver), whose
queries all run in READ transactions under the query timeout; ``cypher`` only prints a script.

Client configuration (Claude Desktop and the like)::

    {"mcpServers": {"guidedrag": {"command": "guidedrag", "args": ["mcp"],
                                  "env": {"NEO4J_URI": "bolt://127.0.0.1:7687",
                                          "NEO4J_PASSWORD": "..."}}}}
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from guidedrag_graph.cli.failure import explain
from guidedrag_graph.cli.select_cmd import browser_script
from guidedrag_graph.integrations._calls import CallOptions
from guidedrag_graph.integrations._calls import retrieve as run_retrieve
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.semantics import merge_stated

__all__ = ["build_server", "serve"]

_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
_MAX_K = 100

Question = Annotated[
    str, Field(min_length=1, max_length=4_000, description="the question, in natural language")
]
Entities = Annotated[
    list[str] | None,
    Field(
        default=None,
        max_length=50,
        description="entity names the question is about, as the KB names them (see "
        "suggest_entities); steering boosts their chunks, their relation hops and their "
        "neighbourhood. Omit to let the server decide from the question alone",
    ),
]
Relations = Annotated[
    list[str] | None,
    Field(
        default=None,
        max_length=50,
        description="relation types the question asks about (e.g. IS_CURRENCY_OF); they make "
        "the question relational",
    ),
]
TopK = Annotated[
    int | None,
    Field(default=None, ge=1, le=_MAX_K, description="how many chunks to return (default 5)"),
]
Steering = Annotated[
    Literal["auto", "hard", "soft"] | None,
    Field(
        default=None,
        description="auto (default): rank every chunk with graded boosts from the graph; hard: "
        "only chunks inside the selection (the paper); soft: the selection boosted over all",
    ),
]
SelectionText = Annotated[
    str | None,
    Field(
        default=None,
        max_length=10_000,
        description="a selection in the DSL, e.g. \"entity('Euro') & hop('Euro', "
        "['IS_CURRENCY_OF'])\"; instead of the one the entities imply (runs hard under auto)",
    ),
]
Expression = Annotated[
    str,
    Field(
        min_length=1,
        max_length=10_000,
        description="a selection in the DSL: entity('X'), hop('X', ['REL']), khop('X', 2), "
        "near(...), document('T'), combined with | & - ^",
    ),
]


def _chunks(result: Any) -> list[dict[str, Any]]:
    return [
        {
            "chunk_id": c.id,
            "document_id": c.document_id,
            "document_title": c.document_title,
            "text": c.text,
            "score": c.score,
            "cosine": c.cosine,
            "tier": c.tier,
        }
        for c in result.chunks
    ]


def _tool_error(exc: Exception) -> ToolError:
    """The CLI's one-line message for ``exc`` (it names the problem and the fix)."""
    return ToolError(explain(exc)[0])


def build_server(rag: GuidedRAG) -> MCPServer:
    """The server, its tools bound to ``rag`` (which the caller opens and closes)."""
    server = MCPServer(
        name="guidedrag",
        instructions="GuidedRAG over a Neo4j knowledge graph: name the entities a question is "
        "about (suggest_entities finds the KB's spelling) and retrieve or ask. An empty "
        "result with abstained=true means the KB does not know a name: do not guess.",
    )

    @server.tool(annotations=_READ_ONLY)
    def retrieve(
        question: Question,
        entities: Entities = None,
        relations: Relations = None,
        k: TopK = None,
        steering: Steering = None,
        selection: SelectionText = None,
    ) -> dict[str, Any]:
        """Rank the KB's chunks for a question, steered by the entities it is about; returns
        the chunks (id, document, text, scores, tier) best first, the selection and whether
        the KB abstained (a name it does not know)."""
        try:
            result = run_retrieve(
                rag,
                question,
                CallOptions(merge_stated(None, entities, relations), None, k, steering, selection),
            )
        except Exception as exc:
            raise _tool_error(exc) from exc
        return {
            "chunks": _chunks(result),
            "selection": result.selection_text,
            "selection_size": result.selection_size,
            "steering": result.steering,
            "abstained": result.abstained,
            "empty": None if result.empty is None else result.empty.to_json(),
            "notes": result.notes,
        }

    @server.tool(annotations=_READ_ONLY)
    def select(
        expression: Expression,
        max_ids: Annotated[
            int, Field(default=100, ge=0, le=10_000, description="chunk ids to return at most")
        ] = 100,
    ) -> dict[str, Any]:
        """The size of every term of a selection (like EXPLAIN ANALYZE) and the chunk ids it
        selects; why it is empty when it is."""
        try:
            prepared = rag.selector.prepare(expression_of(rag, expression))
            tree = rag.selector.sizes(prepared)
            ids = rag.selector.chunk_ids(prepared)
            empty = prepared.empty or (rag.selector.explain_empty(prepared) if not ids else None)
        except Exception as exc:
            raise _tool_error(exc) from exc
        return {
            "selection": prepared.text,
            "size": len(ids),
            "tree": tree.to_json(),
            "chunk_ids": ids[:max_ids],
            "truncated": tree.truncated or len(ids) > max_ids,
            "empty": None if empty is None else empty.to_json(),
            "warnings": [w.to_json() for w in prepared.warnings],
        }

    @server.tool(annotations=_READ_ONLY)
    def cypher(expression: Expression) -> str:
        """A selection as a Neo4j Browser script (:param lines, then the query returning chunk
        ids, titles and text); names are resolved first, so it carries entity ids. Nothing is
        run: paste it into Browser."""
        try:
            prepared = rag.selector.prepare(expression_of(rag, expression))
        except Exception as exc:
            raise _tool_error(exc) from exc
        return browser_script(prepared, rag.schema)

    @server.tool(annotations=_READ_ONLY)
    def suggest_entities(
        text: Annotated[
            str,
            Field(min_length=1, max_length=1_000, description="an entity name, or a question"),
        ],
        from_question: Annotated[
            bool,
            Field(
                default=False,
                description="true: the entities the question names (the entity linker); "
                "false: KB names close to the name (fuzzy full-text)",
            ),
        ] = False,
        limit: Annotated[
            int, Field(default=5, ge=1, le=50, description="names to return at most")
        ] = 5,
    ) -> list[str]:
        """Entity names as the KB spells them: close to a (misspelt) name, or named by a
        question; pass them to retrieve or ask as entities."""
        try:
            if from_question:
                from guidedrag_graph.tagging import tagger_for

                return tagger_for(rag.settings.tagger, rag.graph).tag(text)[:limit]
            return rag.selector.resolver.suggestions(text, limit=limit)
        except Exception as exc:
            raise _tool_error(exc) from exc

    @server.tool(annotations=_READ_ONLY)
    def ask(
        question: Question,
        entities: Entities = None,
        relations: Relations = None,
        k: TopK = None,
        steering: Steering = None,
    ) -> dict[str, Any]:
        """Answer a question from the KB: retrieve, build the augmented prompt and, when the
        server has an LLM configured, generate a cited answer (else the prompt is returned for
        you to answer from). Abstains, without calling the LLM, on names the KB does not know."""
        try:
            answer = rag.ask(
                question,
                semantics=merge_stated(None, entities, relations),
                k=k,
                steering=steering,
            )
        except Exception as exc:
            raise _tool_error(exc) from exc
        return {
            "text": answer.text,
            "abstained": answer.abstained,
            "reason": answer.reason,
            "citations": [c.__dict__ for c in answer.citations],
            "prompt": None if answer.prompt is None or answer.llm_called else answer.prompt.text,
            "chunks": _chunks(answer.retrieval),
            "selection": answer.retrieval.selection_text,
        }

    return server


def expression_of(rag: GuidedRAG, text: str) -> Any:
    """DSL text parsed under the settings' limits (a syntax error names its position)."""
    from guidedrag_graph.selection import parse

    return parse(text, rag.selector.limits)


def serve(rag: GuidedRAG) -> None:
    """Serve the tools on stdin/stdout until the client closes them."""
    build_server(rag).run("stdio")
