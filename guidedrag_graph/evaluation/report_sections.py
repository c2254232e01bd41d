"""The report's sections past relevance: precision at the paper's threshold, turbulence under
paraphrase, tagging accuracy, latency per stage and the calibration record.

Split from ``report.py`` only by size: the same contract holds (each renderer reads the summary
built once and returns its blocks; nothing is computed here but formatting).
"""

from __future__ import annotations

from typing import Any

from guidedrag_graph.evaluation.markdown import num, pct, table
from guidedrag_graph.evaluation.metrics import share_at
from guidedrag_graph.evaluation.paper import (
    REPORT_THRESHOLDS,
)
from guidedrag_graph.evaluation.records import EvalRun
from guidedrag_graph.evaluation.summary import EvalSummary


def precision_section(
    meta: dict[str, Any], summary: EvalSummary, approaches: list[str]
) -> list[str]:
    """Figure 7: false positives on unanswerable questions at several operating points."""
    heading = "## Precision on unanswerable questions (Figure 7)\n"
    if not summary.precision_points:
        return [heading, "Not measured: no unanswerable bundle was given (`--unanswerable`).\n"]
    points = [
        [f"`{p.approach}`", p.point, num(p.threshold), pct(p.control), pct(p.unanswerable)]
        for p in summary.precision_points
    ]
    abstained = ", ".join(
        f"`{a}` {n}/{meta['unanswerable_questions']}"
        for a, n in summary.abstained_unanswerable.items()
    )
    return [
        heading,
        "Share of the n·k retrievable chunks whose raw cosine is at or above the threshold, "
        "on the unanswerable questions (false positives) and on the answerable control set "
        "(what the threshold keeps). Approaches that abstain (empty selection) return nothing "
        "and count as zero. The paper reads Figure 7 at 0.83 with its embedder; cosine scales "
        "differ between embedders, so we also read ours where our control set keeps "
        "≥50% and ≥90% of its chunks (an approach whose control set never keeps that much, "
        "because its selections hold fewer than k chunks, has no such row).\n",
        table(
            ["approach", "operating point", "threshold", "control kept", "unanswerable kept"],
            points,
        ),
        "\nFull curves at selected thresholds (unanswerable / control):\n",
        table(
            ["approach", *[f"{t:.2f}" for t in REPORT_THRESHOLDS]], curve_rows(summary, approaches)
        ),
        "\nAbstentions on unanswerable questions (empty selection, no vector search): "
        + abstained
        + ".\n",
        "Paper (§5.4): at 0.83 the RAG approaches keep the majority of the control set's "
        "chunks and 19–28% of the unanswerable set's; GuidedRAG returns Ø.\n",
    ]


def curve_rows(summary: EvalSummary, approaches: list[str]) -> list[list[str]]:
    rows = []
    for a in approaches:
        curves = summary.precision_curves[a]
        if curves.unanswerable is None:
            continue
        rows.append(
            [f"`{a}`"]
            + [
                f"{pct(share_at(curves.unanswerable, t))} / {pct(share_at(curves.control, t))}"
                for t in REPORT_THRESHOLDS
            ]
        )
    return rows


def turbulence_section(meta: dict[str, Any], summary: EvalSummary) -> list[str]:
    """Figure 6, or why it was not measured (no invented paraphrases unless asked for)."""
    heading = "## Turbulence (Figure 6)\n"
    if not summary.turbulence:
        return [
            heading,
            "Not measured: the bundle's questions have no paraphrases (MuSiQue has none), and we "
            "do not invent numbers for Figure 6.\n",
        ]
    synthetic = (
        "**Paraphrases are synthetic**: rule-based rewrites made by the harness (a "
        "polite wrapper and a keyword query), not from the data set, and milder than "
        "ARLtR's expertise-level formulations, so T here is a lower bound. "
        if meta.get("paraphrases_synthetic")
        else ""
    )
    rows = [[f"`{a}`", str(t.n), num(t.mean, 3)] for a, t in summary.turbulence.items()]
    return [
        heading,
        synthetic + "T = (D_c − k)/(P·k − k) over each question's formulations (the question and "
        "its paraphrases), generalised to (D_c − m)/(N − m) (N chunks retrieved in all, m the "
        "longest list) so that selections holding fewer than k chunks stay within 0..1; "
        "the two agree whenever every formulation returns k chunks. A selection of one or "
        "two chunks has little room to change, so read a low T beside the search-space "
        f"table. Questions with paraphrases: {meta['paraphrased_questions']}.\n",
        table(["approach", "questions", "mean T"], rows),
        "",
    ]


def tagging_section(run: EvalRun, summary: EvalSummary) -> list[str]:
    """Table 3: each tagger's accuracy, and the taggers that could not run."""
    blocks = ["## Entity tagging (Table 3)\n"]
    if summary.tagging:
        header = ["tagger", "questions", "gold entities", "correct", "accuracy", "C1", "C2"]
        rows = [
            [
                f"`{t.tagger}`",
                str(t.questions),
                str(t.gold_entities),
                str(t.correct),
                pct(t.accuracy),
                pct(t.accuracy_c1),
                pct(t.accuracy_c2),
                f"{t.latency.mean_ms:.1f} ms",
            ]
            for t in summary.tagging
        ]
        blocks.append(table([*header, "mean latency"], rows))
        blocks.append(
            "\nA tagger gets as many guesses as the question's semantics name entities; a guess "
            "is right when its name key equals a gold entity's. Paper (§5.1, Table 3 is an image "
            "in our copy): cosine similarity severely underperforms, the LLM tagger gets slightly "
            "over half right, the hybrid (LLM tags matched by embedding) does best.\n"
        )
    blocks += [f"- `{name}` did not run: {why}" for name, why in run.tagger_errors.items()]
    blocks.append("")
    return blocks


def latency_section(meta: dict[str, Any], summary: EvalSummary, approaches: list[str]) -> list[str]:
    rows = []
    for a in approaches:
        lt = summary.latency[a]
        stages = ", ".join(f"{n} {v:.1f}" for n, v in lt.stages_mean_ms.items())
        rows.append(
            [
                f"`{a}`",
                num(lt.total.mean_ms, 1),
                num(lt.total.median_ms, 1),
                num(lt.total.p95_ms, 1),
                stages or "–",
            ]
        )
    return [
        "## Latency per approach\n",
        table(["approach", "mean ms", "median ms", "p95 ms", "stage means (ms)"], rows),
        "\nWall time of `GuidedRAG.retrieve` per question (query embeddings cached beforehand), "
        f"on a machine with {meta.get('cpus', '?')} CPU cores against a local Neo4j.\n",
    ]


def calibration_section(meta: dict[str, Any]) -> str:
    """``guidedrag-calibrated``'s folds: held-out figures and each fold's fitted boosts."""
    cal = meta.get("calibration")
    if not cal:
        return ""
    held = cal["held_out"]
    lines = [
        "## Calibration folds (`guidedrag-calibrated`)\n",
        f"{cal['folds']}-fold cross-validation over {cal['questions']} answerable questions: "
        "each question is scored with tier boosts fitted on the other folds only (held-out "
        f"relevant@{cal['k']} {pct(held['relevant'])}, avg hit {num(held['avg_hit'])}, "
        f"all-gold recall {pct(held['all_gold_recall'])}; never the training fit).\n",
    ]
    rows = [
        [
            str(fold["fold"] + 1),
            str(fold["questions"]),
            pct(fold["held_out"]["relevant"]),
            key,
            ", ".join(f"{t} {v:g}" for t, v in w.items()),
        ]
        for fold in cal["per_fold"]
        for key, w in fold["tiers"].items()
    ]
    lines.append(table(["fold", "questions", "held-out relevant", "entry", "boosts"], rows))
    return "\n".join(lines) + "\n"
