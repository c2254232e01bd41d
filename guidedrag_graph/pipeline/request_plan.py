"""A request planned without I/O: from (what was asked, the schema, facts read from the KB) to
the plan — the selection or auto's tiers, narrowed by the scope and the filters, and the one
ranking query with its parameters.

The facts are plain data (``Facts``): what each selection leaf resolved to (entity ids,
relation types), the server's ranking facts (``retrieval.facts.RankFacts``), the compiled scope.
``pipeline/auto.py`` and ``pipeline/selected.py`` are the edge: they read those facts (through
``Selector``, ``Planner``: every read passes ``GraphContext.read``), call these functions, and
send the plan (``Retriever.run``, the one ranking entry). pyproject's import-linter contract
holds this module to importing neither ``neo4j`` nor ``guidedrag_graph.db`` nor
``guidedrag_graph.context``; ``tests/test_pure_planning.py`` plans requests from facts written
as literals and checks the query and parameters the pipeline sends for them on Neo4j.

>>> tiers = auto_tiers(semantics, weights, facts, schema)   # auto: compiled, narrowed tiers
>>> plan = plan_ranking(order, tiers, facts.rank)           # its one retrieve_boost
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from guidedrag_graph.retrieval.facts import RankFacts
from guidedrag_graph.retrieval.filters import ChunkFilter, FilteredSelection, FilteredTiers
from guidedrag_graph.retrieval.in_scope import ScopedSelection, ScopedTiers
from guidedrag_graph.retrieval.selections import (
    AllChunks,
    CompiledSelectionLike,
    CompiledTiersLike,
)
from guidedrag_graph.schema.presets import SchemaMapping
from guidedrag_graph.selection.compiler import compile_plan
from guidedrag_graph.selection.nodes import Expr
from guidedrag_graph.selection.primitives import Resolved
from guidedrag_graph.selection.scope import CompiledScope
from guidedrag_graph.semantics import Semantics
from guidedrag_graph.steering.tiers import TierWeights, plan_auto


@dataclass(frozen=True)
class Facts:
    """What planning needs from the KB, read at the edge: each leaf's resolution, the ranking
    facts, how auto's entity tiers are walked (``walk``: the plugin's functions or Cypher, as
    ``RankFacts.variant`` chose it for ``select_mentioned``), the
    settings' hop cap, and the compiled scope (None: the whole KB)."""

    rank: RankFacts
    resolved: Mapping[Expr, Resolved]
    hop_cap: int
    walk: str = "cypher"
    scope: CompiledScope | None = None


def narrowed(
    compiled: CompiledSelectionLike,
    scope: CompiledScope | None,
    chunk_filter: ChunkFilter | None,
    schema: SchemaMapping,
) -> CompiledSelectionLike:
    """``compiled`` inside the scope (and the chunks the filter passes), inside the query: the
    one place a selection — the caller's, an entity's under the guarantee, or U — is narrowed."""
    if scope is not None:
        return ScopedSelection(compiled, scope, schema, chunk_filter)
    if chunk_filter is not None:
        return FilteredSelection(compiled, chunk_filter, schema)
    return compiled


def narrowed_tiers(
    compiled: CompiledTiersLike,
    scope: CompiledScope | None,
    chunk_filter: ChunkFilter | None,
    schema: SchemaMapping,
) -> Any:
    """auto's tiers with U = the scope (narrowed by the filter), or the chunks that pass: every
    tier inside it."""
    if scope is not None:
        return ScopedTiers(compiled, scope, schema, chunk_filter)
    if chunk_filter is not None:
        return FilteredTiers(compiled, chunk_filter, schema)
    return compiled


def auto_tiers(
    semantics: Semantics | None,
    weights: TierWeights,
    facts: Facts,
    schema: SchemaMapping,
    chunk_filter: ChunkFilter | None = None,
) -> Any:
    """What auto ranks for ``semantics``: its graded tiers, compiled and narrowed (or U,
    narrowed, when the semantics name no entity)."""
    plan = plan_auto(semantics, weights)
    tiers = plan.compiled(facts.resolved, schema, hop_cap=facts.hop_cap, walk=facts.walk)
    if tiers is None:
        return narrowed(AllChunks(schema), facts.scope, chunk_filter, schema)
    return narrowed_tiers(tiers.selection(schema), facts.scope, chunk_filter, schema)


def selected(
    expr: Expr, facts: Facts, schema: SchemaMapping, chunk_filter: ChunkFilter | None = None
) -> CompiledSelectionLike:
    """A hard or soft selection compiled from its leaves' resolutions, and narrowed."""
    plan = compile_plan(expr, facts.resolved, schema, hop_cap=facts.hop_cap)
    return narrowed(plan.selection(schema), facts.scope, chunk_filter, schema)
