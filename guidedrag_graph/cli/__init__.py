"""The ``guidedrag`` command line: one click group, commands grouped by stage in sibling modules."""

from __future__ import annotations

import os
import sys

import click

from guidedrag_graph.cli import ask_cmd, eval_cmd, kb_cmd, neo4j_cmd, select_cmd, setup_cmd
from guidedrag_graph.errors import GuidedRAGError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="guidedrag-graph")
@click.option(
    "--schema",
    "schema_file",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="schema mapping file (TOML/JSON) for this command; same as GUIDEDRAG_SCHEMA_FILE",
)
def cli(schema_file: str | None) -> None:
    """GuidedRAG on Neo4j: steer retrieval with a selection over your knowledge graph."""
    if schema_file:
        # Every command reads Settings() from the environment: one place sets it for all.
        os.environ["GUIDEDRAG_SCHEMA_FILE"] = os.path.abspath(schema_file)


cli.add_command(neo4j_cmd.neo4j)
cli.add_command(setup_cmd.config)
cli.add_command(setup_cmd.migrate)
cli.add_command(kb_cmd.load)
cli.add_command(kb_cmd.kb)
cli.add_command(kb_cmd.datasets)
cli.add_command(ask_cmd.retrieve)
cli.add_command(ask_cmd.ask)
cli.add_command(ask_cmd.demo)
kb_cmd.kb.add_command(ask_cmd.embed_entities)
cli.add_command(eval_cmd.eval_command)
cli.add_command(eval_cmd.eval_report)
cli.add_command(select_cmd.select)
cli.add_command(select_cmd.cypher)


def main() -> None:
    """Entry point: library errors print as one clear line and exit 2, never as a traceback."""
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except GuidedRAGError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
