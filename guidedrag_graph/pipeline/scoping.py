"""What a call does with its trusted scope before anything else: abstain when it holds nothing.

The scope itself is ``selection/scope.py``; ``GuidedRAG.retrieve_request`` compiles it
(``Selector.scope``, cached per KB version) first thing, and an empty one ends the call here:
no linking, no embedding, no vector search, no LLM call.
"""

from __future__ import annotations

from guidedrag_graph.pipeline.request import RetrieveRequest
from guidedrag_graph.pipeline.results import RetrievalResult
from guidedrag_graph.selection import EmptySelection
from guidedrag_graph.selection.scope import CompiledScope

# What an abstention names as its selection when the scope is why.
SCOPE_TERM = "scope"


def scope_abstention(
    request: RetrieveRequest, scope: CompiledScope, template: str
) -> RetrievalResult:
    """The call's result when the scope holds no chunk. The message says so and no more: it
    never echoes the scope's terms (a user may not know what the trusted side named)."""
    empty = EmptySelection("empty_scope", SCOPE_TERM, scope.empty_message())
    return RetrievalResult.abstention(
        request.question,
        SCOPE_TERM,
        empty,
        ranker=request.ranker or "cosine",
        steering=request.mode,
        template=template,
        semantics=request.semantics,
        timings={},
    )
