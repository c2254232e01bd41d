"""Eval rows for the ``auto`` approaches (``guidedrag``, ``guidedrag-calibrated``).

``guidedrag`` is exactly what a user gets with no options: ``retrieve(question, semantics=...)``
with ``steering="auto"``, the built-in policy (its ranker, its tier boosts) and the planner's path.
``guidedrag-calibrated`` is the same call with the policy ``guidedrag calibrate`` fitted on the
*other* folds, so no question is scored by weights fitted on it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from guidedrag_graph.evaluation.calibration import Calibration, calibrate
from guidedrag_graph.evaluation.records import Row
from guidedrag_graph.evaluation.rows import Formulation, retrieval_row
from guidedrag_graph.kb import Question
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.steering.mapping import Approach, configuration_of
from guidedrag_graph.steering.policy import SteeringPolicy


@dataclass
class AutoPolicies:
    """The policy each auto approach uses per question; the calibration once it has run."""

    folds: int = 5
    calibration: Calibration | None = None
    default: SteeringPolicy = field(default_factory=SteeringPolicy.default)

    def ensure_calibrated(self, rag: GuidedRAG, questions: list[Question], k: int) -> None:
        usable = sum(1 for q in questions if q.answerable and q.gold_chunk_ids)
        folds = min(self.folds, usable)
        if self.calibration is None and folds >= 2:  # smoke runs: fewer folds than 5
            self.calibration = calibrate(rag, questions, k=k, n_folds=folds, baseline=False)

    def policy(self, approach: Approach, question: Question) -> SteeringPolicy:
        if not approach.calibrated:
            return self.default
        if self.calibration is None:  # too few questions to cross-validate: the built-in
            return self.default
        return self.calibration.per_question.get(question.id, self.calibration.policy)


def auto_row(
    rag: GuidedRAG,
    asked: Formulation,
    *,
    approach: Approach,
    policy: SteeringPolicy,
    k: int,
    total_chunks: int,
) -> Row:
    """One retrieval as a user would run it (auto steering under ``policy``), as an eval row."""
    question = asked.question
    saved = rag.policy
    rag.policy = policy
    start = time.perf_counter()
    try:
        result = rag.retrieve(asked.text, semantics=question.semantics, k=k, steering="auto")
    finally:
        rag.policy = saved
    latency = time.perf_counter() - start
    tiers = list(result.tier_sizes)
    return retrieval_row(
        result,
        latency,
        asked,
        k,
        approach=approach.name,
        configuration=str(configuration_of(question.semantics)),
        cell="auto " + (">".join(tiers) if tiers else "U"),
        selection=result.selection_text or "all()",
        steering="auto",
        entities=list(question.semantics.entities),
        # Every chunk is ranked (the tiers only boost), unless the pipeline abstained.
        selection_size=0 if result.empty is not None else total_chunks,
        note="; ".join(result.notes) or None,
        gold_in_selection=bool(question.gold_chunk_ids) if asked.answerable else None,
    )
