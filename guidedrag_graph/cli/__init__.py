"""The ``guidedrag`` command line: one click group, commands grouped by stage in sibling modules.

The command modules are imported only when their command runs: the retrieval stack (neo4j,
numpy, openai, the embedder) takes seconds to import, and ``guidedrag --help`` should not wait
for it. The one-line help of each command is therefore written here too; a test checks it
against the command's docstring.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from collections.abc import Sequence

import click

from guidedrag_graph.cli.schema_option import schema_option

# name -> (module, attribute, short help as `guidedrag --help` lists it)
_LAZY: dict[str, tuple[str, str, str]] = {
    "neo4j": (
        "guidedrag_graph.cli.neo4j_cmd",
        "neo4j",
        "Manage a local Neo4j Community server assembled from Maven Central.",
    ),
    "config": (
        "guidedrag_graph.cli.setup_cmd",
        "config",
        "Print the effective settings (env over .env over defaults), secrets masked.",
    ),
    "migrate": (
        "guidedrag_graph.cli.setup_cmd",
        "migrate",
        "Apply pending migrations in order (idempotent), or show their state.",
    ),
    "load": (
        "guidedrag_graph.cli.load_cmd",
        "load",
        "Load a KB bundle (idempotent; rerun after a crash to finish the job).",
    ),
    "kb": ("guidedrag_graph.cli.kb_cmd", "kb", "Inspect the knowledge base."),
    "datasets": (
        "guidedrag_graph.cli.kb_cmd",
        "datasets",
        "Convert public benchmarks into KB bundles.",
    ),
    "retrieve": (
        "guidedrag_graph.cli.ask_cmd",
        "retrieve",
        "Rank chunks for QUESTION inside a selection (no LLM involved).",
    ),
    "ask": (
        "guidedrag_graph.cli.ask_cmd",
        "ask",
        "Answer QUESTION: select, rank in Neo4j, augment, generate (or show the prompt).",
    ),
    "demo": (
        "guidedrag_graph.cli.ask_cmd",
        "demo",
        "The default GuidedRAG next to base RAG on sample questions (no LLM needed).",
    ),
    "eval": (
        "guidedrag_graph.cli.eval_cmd",
        "eval_command",
        "Compare RAG, RAG*, GraphRAG and GraphRAG* (the paper's Table 2) on a bundle's questions.",
    ),
    "eval-report": (
        "guidedrag_graph.cli.eval_cmd",
        "eval_report",
        "Rebuild report.md, summary.json and the plots from a results.json (no database needed).",
    ),
    "eval-diff": (
        "guidedrag_graph.cli.eval_cmd",
        "eval_diff",
        "Compare two results.json files row by row, timing aside (exit 3 when rows differ).",
    ),
    "select": (
        "guidedrag_graph.cli.select_cmd",
        "select",
        "Size of every sub-expression (like EXPLAIN ANALYZE) and the selected chunk ids.",
    ),
    "cypher": (
        "guidedrag_graph.cli.select_cmd",
        "cypher",
        "Print the Cypher of a selection as a Neo4j Browser script (:param lines + query).",
    ),
    "mcp": (
        "guidedrag_graph.cli.mcp_cmd",
        "mcp_command",
        "Serve GuidedRAG's read-only tools to MCP clients (stdio or streamable HTTP).",
    ),
    "calibrate": (
        "guidedrag_graph.cli.calibrate_cmd",
        "calibrate_command",
        "Fit the tier boosts of steering=auto on BUNDLE_DIR's questions by cross-validation.",
    ),
}


class LazyGroup(click.Group):
    """A group whose commands are imported on first use (listed from ``_LAZY`` until then)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *_LAZY})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is not None or cmd_name not in _LAZY:
            return command
        return self.load(cmd_name)

    def load(self, name: str) -> click.Command:
        module, attribute, _ = _LAZY[name]
        command = getattr(importlib.import_module(module), attribute)
        assert isinstance(command, click.Command)
        self.add_command(command, name)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            loaded = self.commands.get(name)
            if loaded is not None:
                if loaded.hidden:
                    continue
                rows.append((name, loaded.get_short_help_str(formatter.width - 6 - len(name))))
            else:
                rows.append((name, _LAZY[name][2]))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="guidedrag-graph")
@schema_option
def cli() -> None:
    """GuidedRAG on Neo4j: steer retrieval with a selection over your knowledge graph."""


def _debug() -> bool:
    return os.environ.get("GUIDEDRAG_DEBUG", "").strip().lower() in ("1", "true", "yes", "on")


def _configure_logging(debug: bool) -> None:
    """The library's warnings as ``warning: ...`` lines; the driver's own logs only when debugging.

    Without a handler, Python prints any WARNING record as a bare line (its last-resort handler),
    so the neo4j driver's reconnect chatter would interleave with a command's output.
    """
    ours = logging.getLogger("guidedrag_graph")
    if not ours.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("warning: %(message)s"))
        ours.addHandler(handler)
        ours.propagate = False
    driver_log = logging.getLogger("neo4j")
    if debug:
        if not logging.getLogger().handlers:
            logging.basicConfig(level=logging.WARNING)
    elif not driver_log.handlers:
        driver_log.addHandler(logging.NullHandler())
        driver_log.propagate = False


def _warn_unknown_variables() -> None:
    """A misspelt GUIDEDRAG_* variable is one warning line, not silently without effect."""
    if not any(name.startswith("GUIDEDRAG_") for name in os.environ):
        return  # nothing to check: --help need not import the settings
    from guidedrag_graph.env_check import unknown_variables

    for warning in unknown_variables(os.environ):
        click.echo(f"warning: {warning}", err=True)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: every failure prints as one ``error: ...`` line (exit 2), never a traceback.

    ``GUIDEDRAG_DEBUG=1`` prints the traceback too. Errors that are not the user's (a bug)
    exit 1 with a line that says so.
    """
    from guidedrag_graph.cli import failure

    args = list(sys.argv[1:] if argv is None else argv)
    debug = _debug()
    _configure_logging(debug)
    _warn_unknown_variables()
    bad_argument = failure.undecodable_argument(args)
    if bad_argument is not None:
        click.echo(f"error: {bad_argument}", err=True)
        sys.exit(2)
    try:
        code = cli.main(args=args, prog_name="guidedrag", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.UsageError as exc:
        if debug:
            failure.print_traceback()
        click.echo(f"error: {failure.usage_message(exc)}", err=True)
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        click.echo(f"error: {failure.one_line(exc.format_message())}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("aborted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        # `guidedrag select ... | head`: the reader left; nothing to say, nowhere to say it.
        sys.stderr.close()
        sys.exit(1)
    except Exception as exc:
        if debug:
            failure.print_traceback()
        message, code = failure.explain(exc)
        click.echo(f"error: {message}", err=True)
        sys.exit(code)
    if isinstance(code, int) and code != 0:
        sys.exit(code)


def load_all() -> None:
    """Import every command (for tests and documentation generators)."""
    for name in _LAZY:
        cli.get_command(click.Context(cli), name)
