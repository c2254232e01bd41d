"""``--schema`` is one option, and it lives only as long as the command it was given to.

It used to be written into ``os.environ`` by the group's callback, so a second ``main()`` in the
same process (a test, a notebook, an MCP host) silently kept the first invocation's mapping, and
``kb adopt`` had a second ``--schema`` of its own. No Neo4j needed: ``config`` reports the
mapping file the settings would use.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from guidedrag_graph.cli import main

MAPPING = '[schema]\npreset = "guidedrag"\n'


def _config(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    try:
        main([*args, "config", "--json"])
    except SystemExit as done:  # main exits only on failure, or with 0
        assert done.code in (0, None), capsys.readouterr().err
    return dict(json.loads(capsys.readouterr().out))


def test_a_schema_given_once_does_not_outlive_its_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GUIDEDRAG_SCHEMA_FILE", raising=False)
    mapping = tmp_path / "mapping.toml"
    mapping.write_text(MAPPING)
    first = _config(capsys, "--schema", str(mapping))
    assert first["GUIDEDRAG_SCHEMA_FILE"] == str(mapping)
    assert "GUIDEDRAG_SCHEMA_FILE" not in os.environ
    second = _config(capsys)
    assert second["GUIDEDRAG_SCHEMA_FILE"] in (None, "", "None")


def test_the_option_wins_over_the_variable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from_env, given = tmp_path / "env.toml", tmp_path / "given.toml"
    for path in (from_env, given):
        path.write_text(MAPPING)
    monkeypatch.setenv("GUIDEDRAG_SCHEMA_FILE", str(from_env))
    assert _config(capsys, "--schema", str(given))["GUIDEDRAG_SCHEMA_FILE"] == str(given)
    assert _config(capsys)["GUIDEDRAG_SCHEMA_FILE"] == str(from_env)


def test_kb_adopt_takes_the_same_option() -> None:
    from guidedrag_graph.cli import cli

    kb = cli.get_command(None, "kb")  # type: ignore[arg-type]
    adopt = kb.get_command(None, "adopt")  # type: ignore[union-attr, arg-type]
    here = next(p for p in adopt.params if p.name == "schema")  # type: ignore[union-attr]
    top = next(p for p in cli.params if p.name == "schema")
    assert (here.callback, here.expose_value, here.help) == (top.callback, False, top.help)
