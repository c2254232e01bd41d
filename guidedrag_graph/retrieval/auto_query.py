"""auto's search and ranking as one ``guidedrag.rankAuto`` call (``cypher/retrieve_auto.cypher``).

``retrieve_boost``'s plugin variant without a scope, with U's two-step over-fetch moved into the
plugin: the dozen Cypher steps around its searches cost more than the call (docs/plugin.md,
docs/performance.md). ``plans.tiers_query`` takes it where the server lists the procedure and
no scope or filter bounds U; the rows are the same (tests/test_tier_overfetch.py).
"""

from __future__ import annotations

from typing import Any

from guidedrag_graph.retrieval.facts import RankFacts
from guidedrag_graph.schema.presets import ELEMENT_ID
from guidedrag_graph.selection.entity_tiers import tier_walk_params
from guidedrag_graph.templates import queries as templates


def auto_query(
    facts: RankFacts, prelude: str, params: dict[str, Any], lists: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """``retrieve_auto``'s text and parameters for the compiled tiers' ``prelude`` and their
    ``lists`` (tier and member variables), from ``retrieve_boost``'s ``params``: plus the
    index, the embedding and chunk id properties (null for elementId chunks: the plugin orders
    ties by element id) and the schema the plugin walks mentions with."""
    schema = facts.schema
    params = {
        **params,
        **tier_walk_params(schema),
        "index_name": facts.vector_index_name,
        "embedding_property": schema.chunk_embedding,
        "chunk_id_property": None if schema.chunk_id == ELEMENT_ID else schema.chunk_id,
    }
    cypher = templates.query("retrieve_auto", schema, selection=prelude, lists=lists)
    return cypher, params
