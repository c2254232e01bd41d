"""``guidedrag load``: a KB bundle into Neo4j (idempotent; rerun after a crash to finish)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import click

from guidedrag_graph.cli.common import driver_for, echo_json, load_settings, schema_of
from guidedrag_graph.config import Settings
from guidedrag_graph.kb.loader import DEFAULT_BATCH_SIZE, LoadReport, load_bundle
from guidedrag_graph.vocabulary import LOADABLE_PRESETS


def with_overrides(settings: Settings, preset: str | None, relation_mode: str | None) -> Settings:
    """Command-line --preset/--relation-mode win over the environment for this command."""
    update = {k: v for k, v in (("schema_preset", preset), ("relation_mode", relation_mode)) if v}
    return settings.model_copy(update=update) if update else settings


@click.command()
@click.argument(
    "bundle_dir", required=False, type=click.Path(exists=True, file_okay=False, path_type=Path)
)
@click.option(
    "--sample",
    is_flag=True,
    help="load the sample KB bundled with the package (MuSiQue subset) instead of BUNDLE_DIR",
)
@click.option("--batch-size", default=DEFAULT_BATCH_SIZE, show_default=True, type=int)
@click.option(
    "--preset",
    type=click.Choice(LOADABLE_PRESETS),
    default=None,
    help="schema preset (default: GUIDEDRAG_SCHEMA_PRESET)",
)
@click.option(
    "--relation-mode",
    type=click.Choice(["types", "property"]),
    default=None,
    help="relations as relationship types, or as a property of one generic type "
    "(default: GUIDEDRAG_RELATION_MODE, else the preset's)",
)
@click.option("--no-migrate", is_flag=True, help="do not apply pending migrations first")
@click.option(
    "--bulk",
    is_flag=True,
    help="first load into the managed server's EMPTY database through neo4j-admin's offline "
    "importer (stops and restarts the server; see docs/performance.md)",
)
@click.option(
    "--on-conflict",
    type=click.Choice(["refuse", "update"]),
    default="refuse",
    show_default=True,
    help="a declared entity id the database holds under another name, or a document or chunk "
    "id it holds with other content: refuse the load (nothing written) or rename / replace it "
    "(each one reported)",
)
@click.option("--no-progress", is_flag=True, help="no progress bars")
@click.option("--json", "as_json", is_flag=True, help="print the load report as JSON")
def load(
    bundle_dir: Path | None,
    sample: bool,
    batch_size: int,
    preset: str | None,
    relation_mode: Literal["types", "property"] | None,
    no_migrate: bool,
    bulk: bool,
    on_conflict: Literal["refuse", "update"],
    no_progress: bool,
    as_json: bool,
) -> None:
    """Load a KB bundle (idempotent; rerun after a crash to finish the job).

    BUNDLE_DIR is a bundle folder (docs/bundles.md); --sample loads the bundled sample KB.
    """
    if sample == (bundle_dir is not None):
        raise click.UsageError("give BUNDLE_DIR or --sample (one of them)")
    if bundle_dir is None:
        from guidedrag_graph.kb import sample_kb_dir

        bundle_dir = sample_kb_dir()
    settings = with_overrides(load_settings(), preset, relation_mode)
    schema = schema_of(settings)
    if bulk:
        from guidedrag_graph.cli.neo4j_cmd import _server
        from guidedrag_graph.kb.bulk import bulk_load

        report = bulk_load(
            settings,
            schema,
            bundle_dir,
            server=_server(settings, None, None, None, None),
            progress=None if no_progress else lambda line: click.echo(line, err=True),
        )
        _print_report(report, bundle_dir, as_json)
        return
    with driver_for(settings) as driver:
        report = load_bundle(
            driver,
            settings,
            schema,
            bundle_dir,
            batch_size=batch_size,
            migrate=not no_migrate,
            progress=not no_progress,
            on_conflict=on_conflict,
        )
    _print_report(report, bundle_dir, as_json)


def _print_report(report: LoadReport, bundle_dir: Path, as_json: bool) -> None:
    if as_json:
        echo_json(report.to_dict())
        return
    for warning in report.warnings:
        click.echo(f"warning: {warning}", err=True)
    for name in report.migrations_applied:
        click.echo(f"applied migration {name}")
    for changed in (*report.entities_renamed, *report.replaced):
        click.echo(changed)
    counts = ", ".join(f"{v} {k}" for k, v in report.counts.items() if k != "questions")
    click.echo(f"loaded {bundle_dir} ({report.schema_preset}): {counts}")
    click.echo(
        f"embeddings: {report.chunks_precomputed} precomputed, {report.chunks_reused} reused "
        f"from the database, {report.chunks_embedded} embedded; created "
        f"{report.nodes_created} nodes and {report.relationships_created} relationships in "
        f"{report.timings.get('total', 0.0):.1f}s ({report.chunks_per_second:.0f} chunks/s)"
    )
    if "import" in report.timings:
        t = report.timings
        click.echo(
            f"bulk: read {t.get('read', 0.0):.1f}s, CSV {t['csv']:.1f}s, offline import "
            f"{t['import']:.1f}s, restart {t['restart']:.1f}s, indexes online "
            f"{t['indexes']:.1f}s (migrations {t.get('migrations', 0.0):.1f}s, index "
            f"population {t.get('index_population', 0.0):.1f}s)"
        )
