"""``--schema FILE``: one option, wherever it is written (``guidedrag --schema F kb adopt`` or
``guidedrag kb adopt --schema F``), kept in the click context of this invocation.

It used to be copied into ``os.environ`` from a callback, which outlived the invocation: a second
``main()`` in the same process (a test, an MCP host, a notebook) silently kept the first one's
mapping. The context dies with the command; ``cli.common.load_settings`` reads it from there.
Only click and the standard library here: ``guidedrag --help`` imports this module.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

import click

_KEY = "guidedrag_graph.schema_file"
_F = TypeVar("_F", bound=Callable[..., Any])


def _remember(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value is not None:
        ctx.find_root().meta[_KEY] = os.path.abspath(value)


def schema_option(command: _F) -> _F:
    """Add ``--schema`` to ``command``; the value is read back by :func:`schema_file`."""
    return click.option(
        "--schema",
        type=click.Path(exists=True, dir_okay=False),
        default=None,
        expose_value=False,
        callback=_remember,
        help="schema mapping file (TOML/JSON) for this command; default GUIDEDRAG_SCHEMA_FILE, "
        "else the preset",
    )(command)


def schema_file() -> str | None:
    """The ``--schema`` given to the running command, if any (``None`` outside a command)."""
    ctx = click.get_current_context(silent=True)
    return None if ctx is None else ctx.find_root().meta.get(_KEY)
