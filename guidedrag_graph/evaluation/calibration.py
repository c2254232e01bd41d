"""``guidedrag calibrate``: fit ``auto``'s tier boosts on a KB's own questions, by k-fold CV.

Why cross-validation: a boost that lifts the answer chunk of the questions it was fitted on says
nothing about the next question. So the questions are split into folds; each fold's weights are
fitted on the *other* folds only, and the figures reported are those of each held-out fold run
through the real pipeline (``GuidedRAG.retrieve`` with that fold's policy), never the fit.

Fitting is cheap because of the same fact the ranking query relies on: a tier's boost is uniform
inside it, so for *any* weights the boosted top k lies in (each tier's top k by cosine) ∪ (U's
top k). One query per question (``retrieve_boost`` with every tier present) gathers those
candidates, their cosines and tier memberships; a grid of weights is then scored in numpy.

The policy written is, per tier, the median of the folds' fitted weights (robust to one fold's
luck), fitted per Table 2 configuration when a configuration has enough questions, else shared.
A tier no training question has (∩ on a KB without C2 questions) takes the weight of the tier
that contains it (∩ ⊆ E, A_rel ⊆ A_hop), i.e. it adds nothing it was not shown to add.
"""

from __future__ import annotations

import itertools
import random
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from guidedrag_graph.evaluation.metrics import all_gold_recall_at_k, hit_position
from guidedrag_graph.kb import Question
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.steering.mapping import configuration_of
from guidedrag_graph.steering.policy import SteeringPolicy, TierKey
from guidedrag_graph.steering.tier_prep import prepare_tiers
from guidedrag_graph.steering.tiers import TIER_NAMES, TierWeights, plan_auto

# Weights tried per tier (0 = the tier is ignored; 1 = its members above every other chunk).
GRID: tuple[float, ...] = (0.0, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
# Every tier present while gathering, ∩ above E so it is kept (only membership matters here).
_GATHER = TierWeights(intersection=5.0, entity=4.0, relation=3.0, hop=2.0, near=1.0)
_CANDIDATE_LIMIT = 10_000


@dataclass(frozen=True)
class QuestionFeatures:
    """One question's candidates: (1+cos)/2 scores, tier memberships (columns = TIER_NAMES)."""

    question_id: str
    configuration: str
    ids: tuple[str, ...]
    scores: np.ndarray
    members: np.ndarray  # bool, (candidates, len(TIER_NAMES))
    gold: frozenset[str]
    tiers_present: frozenset[str]

    def gold_index(self) -> np.ndarray:
        return np.array([i for i, c in enumerate(self.ids) if c in self.gold], dtype=np.int64)


def gather(rag: GuidedRAG, questions: Sequence[Question], k: int) -> list[QuestionFeatures]:
    """One ranking query per question with every tier present; abstaining questions are left out
    (their names are unknown to the KB, so no weight changes what they get)."""
    out: list[QuestionFeatures] = []
    for q in questions:
        plan = plan_auto(q.semantics, _GATHER)
        prepared = prepare_tiers(rag.selector, plan, rag.retriever.paths.variant)
        if prepared.empty is not None:
            continue
        vector = rag.embedder.embed_queries([q.question])[0]
        if prepared.compiled is None:
            ranking = rag.retriever.rank(vector, None, k=k, ranker="cosine")
        else:
            ranking = rag.retriever.rank_tiers(
                vector, prepared.compiled, k=k, limit=_CANDIDATE_LIMIT
            )
        chunks = ranking.chunks
        members = np.array(
            [[name in c.tiers for name in TIER_NAMES] for c in chunks], dtype=bool
        ).reshape(len(chunks), len(TIER_NAMES))
        out.append(
            QuestionFeatures(
                question_id=q.id,
                configuration=str(configuration_of(q.semantics)),
                ids=tuple(c.id for c in chunks),
                scores=np.array([c.score for c in chunks], dtype=np.float64),
                members=members,
                gold=frozenset(q.gold_chunk_ids),
                tiers_present=frozenset(t.name for t in plan.tiers),
            )
        )
    return out


def grid(values: Sequence[float] = GRID) -> np.ndarray:
    """Every weight combination, (combinations, len(TIER_NAMES))."""
    return np.array(list(itertools.product(values, repeat=len(TIER_NAMES))), dtype=np.float64)


def score_grid(features: Sequence[QuestionFeatures], weights: np.ndarray, k: int) -> np.ndarray:
    """(combinations, 2): relevant@k and mean hit position (a miss counts k + 1) per row."""
    hits = np.zeros(len(weights))
    positions = np.zeros(len(weights))
    for f in features:
        gold = f.gold_index()
        if gold.size == 0:
            positions += k + 1
            continue
        boost = (f.members[None, :, :] * weights[:, None, :]).max(axis=2)  # (C, n)
        total = f.scores[None, :] + boost
        best_gold = total[:, gold].max(axis=1)
        rank = (total > best_gold[:, None]).sum(axis=1)  # chunks strictly above the best gold
        hit = rank < k
        hits += hit
        positions += np.where(hit, rank + 1, k + 1)
    n = max(len(features), 1)
    return np.stack([hits / n, positions / n], axis=1)


def fit(
    features: Sequence[QuestionFeatures], k: int, values: Sequence[float] = GRID
) -> TierWeights:
    """The grid point with the best mean hit position, then relevant@k, then the gentlest boosts.

    Mean hit position (the paper's "avg hit", a miss counted k + 1) is rank-aware: it rewards
    lifting an answer chunk from rank 5 to 1 too, so it uses more of each question than the
    hit/miss of relevant@k and its optimum varies less between folds (on MuSiQue, over six fold
    shuffles, held-out relevant@5 averaged 55.7% with this objective and 54.2% with relevant@k).
    """
    combos = grid(values)
    figures = score_grid(features, combos, k)
    order = np.lexsort((combos.sum(axis=1), -figures[:, 0], figures[:, 1]))
    best = combos[order[0]]
    present = set().union(*(f.tiers_present for f in features)) if features else set()
    return _fill_unseen(TierWeights.from_tuple(tuple(float(x) for x in best)), present)


def _fill_unseen(weights: TierWeights, present: set[str]) -> TierWeights:
    """A tier no question had gets the weight of the tier containing it (∩⊆E, A_rel⊆A_hop)."""
    update: dict[str, float] = {}
    if "∩" not in present:
        update["intersection"] = weights.entity
    if "A_rel" not in present:
        update["relation"] = weights.hop
    return weights.model_copy(update=update)


def fit_policy(
    features: Sequence[QuestionFeatures], k: int, min_questions: int = 20
) -> dict[TierKey, TierWeights]:
    """Weights shared by every question ("default"), and per configuration with enough data."""
    out: dict[TierKey, TierWeights] = {"default": fit(features, k)}
    by_config: dict[str, list[QuestionFeatures]] = {}
    for f in features:
        by_config.setdefault(f.configuration, []).append(f)
    for config, group in sorted(by_config.items()):
        if len(group) >= min_questions and len(by_config) > 1:
            out[config] = fit(group, k)  # type: ignore[index]
    return out


def folds(ids: Sequence[str], n_folds: int, seed: int = 0) -> list[list[str]]:
    """Shuffle once (seeded) and deal the ids into ``n_folds`` disjoint folds."""
    if n_folds < 2:
        raise ValueError(f"cross-validation needs at least 2 folds, got {n_folds}")
    order = list(ids)
    random.Random(seed).shuffle(order)
    return [order[i::n_folds] for i in range(n_folds)]


@dataclass
class FoldResult:
    """One fold: the questions held out, the weights fitted without them, their figures."""

    index: int
    test_ids: list[str]
    train_ids: list[str]
    tiers: dict[TierKey, TierWeights]
    held_out: dict[str, float] = field(default_factory=dict)


@dataclass
class Calibration:
    """Per-fold fits, held-out figures, and the policy to write (median of the folds)."""

    k: int
    folds: list[FoldResult]
    policy: SteeringPolicy
    held_out: dict[str, float]
    baseline: dict[str, float]
    per_question: dict[str, SteeringPolicy]

    def summary(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "folds": len(self.folds),
            "questions": sum(len(f.test_ids) for f in self.folds),
            "held_out": self.held_out,
            "base_rag": self.baseline,
            "per_fold": [
                {
                    "fold": f.index,
                    "questions": len(f.test_ids),
                    "held_out": f.held_out,
                    "tiers": {key: w.model_dump() for key, w in f.tiers.items()},
                }
                for f in self.folds
            ],
        }


def median_tiers(fits: Sequence[dict[TierKey, TierWeights]]) -> dict[TierKey, TierWeights]:
    """Per key and tier, the median weight over the folds that fitted that key."""
    keys: list[TierKey] = sorted({key for f in fits for key in f})
    out: dict[TierKey, TierWeights] = {}
    for key in keys:
        rows = [f[key].as_tuple() for f in fits if key in f]
        out[key] = TierWeights.from_tuple(
            tuple(float(statistics.median(col)) for col in zip(*rows, strict=True))
        )
    return out


def _figures(
    ranked_by_id: dict[str, list[str]], questions: Sequence[Question], k: int
) -> dict[str, float]:
    """relevant@k, mean hit position (miss = k + 1) and all-gold recall@k over ``questions``."""
    hits: list[int] = []
    recall: list[float] = []
    for q in questions:
        ranked = ranked_by_id[q.id]
        hits.append(hit_position(ranked, q.gold_chunk_ids, k))
        recall.append(all_gold_recall_at_k(ranked, q.all_gold_chunk_ids, k))
    n = max(len(questions), 1)
    return {
        "questions": float(len(questions)),
        "relevant": sum(1 for h in hits if h <= k) / n,
        "avg_hit": sum(hits) / n,
        "all_gold_recall": sum(recall) / n,
    }


def calibrate(
    rag: GuidedRAG,
    questions: Sequence[Question],
    *,
    k: int = 5,
    n_folds: int = 5,
    seed: int = 0,
    min_questions: int = 20,
    baseline: bool = True,
    progress: Callable[[str], None] | None = None,
) -> Calibration:
    """Gather once, fit per fold on the other folds, run each held-out fold for real."""
    say = progress or (lambda _msg: None)
    answerable = [q for q in questions if q.answerable and q.gold_chunk_ids]
    if len(answerable) < n_folds:
        raise ValueError(
            f"calibration needs at least {n_folds} answerable questions with gold chunks, "
            f"the bundle has {len(answerable)}"
        )
    say(f"gathering candidates for {len(answerable)} questions")
    features = {f.question_id: f for f in gather(rag, answerable, k)}
    by_id = {q.id: q for q in answerable}
    results: list[FoldResult] = []
    per_question: dict[str, SteeringPolicy] = {}
    ranked: dict[str, list[str]] = {}
    for index, test_ids in enumerate(folds([q.id for q in answerable], n_folds, seed)):
        held = set(test_ids)
        train_ids = [qid for qid in by_id if qid not in held]
        train = [features[qid] for qid in train_ids if qid in features]
        tiers = fit_policy(train, k, min_questions)
        policy = SteeringPolicy(tiers=tiers)
        for qid in test_ids:
            per_question[qid] = policy
        say(f"fold {index + 1}/{n_folds}: fitted on {len(train)}, testing {len(test_ids)}")
        run = _runner(rag, policy, k)
        for qid in test_ids:
            ranked[qid] = run(by_id[qid])
        tested = [by_id[i] for i in test_ids]
        results.append(
            FoldResult(index, list(test_ids), train_ids, tiers, _figures(ranked, tested, k))
        )
    held_out = _figures(ranked, answerable, k)
    base_figures = _base_rag_figures(rag, answerable, k) if baseline else {}
    final = SteeringPolicy(
        tiers=median_tiers([f.tiers for f in results]),
        calibration={
            "method": f"{n_folds}-fold cross-validation, grid {list(GRID)}, median over folds",
            "k": k,
            "seed": seed,
            "questions": len(answerable),
            "held_out": held_out,
            "base_rag": base_figures,
        },
    )
    return Calibration(k, results, final, held_out, base_figures, per_question)


def _base_rag_figures(rag: GuidedRAG, questions: Sequence[Question], k: int) -> dict[str, float]:
    """Base RAG through the same pipeline, for comparison in the report."""
    ranked = {
        q.id: [c.id for c in rag.retrieve(q.question, None, k=k, steering="hard").chunks]
        for q in questions
    }
    return _figures(ranked, questions, k)


def _runner(rag: GuidedRAG, policy: SteeringPolicy, k: int) -> Callable[[Question], list[str]]:
    """Retrieve as a user with this policy would (auto steering, the policy's boosts)."""

    def run(q: Question) -> list[str]:
        saved = rag.policy
        rag.policy = policy
        try:
            result = rag.retrieve(q.question, semantics=q.semantics, k=k, steering="auto")
        finally:
            rag.policy = saved
        return [c.id for c in result.chunks]

    return run
