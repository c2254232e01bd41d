"""The reads selection is planned from, gathered at the edge (issue 37).

Deciding a selection is pure: the cost model (``selection/cost.py``) estimates from counts it is
handed and refuses or passes, importing no driver. The counts themselves are read here, once,
and kept in the process's warm state (``GraphContext.data``) for
``GUIDEDRAG_RESOLUTION_CACHE_S`` like resolved names, so the deciding code asks for a fact
through a function (``Resolver.cost_stats``) and never meets the database in the middle of its
logic.
"""

from __future__ import annotations

from collections.abc import Iterable

from guidedrag_graph.context import GraphContext
from guidedrag_graph.selection.cost import CostStats, GraphCounts
from guidedrag_graph.templates import queries as T


def fetch_stats(graph: GraphContext, ids: Iterable[str]) -> CostStats:
    """The counts for ``ids``: from the cache where kept, else one cheap query."""
    wanted = list(dict.fromkeys(ids))
    cache = graph.data
    counts: GraphCounts | None = cache.get("graph_counts")
    degrees: dict[str, tuple[int, int]] = {}
    missing: list[str] = []
    for i in wanted:
        kept = cache.get(("degree", i))
        if kept is None:
            missing.append(i)
        else:
            degrees[i] = kept
    if counts is None or missing:
        row = graph.read(
            T.query("selection_cost", graph.schema), {"sel_ids": missing}, name="selection_cost"
        )[0]
        counts = GraphCounts(
            *(int(row[k]) for k in ("entities", "chunks", "mentions", "relationships"))
        )
        cache.put("graph_counts", counts)
        for entity_id, degree, mentions in row["degrees"]:
            pair = (max(int(degree) - int(mentions), 0), int(mentions))
            degrees[str(entity_id)] = pair
            cache.put(("degree", str(entity_id)), pair)
    return CostStats(counts, degrees)
