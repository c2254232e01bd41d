"""Retrieval metrics of the paper's evaluation (§5.1–5.4), as pure functions over plain data.

Nothing here touches Neo4j: the harness records ranked chunk ids and scores per question, and these
functions turn them into the numbers of Tables 3–5 and Figures 6–7. Keeping them pure lets the tests
check each one against cases computed by hand.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from guidedrag_graph.schema.presets import name_key

# The paper reads Figure 7 at 0.83; the grid spans e5's compressed cosine range and the paper's.
DEFAULT_THRESHOLDS: tuple[float, ...] = tuple(round(0.50 + 0.01 * i, 2) for i in range(51))


def _check_k(k: int) -> None:
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")


def hit_position(ranked_ids: Sequence[str], gold_ids: Iterable[str], k: int) -> int:
    """1-based rank of the first gold chunk within the top ``k``; a miss counts as ``k + 1``.

    The paper (§5.2, Table 4) weighs a question with no fact in the top 5 as a hit at 6, which
    keeps misses in the average instead of dropping them (dropping them would flatter any approach
    that often misses).
    """
    _check_k(k)
    gold = set(gold_ids)
    for rank, chunk_id in enumerate(ranked_ids[:k], start=1):
        if chunk_id in gold:
            return rank
    return k + 1


def relevant_at_k(ranked_ids: Sequence[str], gold_ids: Iterable[str], k: int) -> bool:
    """True when at least one answer-holding chunk is among the top ``k`` (Table 4, "Relevant")."""
    return hit_position(ranked_ids, gold_ids, k) <= k


def all_gold_recall_at_k(ranked_ids: Sequence[str], all_gold_ids: Iterable[str], k: int) -> float:
    """Share of a question's supporting chunks found in the top ``k``.

    Multi-hop questions need every supporting paragraph; relevant@k only asks for the answer one.
    A question with no supporting chunk listed has nothing to recall, so it scores 1.0.
    """
    _check_k(k)
    gold = set(all_gold_ids)
    if not gold:
        return 1.0
    return len(gold & set(ranked_ids[:k])) / len(gold)


@dataclass(frozen=True)
class HitSummary:
    """Table 4 for one approach: how often and how early the answer chunk shows up."""

    n: int
    relevant: float  # share of questions with a hit in the top k
    avg_hit: float  # misses counted as k + 1
    median_hit: float
    all_gold_recall: float  # mean share of supporting chunks in the top k


def summarize_hits(positions: Sequence[int], recalls: Sequence[float], k: int) -> HitSummary:
    """Aggregate per-question hit positions (misses already at ``k + 1``) and recalls."""
    _check_k(k)
    if len(positions) != len(recalls):
        raise ValueError("positions and recalls must have one entry per question")
    if not positions:
        return HitSummary(0, math.nan, math.nan, math.nan, math.nan)
    if any(p < 1 or p > k + 1 for p in positions):
        raise ValueError(f"hit positions must lie in 1..{k + 1}")
    return HitSummary(
        n=len(positions),
        relevant=sum(1 for p in positions if p <= k) / len(positions),
        avg_hit=statistics.fmean(positions),
        median_hit=float(statistics.median(positions)),
        all_gold_recall=statistics.fmean(recalls),
    )


@dataclass(frozen=True)
class SpaceStats:
    """Table 5 row: how many chunks a kind of selection leaves to rank."""

    kind: str
    n: int
    min: int
    avg: float
    max: int
    empty: int  # selections that held no chunk at all (the pipeline abstained)


def search_space(sizes_by_kind: Mapping[str, Sequence[int]]) -> list[SpaceStats]:
    """Min/avg/max selection size per selection kind (e.g. ``U``, ``E1∩E2``), in input order."""
    out: list[SpaceStats] = []
    for kind, sizes in sizes_by_kind.items():
        if not sizes:
            continue
        out.append(
            SpaceStats(
                kind=kind,
                n=len(sizes),
                min=min(sizes),
                avg=statistics.fmean(sizes),
                max=max(sizes),
                empty=sum(1 for s in sizes if s == 0),
            )
        )
    return out


def retained_share(
    scores_per_question: Sequence[Sequence[float]],
    k: int,
    thresholds: Sequence[float] = DEFAULT_THRESHOLDS,
) -> list[tuple[float, float]]:
    """Figure 7: share of the ``n · k`` retrievable chunks whose similarity is at or above each
    threshold, as ``(threshold, share)`` pairs.

    Each inner sequence holds the scores of one question's retrieved chunks. An approach that
    abstained (GuidedRAG's empty selection) passes an empty sequence: it returned nothing, so it
    adds nothing above any threshold while still counting its ``k`` slots in the denominator. On
    unanswerable questions the share is the false-positive rate; on answerable ones (the control
    set) it is what a threshold keeps.
    """
    _check_k(k)
    n = len(scores_per_question)
    if n == 0:
        return [(t, math.nan) for t in thresholds]
    for scores in scores_per_question:
        if len(scores) > k:
            raise ValueError(f"a question has {len(scores)} scores but only the top {k} count")
    total = n * k
    flat = [s for scores in scores_per_question for s in scores]
    return [(t, sum(1 for s in flat if s >= t) / total) for t in thresholds]


def share_at(curve: Sequence[tuple[float, float]], threshold: float) -> float:
    """The curve's share at ``threshold`` (which must be on the curve's grid)."""
    for t, share in curve:
        if math.isclose(t, threshold, abs_tol=1e-9):
            return share
    raise ValueError(f"threshold {threshold} is not on the curve's grid")


def threshold_keeping(curve: Sequence[tuple[float, float]], share: float) -> float | None:
    """Highest threshold at which the curve still keeps at least ``share`` of the chunks.

    Applied to the control set, this finds the operating point the paper reads Figure 7 at ("the
    majority of chunks in the control set" at 0.83), for an embedder whose scores sit elsewhere.
    """
    ok = [t for t, s in curve if not math.isnan(s) and s >= share]
    return max(ok) if ok else None


def turbulence(ranked_lists: Sequence[Sequence[str]], k: int) -> float:
    """Figure 6 / Eq. 1: T = (D_c − k) / (P·k − k) over P formulations of one question.

    ``D_c`` is the number of distinct chunks among the formulations' top ``k``. T is 0 when every
    formulation retrieves the same chunks and 1 when no chunk repeats. A guided selection may
    hold fewer than ``k`` chunks, and the paper's formula then goes negative, so we use its
    natural generalisation T = (D_c − m) / (N − m), with N the chunks retrieved in all and m the
    longest list: identical to Eq. 1 whenever every formulation returns ``k`` chunks, and still
    0 for "always the same chunks" and 1 for "never the same" when they return fewer. With at
    most one chunk per formulation and none differing, T is 0.
    """
    _check_k(k)
    p = len(ranked_lists)
    if p < 2:
        raise ValueError("turbulence needs at least two formulations of the question")
    tops = [list(ranked[:k]) for ranked in ranked_lists]
    distinct = len({chunk_id for top in tops for chunk_id in top})
    longest = max(len(top) for top in tops)
    total = sum(len(top) for top in tops)
    if total == longest:  # one formulation returned everything, the others nothing (or all empty)
        return 0.0
    return (distinct - longest) / (total - longest)


@dataclass(frozen=True)
class TaggingScore:
    """Table 3 for one tagger: share of the gold entities it named."""

    tagger: str
    questions: int
    gold_entities: int
    correct: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.gold_entities if self.gold_entities else math.nan


def tags_correct(gold: Sequence[str], tags: Sequence[str]) -> int:
    """How many gold entities appear among the tagger's first ``len(gold)`` tags.

    A tagger gets as many guesses as the question names entities (the paper: 900 tags for 600
    questions, C2 questions carrying two). Names compare by ``name_key`` (case, Unicode form and
    spacing do not matter), and one tag can match one gold entity only.
    """
    remaining = [name_key(g) for g in gold]
    correct = 0
    for tag in tags[: len(gold)]:
        key = name_key(tag)
        if key in remaining:
            remaining.remove(key)
            correct += 1
    return correct


def tagging_accuracy(
    tagger: str, golds: Sequence[Sequence[str]], taggings: Sequence[Sequence[str]]
) -> TaggingScore:
    """Aggregate :func:`tags_correct` over questions (gold entity lists beside tagger outputs)."""
    if len(golds) != len(taggings):
        raise ValueError("one tagging per gold entity list")
    return TaggingScore(
        tagger=tagger,
        questions=len(golds),
        gold_entities=sum(len(g) for g in golds),
        correct=sum(tags_correct(g, t) for g, t in zip(golds, taggings, strict=True)),
    )


@dataclass(frozen=True)
class LatencyStats:
    """Wall time of one approach's retrievals, in milliseconds."""

    n: int
    mean_ms: float
    median_ms: float
    p95_ms: float
    max_ms: float


def latency_stats(seconds: Sequence[float]) -> LatencyStats:
    """Mean, median, 95th percentile (nearest rank) and max of per-question latencies."""
    if not seconds:
        return LatencyStats(0, math.nan, math.nan, math.nan, math.nan)
    ms = sorted(s * 1000.0 for s in seconds)
    p95 = ms[max(0, math.ceil(0.95 * len(ms)) - 1)]
    return LatencyStats(
        n=len(ms),
        mean_ms=statistics.fmean(ms),
        median_ms=float(statistics.median(ms)),
        p95_ms=p95,
        max_ms=ms[-1],
    )
