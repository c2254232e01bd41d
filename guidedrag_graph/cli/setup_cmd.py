"""``guidedrag config`` and ``guidedrag migrate``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from guidedrag_graph.cli.common import driver_for, echo_json, load_settings, schema_of

if TYPE_CHECKING:
    from guidedrag_graph.migration.run import MigrationState


@click.command()
@click.option("--json", "as_json", is_flag=True, help="print as JSON")
def config(as_json: bool) -> None:
    """Print the effective settings (env over .env over defaults), secrets masked.

    Each setting is named by the variable that sets it (NEO4J_URI, GUIDEDRAG_TOP_K, ...), so
    a line can be copied into the environment or .env. Secrets print as ``****`` and URIs
    without ``user:password@``, so the output can be pasted into an issue.
    """
    from guidedrag_graph.config import env_name

    settings = load_settings()
    values = {env_name(field): value for field, value in settings.masked().items()}
    if as_json:
        echo_json(values)
        return
    width = max(len(k) for k in values)
    for key, value in values.items():
        click.echo(f"{key.ljust(width)}  {value}")


def _why(state: MigrationState) -> str:
    """What a partial migration lacks, and the prefix of the run that did not complete."""
    parts = []
    if state.interrupted_prefix is not None:
        parts.append(f"interrupted run with GUIDEDRAG_INDEX_PREFIX={state.interrupted_prefix}")
    if state.missing:
        parts.append(f"missing: {', '.join(state.missing)}")
    return f"  ({'; '.join(parts)}; run `guidedrag migrate`)" if parts else ""


@click.command()
@click.option("--status", "show_status", is_flag=True, help="list migrations and their state")
@click.option("--json", "as_json", is_flag=True, help="print as JSON")
def migrate(show_status: bool, as_json: bool) -> None:
    """Apply pending migrations in order (idempotent), or show their state."""
    from guidedrag_graph.migration.run import migrate as run_migrations
    from guidedrag_graph.migration.run import status as migration_status

    settings = load_settings()
    with driver_for(settings) as driver:
        if show_status:
            states = migration_status(driver, settings)
            if as_json:
                echo_json(
                    [
                        {
                            "migration": s.migration.path.name,
                            "state": s.state,
                            "applied_at": s.applied_at,
                            "missing": list(s.missing),
                            "interrupted_prefix": s.interrupted_prefix,
                        }
                        for s in states
                    ]
                )
                return
            for state in states:
                when = f"  {state.applied_at}" if state.applied_at else ""
                click.echo(f"{state.migration.path.name:<48} {state.state}{when}{_why(state)}")
            return
        applied = run_migrations(driver, settings, schema_of(settings))
    if as_json:
        echo_json({"applied": [m.path.name for m in applied]})
        return
    if applied:
        for migration in applied:
            click.echo(f"applied {migration.path.name}")
    else:
        click.echo("database is up to date")
