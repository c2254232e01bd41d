"""Steering: how stated semantics shape what is retrieved and how it is asked.

One feature, four modules, in the order a question meets them:

- ``mapping``: the paper's Table 2, semantics → one hard selection per approach (RAG, RAG*,
  GraphRAG, GraphRAG*). This is the *logical* choice of what to rank; which physical query ranks
  it on a given server is ``retrieval.planner``'s business, not this package's.
- ``tiers``: the ``auto`` default, graded tiers of graph evidence as boosts over every chunk.
- ``boosts``: those tiers prepared against the database (names resolved once, compiled once).
- ``policy``: the editable rules (ranker, top-k, prompt template) and the tier weights.
"""

from guidedrag_graph.steering.mapping import (
    PAPER_GUIDED,
    Approach,
    Configuration,
    Plan,
    configuration_of,
    plan_selection,
)
from guidedrag_graph.steering.policy import SteeringDecision, SteeringPolicy, SteeringRule
from guidedrag_graph.steering.tiers import TIER_NAMES, AutoPlan, AutoTier, TierWeights, plan_auto

__all__ = [
    "PAPER_GUIDED",
    "TIER_NAMES",
    "Approach",
    "AutoPlan",
    "AutoTier",
    "Configuration",
    "Plan",
    "SteeringDecision",
    "SteeringPolicy",
    "SteeringRule",
    "TierWeights",
    "configuration_of",
    "plan_auto",
    "plan_selection",
]
