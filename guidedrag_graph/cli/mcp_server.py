"""``guidedrag mcp``: GuidedRAG as a Model Context Protocol server (the official ``mcp`` SDK,
``pip install 'guidedrag-graph[mcp]'``), over stdio or streamable HTTP.

An agent gets five tools over the configured database: ``retrieve`` (ranked chunks for a
question), ``select`` (the size of every term of a selection and its chunk ids), ``cypher`` (a
selection as a Neo4j Browser script), ``suggest_entities`` (names the KB knows close to a name,
or the entities a question names) and ``ask`` (retrieve, augment and, when an LLM is configured,
answer). Every parameter is typed and described in the tool's input schema, which refuses any
argument it does not name (``"entity"`` for ``"entities"`` is an error naming both, never
silently dropped); every result is a pydantic model (guidedrag_graph/cli/mcp_schema.py), so the
output schemas list their fields. Each result carries its own call's abstention and reason,
linked names, tier sizes and steering.

Read-only by construction: no tool takes Cypher to run or writes anything. The tools are the
library's own read paths (``GuidedRAG.retrieve``/``ask``, ``Selector``, the resolver), whose
queries all run in READ transactions under the query timeout; ``cypher`` only prints a script.

Client configuration (Claude Desktop and the like), stdio::

    {"mcpServers": {"guidedrag": {"command": "guidedrag", "args": ["mcp"],
                                  "env": {"NEO4J_URI": "bolt://127.0.0.1:7687",
                                          "NEO4J_PASSWORD": "..."}}}}

or over HTTP: ``guidedrag mcp --transport streamable-http`` serves ``http://127.0.0.1:8000/mcp``.

``retrieve`` and ``ask`` run on the async core: ``serve`` opens a ``GuidedRAG`` with
``GuidedRAG.aopen`` (a ``neo4j.AsyncDriver``) on the server's event loop, over either transport,
and the tools await its ``aretrieve``/``aask``, so concurrent calls share the loop and no read
waits on a thread. ``select``, ``cypher`` and ``suggest_entities`` are sync tools on the
``neo4j.Driver`` pipeline (the SDK runs them on a worker thread).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, cast

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from guidedrag_graph.cli.failure import explain
from guidedrag_graph.cli.mcp_schema import (
    Answered,
    Entities,
    Expression,
    Filters,
    Question,
    Relations,
    Retrieval,
    Selected,
    SelectionText,
    Steering,
    TopK,
    from_answer,
    from_retrieval,
    from_selection,
)
from guidedrag_graph.cli.scoped_selection import prepare_in_scope, selected
from guidedrag_graph.cli.select_cmd import browser_script
from guidedrag_graph.integrations._calls import CallOptions, aask, aretrieve, pick
from guidedrag_graph.integrations._tool import core_checks, one_line
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.selection.scope_names import selector_in_scope

__all__ = ["TRANSPORTS", "build_server", "serve"]

TRANSPORTS = ("stdio", "streamable-http")
Transport = Literal["stdio", "streamable-http"]
_DOOR = "guidedrag mcp"
_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)


def _tool_error(exc: Exception) -> ToolError:
    """The CLI's one-line message for ``exc`` (it names the problem and the fix)."""
    return ToolError(explain(exc)[0])


class StrictTool(Tool):
    """A tool whose arguments are checked before the SDK sees them: an unknown name, or a bad
    value, is refused in one line (no pydantic dump, no URL), and whose refusals read as the
    core words them."""

    checks: dict[str, Any] = Field(default_factory=dict, exclude=True)

    @classmethod
    def strict(cls, fn: Any, checks: dict[str, Any]) -> StrictTool:
        tool = cast(
            StrictTool, cls.from_function(fn, annotations=_READ_ONLY, structured_output=True)
        )
        base = tool.fn_metadata.arg_model
        forbidding = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
        strict: type[BaseModel] = type(base.__name__, (base,), {"model_config": forbidding})
        tool.fn_metadata.arg_model = cast(Any, strict)
        tool.parameters = strict.model_json_schema(by_alias=True)
        tool.checks = checks
        return tool

    async def run(
        self, arguments: dict[str, Any], context: Any, convert_result: bool = False
    ) -> Any:
        try:
            self.fn_metadata.validate_arguments(arguments)
        except ValidationError as exc:
            known = list(self.parameters.get("properties", {}))
            raise ToolError(one_line(exc, door=self.name, known=known, core=self.checks)) from None
        try:
            return await super().run(arguments, context, convert_result)
        except ToolError as exc:
            # The SDK prefixes "Error executing tool NAME: "; the tools' own refusals are
            # already one line in the core's words, the same as at every other door.
            if type(exc) is ToolError and type(exc.__cause__) is ToolError:
                raise ToolError(str(exc.__cause__)) from None
            raise


def build_server(rag: GuidedRAG, async_rag: GuidedRAG | None = None) -> MCPServer:
    """The server, its tools bound to the pipelines the caller opens and closes: ``retrieve``
    and ``ask`` await ``aretrieve``/``aask`` on ``async_rag`` (opened with ``GuidedRAG.aopen``
    on the server's event loop), ``select``, ``cypher`` and ``suggest_entities`` run on ``rag``
    (a ``neo4j.Driver``; the SDK runs sync tools on a worker thread). Without ``async_rag``,
    ``retrieve`` and ``ask`` are refused in one line naming it."""

    if async_rag is not None and rag.scope is not None:  # never wider than rag's scope
        async_rag = async_rag.scoped(rag.scope)

    def awaited(call: str) -> GuidedRAG:
        return pick((async_rag, rag), asynchronous=True, door=_DOOR, call=call)

    async def retrieve(
        question: Question,
        entities: Entities = None,
        relations: Relations = None,
        k: TopK = None,
        steering: Steering = None,
        selection: SelectionText = None,
        filters: Filters = None,
    ) -> Retrieval:
        """Rank the KB's chunks for a question, steered by the entities it is about; returns
        the chunks (id, document, text, scores, tier) best first, the selection, the linked
        names and tier sizes, and whether the KB abstained (a name it does not know)."""
        options = CallOptions(
            entities=entities,
            relations=relations,
            k=k,
            steering=steering,
            selection=selection,
            filters=filters,
        )
        try:
            return from_retrieval(await aretrieve(awaited("retrieve"), question, options))
        except Exception as exc:
            raise _tool_error(exc) from exc

    def select(
        expression: Expression,
        max_ids: Annotated[
            int, Field(default=100, ge=0, le=10_000, description="chunk ids to return at most")
        ] = 100,
    ) -> Selected:
        """The size of every term of a selection (like EXPLAIN ANALYZE) and the chunk ids it
        selects; why it is empty when it is."""
        try:
            found = prepare_in_scope(rag.selector, expression_of(rag, expression), rag.scope)
            prepared = found.prepared
            tree, ids, empty = selected(rag.selector, found)
        except Exception as exc:
            raise _tool_error(exc) from exc
        return from_selection(
            prepared.text,
            ids,
            tree.to_json(),
            max_ids=max_ids,
            truncated=tree.truncated,
            empty=empty,
            warnings=prepared.warnings,
        )

    def cypher(expression: Expression) -> str:
        """A selection as a Neo4j Browser script (:param lines, then the query returning chunk
        ids, titles and text); names are resolved first, so it carries entity ids. Nothing is
        run: paste it into Browser."""
        try:
            expr = expression_of(rag, expression)
            prepared = prepare_in_scope(rag.selector, expr, rag.scope).prepared
        except Exception as exc:
            raise _tool_error(exc) from exc
        return browser_script(prepared, rag.schema)

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
            # Only names an in-scope chunk mentions (the server's --scope): never another's.
            resolver = selector_in_scope(rag.selector, rag.scope).resolver
            if from_question:
                from guidedrag_graph.linking.taggers import tagger_for

                named = tagger_for(rag.settings.tagger, rag.graph).tag(text)
                return (named if resolver.scope is None else resolver.scope.keep_names(named))[
                    :limit
                ]
            return resolver.suggestions(text, limit=limit)
        except Exception as exc:
            raise _tool_error(exc) from exc

    async def ask(
        question: Question,
        entities: Entities = None,
        relations: Relations = None,
        k: TopK = None,
        steering: Steering = None,
        selection: SelectionText = None,
        filters: Filters = None,
    ) -> Answered:
        """Answer a question from the KB: retrieve, build the augmented prompt and, when the
        server has an LLM configured, generate a cited answer (else the prompt is returned for
        you to answer from). Abstains, without calling the LLM, on names the KB does not know."""
        options = CallOptions(
            entities=entities,
            relations=relations,
            k=k,
            steering=steering,
            selection=selection,
            filters=filters,
        )
        try:
            return from_answer(await aask(awaited("ask"), question, options))
        except Exception as exc:
            raise _tool_error(exc) from exc

    checks = core_checks(rag.settings)
    functions = (retrieve, select, cypher, suggest_entities, ask)
    tools: list[Tool] = [StrictTool.strict(fn, checks) for fn in functions]
    return MCPServer(
        name="guidedrag",
        instructions="GuidedRAG over a Neo4j knowledge graph: name the entities a question is "
        "about (suggest_entities finds the KB's spelling) and retrieve or ask. An empty "
        "result with abstained=true means the KB does not know a name: do not guess.",
        tools=tools,
    )


def expression_of(rag: GuidedRAG, text: str) -> Any:
    """DSL text parsed under the settings' limits (a syntax error names its position)."""
    from guidedrag_graph.selection import parse

    return parse(text, rag.selector.limits)


def serve(
    rag: GuidedRAG, transport: Transport = "stdio", *, host: str = "127.0.0.1", port: int = 8000
) -> None:
    """Serve the tools until the client closes stdio, or on ``http://host:port/mcp`` until
    interrupted: one event loop, on which one ``GuidedRAG`` is opened with ``aopen`` (its own
    ``neo4j.AsyncDriver``, closed when the server stops) for ``retrieve`` and ``ask``."""
    anyio.run(_serve, rag, transport, host, port)


async def _serve(rag: GuidedRAG, transport: Transport, host: str, port: int) -> None:
    async with await GuidedRAG.aopen(rag.settings, policy=rag.policy, scope=rag.scope) as async_rag:
        server = build_server(rag, async_rag)
        if transport == "stdio":
            await server.run_stdio_async()
        else:
            await server.run_streamable_http_async(host=host, port=port)
