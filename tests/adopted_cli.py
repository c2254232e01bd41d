"""An adopted builder graph as a new user meets it: the real ``guidedrag`` CLI in a fresh process
with only the connection set (no preset, no index name), for tests/test_builders_*.py.

After ``kb adopt`` every command reads what adoption recorded, so ``retrieve``, ``ask`` and
``ask --tagger embedding`` (after ``kb embed-entities``) must work with nothing else set.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from guidedrag_graph.config import Settings
from tests.cli_run import run_cli


def connection_only(settings: Settings) -> dict[str, str]:
    """The variables a user sets for any graph: where it is and the password. Nothing else."""
    return {
        "NEO4J_URI": settings.neo4j_uri,
        "NEO4J_PASSWORD": settings.neo4j_password.get_secret_value(),
    }


def cli_json(args: list[str], settings: Settings, cwd: Path) -> Any:
    """Run ``guidedrag ARGS --json`` and return its JSON (lines before the object are notes)."""
    result: subprocess.CompletedProcess[str] = run_cli(
        [*args, "--json"], connection_only(settings), cwd=cwd
    )
    assert result.returncode == 0, result.stderr
    assert "migrate" not in result.stderr, result.stderr
    out = result.stdout
    return json.loads(out[out.index("{") :])


def check_adopted_graph_needs_no_variable(
    settings: Settings,
    tmp_path: Path,
    *,
    preset: str,
    question: str,
    entity: str,
    title: str,
) -> dict[str, Any]:
    """inspect names ``preset``; adopt with it; then retrieve, ask and the embedding tagger work
    with the connection variables alone. Returns what each step printed, for more checks."""
    seen: dict[str, Any] = {}
    seen["inspect"] = inspect = cli_json(["kb", "inspect"], settings, tmp_path)
    assert inspect["fitting_preset"] == preset
    seen["adopt"] = cli_json(["kb", "adopt", "--preset", preset], settings, tmp_path)
    assert seen["adopt"]["vector_index_name"]

    seen["retrieve"] = bare = cli_json(["retrieve", question], settings, tmp_path)
    assert bare["chunks"] and not bare["abstained"]
    seen["retrieve_entity"] = named = cli_json(
        ["retrieve", question, "--entity", entity], settings, tmp_path
    )
    assert not named["abstained"] and named["chunks"]
    assert named["chunks"][0]["document_title"] == title

    seen["ask"] = answer = cli_json(["ask", question, "--entity", entity], settings, tmp_path)
    assert answer["abstained"] is False and answer["prompt"]
    assert answer["retrieval"]["chunks"][0]["document_title"] == title

    seen["embed"] = embedded = cli_json(["kb", "embed-entities"], settings, tmp_path)
    assert embedded["vector_index_name"]
    result = run_cli(
        ["ask", question, "--auto-semantics", "--tagger", "embedding", "--json"],
        connection_only(settings),
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    tagged_line = next(
        line for line in result.stdout.splitlines() if line.startswith("auto-semantics")
    )
    assert "(embedding tagger)" in tagged_line and entity in tagged_line, tagged_line
    seen["tagged"] = tagged = json.loads(result.stdout[result.stdout.index("{") :])
    assert tagged["abstained"] is False and tagged["retrieval"]["chunks"]
    return seen
