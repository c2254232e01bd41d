"""Run the real ``guidedrag`` command in a subprocess, with a clean environment.

The CLI's promise (one ``error:`` line, never a traceback) is about what a user sees, so these
tests run the installed entry point's code path (``python -m guidedrag_graph.cli``) in a fresh
process, in an empty folder (no stray ``.env``), with only the variables a test sets.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

_OURS = ("NEO4J_", "GUIDEDRAG_", "OPENAI_")


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_OURS)}
    # Keep the shared caches (jars, embeddings) the session may point elsewhere.
    for keep in ("GUIDEDRAG_NEO4J_CACHE_DIR", "GUIDEDRAG_EMBEDDING_CACHE_DIR"):
        if keep in os.environ:
            env[keep] = os.environ[keep]
    env.update(extra or {})
    return env


def run_cli(
    args: Sequence[str | bytes],
    env: Mapping[str, str] | None = None,
    *,
    cwd: Path,
    timeout: float = 300,
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """``guidedrag ARGS`` in ``cwd``; bytes arguments reach argv as given (not UTF-8 ones too)."""
    cmd: list[str | bytes] = [sys.executable, "-m", "guidedrag_graph.cli", *args]
    return subprocess.run(
        cmd,
        env=clean_env(env),
        cwd=cwd,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=timeout,
        check=False,
        input=input,
    )


def error_line(result: subprocess.CompletedProcess[str]) -> str:
    """The single ``error:`` line of a failed run; fails the test if there is more (or less)."""
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1, result.stderr
    others = [line for line in lines if not line.startswith(("error: ", "warning: "))]
    assert not others, result.stderr
    assert result.returncode == 2, (result.returncode, result.stderr)
    return errors[0]
