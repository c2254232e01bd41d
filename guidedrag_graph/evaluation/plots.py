"""PNG plots of an evaluation summary (matplotlib, Agg backend: no display needed).

matplotlib is an optional dependency (``pip install guidedrag-graph[plots]``); without it the
report is still written and the CLI says that the plots were skipped. One function per figure,
each returning ``None`` when the summary holds nothing to draw for it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from guidedrag_graph.evaluation.paper import PAPER_TABLE4, PAPER_THRESHOLD
from guidedrag_graph.evaluation.summary import EvalSummary


def matplotlib_available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def write_plots(summary: EvalSummary, approaches: list[str], out_dir: Path) -> list[Path]:
    """Write the report's figures into ``out_dir``; returns the files written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    figures: list[tuple[str, Callable[[Any, EvalSummary, list[str]], Any]]] = [
        ("relevant_at_k.png", _relevant_at_k),
        ("hit_position.png", _hit_position),
        ("relevant_per_configuration.png", _relevant_per_configuration),
        ("search_space.png", _search_space),
        ("unanswerable_precision.png", _unanswerable_precision),
        ("latency.png", _latency),
    ]
    written: list[Path] = []
    for name, draw in figures:
        fig = draw(plt, summary, approaches)
        if fig is None:
            continue
        path = out_dir / name
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


def _relevant_at_k(plt: Any, summary: EvalSummary, approaches: list[str]) -> Any:
    """Table 4: relevant@k, ours beside the paper's."""
    k = summary.k
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(approaches)), 4))
    xs = range(len(approaches))
    ours = [100 * summary.hits[a].relevant for a in approaches]
    paper = [PAPER_TABLE4[a][0] if a in PAPER_TABLE4 else math.nan for a in approaches]
    ax.bar([x - 0.2 for x in xs], ours, width=0.4, label="ours")
    ax.bar([x + 0.2 for x in xs], paper, width=0.4, label="paper (ARLtR)", alpha=0.6)
    for x, v in zip(xs, ours, strict=True):
        ax.text(x - 0.2, v + 1, f"{v:.0f}", ha="center", fontsize=8)
    ax.set_xticks(list(xs), approaches, rotation=20, ha="right")
    ax.set_ylabel(f"relevant@{k} (%)")
    ax.set_ylim(0, 100)
    ax.set_title(f"Questions with the answer chunk in the top {k}")
    ax.legend()
    return fig


def _hit_position(plt: Any, summary: EvalSummary, approaches: list[str]) -> Any:
    """Hit position distribution (misses at k + 1), with the average in the legend."""
    k = summary.k
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / max(1, len(approaches))
    positions = list(range(1, k + 2))
    for i, a in enumerate(approaches):
        ax.bar(
            [p + i * width - 0.4 + width / 2 for p in positions],
            summary.hit_histogram[a],
            width=width,
            label=f"{a} (avg {summary.hits[a].avg_hit:.2f})",
        )
    ax.set_xticks(positions, [str(p) for p in positions[:-1]] + [f"miss ({k + 1})"])
    ax.set_xlabel("rank of the first answer chunk")
    ax.set_ylabel("questions")
    ax.set_title("Hit position (Table 4)")
    ax.legend(fontsize=7, ncol=2)
    return fig


def _relevant_per_configuration(plt: Any, summary: EvalSummary, approaches: list[str]) -> Any:
    """Figure 5: relevant@k per question configuration."""
    per_approach = summary.hits_per_configuration
    configs = sorted({c for a in approaches for c in per_approach[a]})
    if not configs:
        return None
    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * len(configs) + 2), 4))
    width = 0.8 / len(approaches)
    for i, a in enumerate(approaches):
        per = per_approach[a]
        vals = [100 * per[c].relevant if c in per else 0.0 for c in configs]
        ax.bar(
            [j + i * width - 0.4 + width / 2 for j in range(len(configs))],
            vals,
            width=width,
            label=a,
        )
    ax.set_xticks(range(len(configs)), configs)
    ax.set_ylabel(f"relevant@{summary.k} (%)")
    ax.set_ylim(0, 100)
    ax.set_title("Relevant per question configuration")
    ax.legend(fontsize=7, ncol=2)
    return fig


def _search_space(plt: Any, summary: EvalSummary, approaches: list[str]) -> Any:
    """Table 5 on a log scale: average selection size, whiskers from min to max."""
    labels: list[str] = []
    avgs: list[float] = []
    lows: list[float] = []
    highs: list[float] = []
    for a in approaches:
        for s in summary.search_space[a]:
            labels.append(f"{a}: {s.kind}")
            avgs.append(max(s.avg, 0.5))
            lows.append(max(s.avg, 0.5) - max(s.min, 0.5))
            highs.append(max(s.max, 0.5) - max(s.avg, 0.5))
    if not labels:
        return None
    fig, ax = plt.subplots(figsize=(7, 0.35 * len(labels) + 1.5))
    ax.barh(range(len(labels)), avgs, xerr=[lows, highs], capsize=3)
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    ax.set_xscale("log")
    ax.invert_yaxis()
    ax.set_xlabel("chunks in the selection (avg, whiskers min–max; log)")
    ax.set_title("Search space per selection")
    return fig


def _unanswerable_precision(plt: Any, summary: EvalSummary, approaches: list[str]) -> Any:
    """Figure 7: share of chunks at or above each threshold, unanswerable beside control."""
    curves = summary.precision_curves
    with_unanswerable = [
        a for a in approaches if a in curves and curves[a].unanswerable is not None
    ]
    if not with_unanswerable:
        return None
    fig, ax = plt.subplots(figsize=(9.5, 4.5))
    for a in with_unanswerable:
        unanswerable = curves[a].unanswerable
        assert unanswerable is not None
        (line,) = ax.plot(*zip(*unanswerable, strict=True), label=f"{a} (unans.)")
        ax.plot(
            *zip(*curves[a].control, strict=True),
            linestyle="--",
            color=line.get_color(),
            alpha=0.6,
            label=f"{a} (control)",
        )
    ax.axvline(PAPER_THRESHOLD, color="grey", linestyle=":", linewidth=1)
    ax.text(PAPER_THRESHOLD, 1.02, "0.83", ha="center", fontsize=8)
    ax.set_xlabel("cosine threshold")
    ax.set_ylabel("share of top-k chunks at or above")
    ax.set_ylim(0, 1.05)
    ax.set_title("Chunks retained at a similarity threshold")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    return fig


def _latency(plt: Any, summary: EvalSummary, approaches: list[str]) -> Any:
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(approaches)), 4))
    means = [summary.latency[a].total.mean_ms for a in approaches]
    p95 = [summary.latency[a].total.p95_ms for a in approaches]
    ax.bar(range(len(approaches)), means, label="mean")
    ax.scatter(range(len(approaches)), p95, color="black", marker="_", s=200, label="p95")
    ax.set_xticks(range(len(approaches)), approaches, rotation=20, ha="right")
    ax.set_ylabel("ms per retrieval")
    ax.set_title("Retrieval latency")
    ax.legend()
    return fig
