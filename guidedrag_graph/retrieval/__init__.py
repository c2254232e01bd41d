"""Retrieval: rank chunks by cosine *inside Neo4j*, within a selection (paper §3.3).

``Retriever.run`` (steering: hard, soft, auto's graded tiers) plans the ranking without I/O
(``plans.plan_ranking``: the physical path by selection size and server, the query and its
parameters, from ``facts.RankFacts``, which the ``Planner`` reads once per driver), sends it
through ``Paths`` (exact, plugin, search_in, index) and orders the candidates (``ordering``:
threshold, top k or MMR). Every query runs in a READ transaction; every query text comes from a
``cypher/retrieve_*`` template.
"""

from guidedrag_graph.context import RANK_PROCEDURE
from guidedrag_graph.retrieval.facts import MissingFact, RankFacts, choose_path
from guidedrag_graph.retrieval.filters import (
    ChunkFilter,
    FilteredSelection,
    FilteredTiers,
    FilterError,
    compile_filter,
)
from guidedrag_graph.retrieval.ordering import RankOrder, mmr
from guidedrag_graph.retrieval.planner import (
    MEASURED_EXACT_MAX,
    MEASURED_PLUGIN_EXACT_MAX,
    Plan,
    Planner,
)
from guidedrag_graph.retrieval.plans import Query, RankPlan, plan_ranking, plan_sized
from guidedrag_graph.retrieval.results import Fetched, RankedChunk, Ranking
from guidedrag_graph.retrieval.retriever import Retriever
from guidedrag_graph.retrieval.selections import (
    AllChunks,
    ChunkIdSelection,
    CompiledSelectionLike,
    CompiledTierLike,
    CompiledTiersLike,
)
from guidedrag_graph.vocabulary import PATHS, RANKERS, STEERINGS

__all__ = [
    "MEASURED_EXACT_MAX",
    "MEASURED_PLUGIN_EXACT_MAX",
    "PATHS",
    "RANKERS",
    "RANK_PROCEDURE",
    "STEERINGS",
    "AllChunks",
    "ChunkFilter",
    "ChunkIdSelection",
    "CompiledSelectionLike",
    "CompiledTierLike",
    "CompiledTiersLike",
    "Fetched",
    "FilterError",
    "FilteredSelection",
    "FilteredTiers",
    "MissingFact",
    "Plan",
    "Planner",
    "Query",
    "RankFacts",
    "RankOrder",
    "RankPlan",
    "RankedChunk",
    "Ranking",
    "Retriever",
    "choose_path",
    "compile_filter",
    "mmr",
    "plan_ranking",
    "plan_sized",
]
