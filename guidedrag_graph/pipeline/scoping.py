"""What a call does with its trusted scope before anything else: abstain when it holds nothing,
and never trust a kept "the scope holds the whole KB" past a write (``on_one_version``).

The scope itself is ``selection/scope.py``; ``GuidedRAG.retrieve_request`` compiles it
(``Selector.scope``, cached per KB version) first thing, and an empty one ends the call here:
no linking, no embedding, no vector search, no LLM call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

from guidedrag_graph.db.read_versions import seen
from guidedrag_graph.pipeline.request import RetrieveRequest
from guidedrag_graph.pipeline.results import RetrievalResult
from guidedrag_graph.selection import EmptySelection
from guidedrag_graph.selection.scope import CompiledScope

_R = TypeVar("_R")

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


# Runs of a call on a whole-KB scope before it is run inside the scope instead: each run that
# saw a write since the scope's size was read reads it again (a load in progress moves the
# version on every batch; three runs is enough to see it settle or to stop trusting it).
RUNS_ON_ONE_VERSION = 3


def on_one_version(
    compiled: Callable[[bool], CompiledScope | None],
    run: Callable[[CompiledScope | None], _R],
) -> _R:
    """``run(scope)`` with the call's compiled scope (``compiled(fresh)``, kept per KB version).

    A scope that held every chunk when it was read lets the call run the unscoped plan
    (identical rankings); but it was read once and kept, and a write since (another tenant's
    documents) would make the unscoped plan rank what the scope excludes. So the run collects
    the version every read of it saw (``db/read_versions.py``): when one is later than the
    scope's, the scope is forgotten and read again and the call run again; after
    ``RUNS_ON_ONE_VERSION`` runs the call runs inside the scope, never on the unscoped plan."""
    scope = compiled(False)
    for _ in range(RUNS_ON_ONE_VERSION):
        if scope is None or not scope.whole:
            return run(scope)
        with seen() as versions:
            result = run(scope)
        if scope.version is not None and all(v == scope.version for v in versions):
            return result
        scope = compiled(True)
    return run(scope if scope is None else replace(scope, whole=False))
