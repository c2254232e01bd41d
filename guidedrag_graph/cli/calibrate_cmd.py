"""``guidedrag calibrate``: fit ``auto``'s tier boosts on a bundle's questions (k-fold CV)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from guidedrag_graph.cli.common import driver_for, load_settings, schema_of


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


@click.command("calibrate")
@click.argument("bundle_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="policy file to write (load it with --policy or GUIDEDRAG_STEERING_POLICY)",
)
@click.option("--folds", "n_folds", default=5, show_default=True, type=click.IntRange(2, 50))
@click.option("-k", "k", default=5, show_default=True, type=click.IntRange(1, 100))
@click.option("--seed", default=0, show_default=True, type=int, help="fold shuffle seed")
@click.option(
    "--min-questions",
    default=20,
    show_default=True,
    type=click.IntRange(1),
    help="fit a Table 2 configuration on its own only with this many training questions",
)
@click.option("--load", "load_first", is_flag=True, help="load the bundle first (idempotent)")
@click.option("--json", "as_json", is_flag=True, help="print the held-out report as JSON")
def calibrate_command(
    bundle_dir: Path,
    out: Path,
    n_folds: int,
    k: int,
    seed: int,
    min_questions: int,
    load_first: bool,
    as_json: bool,
) -> None:
    """Fit the tier boosts of steering=auto on BUNDLE_DIR's questions by cross-validation.

    The KB must be loaded (or pass --load). Reports held-out-fold figures only: each fold's
    questions run through the real pipeline with weights fitted on the other folds.
    """
    from guidedrag_graph.evaluation.calibration import calibrate
    from guidedrag_graph.kb import load_bundle, read_questions
    from guidedrag_graph.pipeline import GuidedRAG

    settings = load_settings()
    questions = read_questions(bundle_dir)
    with driver_for(settings) as driver:
        if load_first:
            load_bundle(driver, settings, schema_of(settings), bundle_dir)
        rag = GuidedRAG(settings, driver=driver, schema=schema_of(settings))
        try:
            result = calibrate(
                rag,
                questions,
                k=k,
                n_folds=n_folds,
                seed=seed,
                min_questions=min_questions,
                progress=None if as_json else lambda m: click.echo(m, err=True),
            )
        except ValueError as exc:
            raise click.UsageError(str(exc)) from None
    out.write_text(result.policy.to_json() + "\n", encoding="utf-8")
    if as_json:
        click.echo(json.dumps(result.summary(), indent=2, ensure_ascii=False))
        return
    held, base = result.held_out, result.baseline
    click.echo(f"held-out figures ({n_folds} folds, k = {k}; never the training fit):")
    click.echo(f"  {'':<22} {'relevant@k':>10} {'avg hit':>8} {'all-gold recall':>16}")
    for label, fig in (("auto, fitted per fold", held), ("base RAG", base)):
        click.echo(
            f"  {label:<22} {_pct(fig['relevant']):>10} {fig['avg_hit']:>8.2f} "
            f"{_pct(fig['all_gold_recall']):>16}"
        )
    for fold in result.folds:
        click.echo(
            f"  fold {fold.index + 1}: {len(fold.test_ids)} questions, relevant@k "
            f"{_pct(fold.held_out['relevant'])}"
        )
    for key, weights in result.policy.tiers.items():
        kind = "∩" if weights.intersects else "∪"
        click.echo(f"policy [{key}] ({kind}): {weights.model_dump()}")
    click.echo(f"wrote {out}")
