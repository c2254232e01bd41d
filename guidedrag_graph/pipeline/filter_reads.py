"""A request's chunk filters checked on the KB: the edge of ``pipeline/filter_checks.py``.

The decisions (every field the filters name is known; no chunk passes) are pure; the two facts
they ask for are read here, each through ``selection/fact_rounds.py``: the database's property
keys (``GraphContext.property_keys``) and whether any chunk passes (the filter's own
``any_query``). ``GuidedRAG`` asks the first before linking and the second before embedding.
"""

from __future__ import annotations

from functools import partial
from operator import attrgetter

from guidedrag_graph.context import GraphContext
from guidedrag_graph.pipeline.filter_checks import (
    FilterFacts,
    MissingFilterFact,
    fields_known,
    nothing_passes,
)
from guidedrag_graph.retrieval.filters import ChunkFilter
from guidedrag_graph.selection import fact_rounds

_KIND = attrgetter("kind")


def checked_filter(graph: GraphContext, chunk_filter: ChunkFilter) -> FilterFacts:
    """``chunk_filter``'s facts once every property it names is a key some node has
    (``FilterError`` otherwise): one ``property_keys`` read."""
    facts = FilterFacts(chunk_filter, graph.schema)
    read = partial(_read, graph)
    return fact_rounds.decided(fields_known, facts, read, MissingFilterFact, _KIND, rounds=1)


def filter_abstains(graph: GraphContext, facts: FilterFacts) -> bool:
    """Whether no chunk passes the filters, so the request abstains: one ``retrieve_filter``
    read."""
    read = partial(_read, graph)
    return fact_rounds.decided(nothing_passes, facts, read, MissingFilterFact, _KIND, rounds=1)


def _read(graph: GraphContext, facts: FilterFacts, missing: MissingFilterFact) -> FilterFacts:
    """The fact ``missing`` names, read as ``GuidedRAG`` read it before the split."""
    if missing.kind == "keys":
        facts.keys = graph.property_keys()
    else:
        chunk_filter = facts.chunk_filter
        query = chunk_filter.any_query(facts.schema)
        facts.passes = bool(graph.read(query, chunk_filter.params, name="retrieve_filter"))
    return facts
