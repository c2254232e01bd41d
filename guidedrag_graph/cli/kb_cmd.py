"""``guidedrag load``, ``guidedrag kb stats`` and ``guidedrag datasets musique``."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import click

from guidedrag_graph.cli.common import driver_for, echo_json, load_settings, schema_of
from guidedrag_graph.config import Settings
from guidedrag_graph.kb.loader import DEFAULT_BATCH_SIZE, LoadReport, load_bundle
from guidedrag_graph.kb.stats import kb_stats


def _with_overrides(settings: Settings, preset: str | None, relation_mode: str | None) -> Settings:
    """Command-line --preset/--relation-mode win over the environment for this command."""
    update = {k: v for k, v in (("schema_preset", preset), ("relation_mode", relation_mode)) if v}
    return settings.model_copy(update=update) if update else settings


@click.command()
@click.argument("bundle_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--batch-size", default=DEFAULT_BATCH_SIZE, show_default=True, type=int)
@click.option(
    "--preset",
    type=click.Choice(["guidedrag", "neo4j-graphrag"]),
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
@click.option("--no-progress", is_flag=True, help="no progress bars")
@click.option("--json", "as_json", is_flag=True, help="print the load report as JSON")
def load(
    bundle_dir: Path,
    batch_size: int,
    preset: str | None,
    relation_mode: Literal["types", "property"] | None,
    no_migrate: bool,
    bulk: bool,
    no_progress: bool,
    as_json: bool,
) -> None:
    """Load a KB bundle (idempotent; rerun after a crash to finish the job)."""
    settings = _with_overrides(load_settings(), preset, relation_mode)
    schema = schema_of(settings)
    if bulk:
        from guidedrag_graph.cli.neo4j_cmd import _server
        from guidedrag_graph.kb.bulk import bulk_load

        report = bulk_load(
            settings, schema, bundle_dir, server=_server(settings, None, None, None, None)
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
    counts = ", ".join(f"{v} {k}" for k, v in report.counts.items() if k != "questions")
    click.echo(f"loaded {bundle_dir} ({report.schema_preset}): {counts}")
    click.echo(
        f"embeddings: {report.chunks_precomputed} precomputed, {report.chunks_reused} reused "
        f"from the database, {report.chunks_embedded} embedded; created "
        f"{report.nodes_created} nodes and {report.relationships_created} relationships in "
        f"{report.timings.get('total', 0.0):.1f}s ({report.chunks_per_second:.0f} chunks/s)"
    )
    if "import" in report.timings:
        click.echo(
            f"bulk: CSV {report.timings['csv']:.1f}s, offline import "
            f"{report.timings['import']:.1f}s, restart {report.timings['restart']:.1f}s, "
            f"indexes online {report.timings['indexes']:.1f}s"
        )


@click.group()
def kb() -> None:
    """Inspect the knowledge base."""


@kb.command()
@click.option(
    "--preset", type=click.Choice(["guidedrag", "neo4j-graphrag"]), default=None, help="schema"
)
@click.option("--relation-mode", type=click.Choice(["types", "property"]), default=None)
@click.option("--json", "as_json", is_flag=True, help="print as JSON")
def stats(preset: str | None, relation_mode: str | None, as_json: bool) -> None:
    """Documents, chunks, entities, relations, relation types, missing embeddings, indexes."""
    settings = _with_overrides(load_settings(), preset, relation_mode)
    schema = schema_of(settings)
    with driver_for(settings) as driver:
        data = kb_stats(driver, settings, schema)
    if as_json:
        echo_json(data)
        return
    for key in (
        "schema_preset",
        "documents",
        "chunks",
        "chunks_without_embedding",
        "entities",
        "mentions",
        "relations",
        "relation_types",
    ):
        click.echo(f"{key:<26}{data[key]}")
    if data["top_relation_types"]:
        top = ", ".join(f"{t['type']} ({t['count']})" for t in data["top_relation_types"])
        click.echo(f"{'top relation types':<26}{top}")
    click.echo("indexes:")
    for index in data["indexes"]:
        click.echo(
            f"  {index['name']:<36}{index['type']:<10}{index['state']:<10}"
            f"{index['population_percent']:>6.1f}%  {index['on']}"
        )


@click.group()
def datasets() -> None:
    """Convert public benchmarks into KB bundles."""


@datasets.command()
@click.argument("source", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("out_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--limit", type=int, default=None, help="keep the first N questions and their paragraphs"
)
@click.option(
    "--embed", is_flag=True, help="precompute chunk embeddings with the configured embedder"
)
@click.option("--round", "round_digits", type=int, default=None, help="round embeddings (decimals)")
@click.option("--named-only", is_flag=True, help="only questions whose text names their entity")
@click.option("--json", "as_json", is_flag=True, help="print the conversion report as JSON")
def musique(
    source: Path,
    out_dir: Path,
    limit: int | None,
    embed: bool,
    round_digits: int | None,
    named_only: bool,
    as_json: bool,
) -> None:
    """MuSiQue (HippoRAG subset + OpenIE) -> OUT_DIR (bundle) and OUT_DIR/unanswerable."""
    from guidedrag_graph.embeddings import embedder_for
    from guidedrag_graph.kb.musique import convert_musique

    embedder = embedder_for(load_settings()) if embed else None
    report = convert_musique(
        source,
        out_dir,
        limit=limit,
        embedder=embedder,
        round_digits=round_digits,
        named_only=named_only,
    )
    if as_json:
        echo_json(report.to_dict())
        return
    for line in report.lines():
        click.echo(line)
