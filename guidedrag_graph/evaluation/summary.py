"""Every number of the evaluation report, computed once from an :class:`EvalRun`'s rows.

The report's sections and the plots only read an :class:`EvalSummary`; nothing is recomputed
while rendering. Everything here comes from the recorded rows, so ``summary.json`` and
``report.md`` can be rebuilt from ``results.json`` alone. :meth:`EvalSummary.to_dict` is the
``summary.json`` form, whose layout other tools already read: keep its keys and their order.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from guidedrag_graph.evaluation.metrics import (
    DEFAULT_THRESHOLDS,
    HitSummary,
    LatencyStats,
    SpaceStats,
    latency_stats,
    retained_share,
    search_space,
    share_at,
    summarize_hits,
    tagging_accuracy,
    tags_correct,
    threshold_keeping,
    turbulence,
)
from guidedrag_graph.evaluation.paper import PAPER_THRESHOLD, REPORT_THRESHOLDS
from guidedrag_graph.evaluation.records import EvalRun, Row, Tagging

Curve = list[tuple[float, float]]


@dataclass(frozen=True)
class ApproachHits(HitSummary):
    """Table 4 for one approach, and how often its selection held the answer chunk at all."""

    gold_in_selection: float  # NaN where no selection size was measured (U)


@dataclass(frozen=True)
class PrecisionCurves:
    """Figure 7 for one approach: share of top-k chunks at or above each threshold."""

    control: Curve  # the answerable questions: what a threshold keeps
    unanswerable: Curve | None  # false positives; None without an unanswerable set

    def to_dict(self) -> dict[str, Curve]:
        out = {"control": self.control}
        if self.unanswerable is not None:
            out["unanswerable"] = self.unanswerable
        return out


@dataclass(frozen=True)
class PrecisionPoint:
    """One operating point of Figure 7: a threshold and what it keeps on both sets."""

    approach: str
    point: str
    threshold: float
    control: float
    unanswerable: float


@dataclass(frozen=True)
class TurbulenceStat:
    """Figure 6 for one approach: mean T over the questions that have paraphrases."""

    n: int
    mean: float


@dataclass(frozen=True)
class TaggerAccuracy:
    """Table 3 for one tagger, split by how many entities the question names (C1, C2)."""

    tagger: str
    questions: int
    gold_entities: int
    correct: int
    accuracy: float
    accuracy_c1: float
    accuracy_c2: float
    latency: LatencyStats


@dataclass(frozen=True)
class ApproachLatency:
    """Wall time of one approach's retrievals, and the mean of each pipeline stage."""

    total: LatencyStats
    stages_mean_ms: dict[str, float]


@dataclass(frozen=True)
class EvalSummary:
    """The report's numbers, per approach (and per tagger for Table 3)."""

    k: int
    hits: dict[str, ApproachHits]
    hit_histogram: dict[str, list[int]]  # questions per hit position 1..k + 1 (miss)
    hits_per_configuration: dict[str, dict[str, HitSummary]]
    search_space: dict[str, list[SpaceStats]]
    precision_curves: dict[str, PrecisionCurves]
    precision_points: list[PrecisionPoint]
    abstained_unanswerable: dict[str, int]
    abstained_answerable: dict[str, int]
    turbulence: dict[str, TurbulenceStat]
    tagging: list[TaggerAccuracy]
    latency: dict[str, ApproachLatency]
    plan_notes: dict[str, dict[str, int]]  # per approach: why a cell was relaxed -> questions
    selection_cells: dict[str, dict[str, int]]  # per approach: Table 2 cell that ran -> questions

    def to_dict(self) -> dict[str, Any]:
        """The ``summary.json`` form (plain data, key order as the report has always written)."""
        notes: dict[str, dict[str, int]] = {}
        for approach, counts in self.plan_notes.items():
            notes[approach] = counts
            notes[approach + " cells"] = self.selection_cells[approach]
        return {
            "k": self.k,
            "hits": {a: asdict(h) for a, h in self.hits.items()},
            "hit_histogram": self.hit_histogram,
            "hits_per_configuration": {
                a: {c: asdict(h) for c, h in per.items()}
                for a, per in self.hits_per_configuration.items()
            },
            "search_space": {a: [asdict(s) for s in ss] for a, ss in self.search_space.items()},
            "precision_curves": {a: c.to_dict() for a, c in self.precision_curves.items()},
            "precision_points": [asdict(p) for p in self.precision_points],
            "abstained_unanswerable": self.abstained_unanswerable,
            "abstained_answerable": self.abstained_answerable,
            "turbulence": {a: asdict(t) for a, t in self.turbulence.items()},
            "tagging": [asdict(t) for t in self.tagging],
            "latency": {a: asdict(lt) for a, lt in self.latency.items()},
            "plan_notes": notes,
        }


def summarize(run: EvalRun) -> EvalSummary:
    """All the report's numbers. Only the questions as written count (variant 0), except for
    turbulence, which compares a question's formulations."""
    k = int(run.meta["k"])
    approaches = list(run.meta["approaches"])
    answerable = _by_approach(_base_rows(run, "answerable"), approaches)
    unanswerable = _by_approach(_base_rows(run, "unanswerable"), approaches)
    curves = {
        a: _precision_curves(answerable.get(a, []), unanswerable.get(a, []), k) for a in approaches
    }
    return EvalSummary(
        k=k,
        hits={a: _approach_hits(rows, k) for a, rows in answerable.items()},
        hit_histogram={a: _hit_histogram(rows, k) for a, rows in answerable.items()},
        hits_per_configuration={a: _per_configuration(rows, k) for a, rows in answerable.items()},
        search_space={a: _search_space(rows) for a, rows in answerable.items()},
        precision_curves=curves,
        precision_points=[p for a, c in curves.items() for p in _precision_points(a, c)],
        abstained_unanswerable=_abstentions(unanswerable),
        abstained_answerable=_abstentions(answerable),
        turbulence=_turbulence(run.rows, approaches, k),
        tagging=_tagging(run.taggings),
        latency={a: _latency(rows) for a, rows in answerable.items()},
        plan_notes={a: _plan_notes(rows) for a, rows in answerable.items()},
        selection_cells={a: _selection_cells(rows) for a, rows in answerable.items()},
    )


def _base_rows(run: EvalRun, set_name: str) -> list[Row]:
    return [r for r in run.rows if r.set == set_name and r.variant == 0]


def _by_approach(rows: Sequence[Row], approaches: Sequence[str]) -> dict[str, list[Row]]:
    """Rows per approach: every listed approach (even without rows) first, in the run's order."""
    out: dict[str, list[Row]] = {a: [] for a in approaches}
    for r in rows:
        out.setdefault(r.approach, []).append(r)
    return out


def _hit_summary(rows: Sequence[Row], k: int) -> HitSummary:
    return summarize_hits(
        [r.hit_position or k + 1 for r in rows], [r.all_gold_recall or 0.0 for r in rows], k
    )


def _approach_hits(rows: Sequence[Row], k: int) -> ApproachHits:
    measured = [r.gold_in_selection for r in rows if r.gold_in_selection is not None]
    inside = sum(1 for g in measured if g) / len(measured) if measured else math.nan
    return ApproachHits(**asdict(_hit_summary(rows, k)), gold_in_selection=inside)


def _hit_histogram(rows: Sequence[Row], k: int) -> list[int]:
    return [sum(1 for r in rows if (r.hit_position or k + 1) == pos) for pos in range(1, k + 2)]


def _per_configuration(rows: Sequence[Row], k: int) -> dict[str, HitSummary]:
    """Figure 5: Table 4 per question configuration (C1/C2, entity/relational)."""
    groups: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        groups[r.configuration].append(r)
    return {c: _hit_summary(g, k) for c, g in sorted(groups.items())}


def _search_space(rows: Sequence[Row]) -> list[SpaceStats]:
    """Table 5: selection sizes per Table 2 cell (rows without a measured size left out)."""
    sizes: dict[str, list[int]] = defaultdict(list)
    for r in rows:
        if r.selection_size is not None:
            sizes[r.cell].append(r.selection_size)
    return search_space(sizes)


def _precision_curves(
    answerable: Sequence[Row], unanswerable: Sequence[Row], k: int
) -> PrecisionCurves:
    # The report's own thresholds join the fine grid so the report can read them off exactly.
    thresholds = sorted(set(DEFAULT_THRESHOLDS) | set(REPORT_THRESHOLDS))
    return PrecisionCurves(
        control=retained_share([r.cosines for r in answerable], k, thresholds),
        unanswerable=(
            retained_share([r.cosines for r in unanswerable], k, thresholds)
            if unanswerable
            else None
        ),
    )


def _precision_points(approach: str, curves: PrecisionCurves) -> list[PrecisionPoint]:
    """The paper's 0.83, and where our control set keeps half and nine tenths of its chunks
    (cosine scales differ between embedders, so 0.83 alone would not compare like with like)."""
    if curves.unanswerable is None:
        return []
    points: dict[str, float | None] = {
        "paper (0.83)": PAPER_THRESHOLD,
        "control keeps ≥50%": threshold_keeping(curves.control, 0.5),
        "control keeps ≥90%": threshold_keeping(curves.control, 0.9),
    }
    return [
        PrecisionPoint(
            approach=approach,
            point=label,
            threshold=point,
            control=share_at(curves.control, point),
            unanswerable=share_at(curves.unanswerable, point),
        )
        for label, point in points.items()
        # None: the control set never keeps that share (selections under k chunks)
        if point is not None
    ]


def _abstentions(by_approach: Mapping[str, Sequence[Row]]) -> dict[str, int]:
    """Questions on which each approach returned nothing (an empty selection)."""
    return {
        a: sum(1 for r in rows if r.empty is not None) for a, rows in by_approach.items() if rows
    }


def _turbulence(
    rows: Sequence[Row], approaches: Sequence[str], k: int
) -> dict[str, TurbulenceStat]:
    """Figure 6 over every answerable question with at least one paraphrase."""
    variants: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for r in rows:
        if r.set == "answerable":
            variants[(r.approach, r.question_id)].append(r)
    out: dict[str, TurbulenceStat] = {}
    for a in approaches:
        values = [
            turbulence([v.ranked for v in sorted(vs, key=lambda v: v.variant)], k)
            for (approach, _q), vs in variants.items()
            if approach == a and len(vs) > 1
        ]
        if values:
            out[a] = TurbulenceStat(n=len(values), mean=statistics.fmean(values))
    return out


def _tagging(taggings: Sequence[Tagging]) -> list[TaggerAccuracy]:
    """Table 3 per tagger, in the order the taggers first appear."""
    by_tagger: dict[str, list[Tagging]] = defaultdict(list)
    for t in taggings:
        by_tagger[t.tagger].append(t)
    out = []
    for name, ts in by_tagger.items():
        score = tagging_accuracy(name, [t.gold for t in ts], [t.tags for t in ts])
        out.append(
            TaggerAccuracy(
                tagger=name,
                questions=score.questions,
                gold_entities=score.gold_entities,
                correct=score.correct,
                accuracy=score.accuracy,
                accuracy_c1=_tag_accuracy([t for t in ts if len(t.gold) <= 1]),
                accuracy_c2=_tag_accuracy([t for t in ts if len(t.gold) > 1]),
                latency=latency_stats([t.latency_s for t in ts]),
            )
        )
    return out


def _tag_accuracy(ts: Sequence[Tagging]) -> float:
    gold = sum(len(t.gold) for t in ts)
    return sum(tags_correct(t.gold, t.tags) for t in ts) / gold if gold else math.nan


def _latency(rows: Sequence[Row]) -> ApproachLatency:
    stage: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        for name, v in r.timings.items():
            stage[name].append(v)
    return ApproachLatency(
        total=latency_stats([r.latency_s for r in rows]),
        stages_mean_ms={n: 1000 * statistics.fmean(v) for n, v in sorted(stage.items())},
    )


def _plan_notes(rows: Sequence[Row]) -> dict[str, int]:
    """Why a Table 2 cell could not run as written (the planner's notes), counted."""
    counts: dict[str, int] = defaultdict(int)
    for r in rows:
        for part in (r.note or "").split("; "):
            if part:
                counts[part] += 1
    return dict(counts)


def _selection_cells(rows: Sequence[Row]) -> dict[str, int]:
    cells: dict[str, int] = defaultdict(int)
    for r in rows:
        cells[r.cell] += 1
    return dict(cells)
