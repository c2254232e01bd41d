"""``guidedrag eval``: the paper's comparison (Tables 2–5, Figure 7) on a KB bundle's questions."""

from __future__ import annotations

import functools
import json
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from guidedrag_graph.cli.common import driver_for, load_settings, schema_of
from guidedrag_graph.config import Settings
from guidedrag_graph.evaluation.approaches import APPROACHES
from guidedrag_graph.evaluation.harness import (
    DEFAULT_APPROACHES,
    EvalOptions,
    PrepareSet,
    clear_kb,
    run_evaluation,
)
from guidedrag_graph.evaluation.plots import matplotlib_available, write_plots
from guidedrag_graph.evaluation.records import EvalRun
from guidedrag_graph.evaluation.report import render_markdown
from guidedrag_graph.evaluation.summary import EvalSummary, summarize
from guidedrag_graph.kb import Bundle, load_bundle, read_bundle
from guidedrag_graph.vocabulary import PATHS, TAGGERS

if TYPE_CHECKING:
    from neo4j import Driver

    from guidedrag_graph.schema.presets import SchemaMapping


def _names(text: str, valid: tuple[str, ...] | list[str], what: str) -> tuple[str, ...]:
    names = tuple(n.strip().lower() for n in text.split(",") if n.strip())
    bad = [n for n in names if n not in valid]
    if bad or not names:
        raise click.BadParameter(
            f"unknown {what} {', '.join(bad) or '(none given)'}; choose from {', '.join(valid)}"
        )
    return names


# Both commands write the same files into the folder given with --out.
_out_dir_option = functools.partial(
    click.option, "--out", "out_dir", type=click.Path(file_okay=False, path_type=Path)
)


def write_outputs(run: EvalRun, out_dir: Path, *, plots: bool = True) -> list[Path]:
    """results.json, summary.json, report.md and (with matplotlib) the PNGs, into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    summary = summarize(run)
    run.write_json(out_dir / "results.json")
    (out_dir / "summary.json").write_text(
        json.dumps(summary.to_dict(), indent=1, ensure_ascii=False, default=str) + "\n", "utf-8"
    )
    (out_dir / "report.md").write_text(render_markdown(run, summary), "utf-8")
    written = [out_dir / "results.json", out_dir / "summary.json", out_dir / "report.md"]
    if plots:
        written += write_plots(summary, list(run.meta["approaches"]), out_dir)
    return written


@click.command("eval")
@click.argument("bundle_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--unanswerable",
    "unanswerable_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="bundle whose KB lacks the entities its answerable=false questions ask about (Fig. 7)",
)
@click.option(
    "--approaches",
    default=",".join(DEFAULT_APPROACHES),
    show_default=True,
    help=f"comma-separated, from: {', '.join(APPROACHES)}",
)
@click.option("-k", "k", default=5, show_default=True, type=click.IntRange(1, 100))
@click.option(
    "--tagger",
    type=click.Choice(list(TAGGERS)),
    default="embedding",
    show_default=True,
    help="GraphRAG's entity tagger",
)
@click.option(
    "--taggers",
    default=",".join(TAGGERS),
    show_default=True,
    help="taggers whose accuracy Table 3 reports (LLM ones are skipped without an LLM)",
)
@click.option("--limit", type=click.IntRange(1), default=None, help="first N questions per set")
@click.option(
    "--path",
    "rank_path",
    type=click.Choice(["auto", *PATHS]),
    default="exact",
    show_default=True,
    help="ranking path: exact cosine everywhere (the paper), or auto (the planner's choice)",
)
@click.option(
    "--reload",
    is_flag=True,
    help="before each question set, DELETE every chunk, document and entity in the database "
    "and load that set's bundle (needed for --unanswerable unless that KB is loaded already)",
)
@click.option(
    "--synthetic-paraphrases",
    is_flag=True,
    help="for turbulence, give questions without paraphrases two rule-based rewrites "
    "(labelled synthetic in the report)",
)
@click.option(
    "--note",
    "notes",
    multiple=True,
    help="a line for the report's 'where and why we differ' section (repeatable)",
)
@click.option("--no-plots", is_flag=True, help="skip the PNG plots")
@click.option("--no-progress", is_flag=True, help="no progress bars")
@_out_dir_option(
    required=True, help="folder for report.md, results.json, summary.json and the PNGs"
)
def eval_command(
    bundle_dir: Path,
    unanswerable_dir: Path | None,
    approaches: str,
    k: int,
    tagger: str,
    taggers: str,
    limit: int | None,
    rank_path: str,
    reload: bool,
    synthetic_paraphrases: bool,
    notes: tuple[str, ...],
    no_plots: bool,
    no_progress: bool,
    out_dir: Path,
) -> None:
    """Compare RAG, RAG*, GraphRAG and GraphRAG* (the paper's Table 2) on a bundle's questions.

    The database must hold BUNDLE_DIR's KB (``guidedrag load``), or pass --reload.
    """
    options = EvalOptions(
        approaches=_names(approaches, list(APPROACHES), "approach"),
        k=k,
        tagger=tagger,
        accuracy_taggers=_names(taggers, TAGGERS, "tagger"),
        limit=limit,
        synthetic_paraphrases=synthetic_paraphrases,
        path=None if rank_path == "auto" else rank_path,
    )
    # Server notifications (unknown labels in an empty KB, deprecations) would bury the progress.
    logging.getLogger("neo4j.notifications").setLevel(logging.ERROR)
    settings = load_settings()
    schema = schema_of(settings)
    bundle = read_bundle(bundle_dir)
    unanswerable = read_bundle(unanswerable_dir) if unanswerable_dir else None
    plots = not no_plots
    if plots and not matplotlib_available():
        click.echo("matplotlib is not installed: skipping plots (pip install matplotlib)", err=True)
        plots = False
    started = time.perf_counter()
    with driver_for(settings) as driver:
        run = run_evaluation(
            settings,
            driver,
            bundle,
            unanswerable=unanswerable,
            options=options,
            bundle_label=bundle_dir.name,
            unanswerable_label=unanswerable_dir.name if unanswerable_dir else "",
            prepare=_reloader(driver, settings, schema, not no_progress) if reload else None,
            progress=not no_progress,
            log=lambda line: click.echo(line, err=True),
        )
    run.meta["wall_s"] = round(time.perf_counter() - started, 3)
    run.meta["notes"] = list(notes)
    written = write_outputs(run, out_dir, plots=plots)
    for warning in run.warnings:
        click.echo(f"warning: {warning}", err=True)
    _print_hits(summarize(run), options.approaches, k)
    click.echo(f"wrote {len(written)} files to {out_dir} in {run.meta['wall_s']:.0f}s")


def _reloader(
    driver: Driver, settings: Settings, schema: SchemaMapping, progress: bool
) -> PrepareSet:
    """``--reload``: before each question set, empty the KB and load that set's bundle."""

    def prepare(set_name: str, set_bundle: Bundle) -> None:
        deleted = clear_kb(driver, settings)
        click.echo(f"{set_name}: deleted {deleted} nodes; loading {set_bundle.path}", err=True)
        load_bundle(driver, settings, schema, set_bundle, progress=progress)

    return prepare


def _print_hits(summary: EvalSummary, approaches: Sequence[str], k: int) -> None:
    click.echo(f"{'approach':<20} relevant@{k}  avg hit  median  recall")
    for name in approaches:
        h = summary.hits[name]
        click.echo(
            f"{name:<20} {100 * h.relevant:>9.1f}%  {h.avg_hit:>7.2f}  "
            f"{h.median_hit:>6.1f}  {100 * h.all_gold_recall:>5.1f}%"
        )


@click.command("eval-report")
@click.argument("results", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_out_dir_option(default=None, help="folder to write into (default: the results file's folder)")
@click.option(
    "--note", "notes", multiple=True, help="add a line to the report's differences section"
)
@click.option("--no-plots", is_flag=True, help="skip the PNG plots")
def eval_report(
    results: Path, out_dir: Path | None, notes: tuple[str, ...], no_plots: bool
) -> None:
    """Rebuild report.md, summary.json and the plots from a results.json (no database needed)."""
    run = EvalRun.read_json(results)
    run.meta["notes"] = [*run.meta.get("notes", []), *notes]
    target = out_dir or results.parent
    written = write_outputs(run, target, plots=not no_plots and matplotlib_available())
    click.echo(f"wrote {len(written)} files to {target}")


# What eval-diff exits with when rows differ: not 1 (a bug here) nor 2 (a user error).
ROWS_DIFFER = 3


@click.command("eval-diff")
@click.argument("a", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("b", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--show",
    type=click.IntRange(0, 1000),
    default=10,
    show_default=True,
    help="differing rows to list",
)
def eval_diff(a: Path, b: Path, show: int) -> None:
    """Compare two results.json files row by row, timing aside (exit 3 when rows differ)."""
    from guidedrag_graph.evaluation.row_diff import read_rows, row_diff

    diff = row_diff(read_rows(a), read_rows(b))
    for line in diff.lines(show):
        click.echo(line)
    if not diff.same:
        raise SystemExit(ROWS_DIFFER)
