"""The wheel carries the Cypher templates, migrations, sample KB and the rank plugin's sources,
and finds them installed.

Runs the installed copy in a subprocess from a folder outside the checkout, so the repository's
own ``cypher/`` and ``migrations/`` cannot stand in for the packaged ones.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent

PROBE = """
import guidedrag_graph, sys
from pathlib import Path
from guidedrag_graph.resources import cypher_dir, cypher_template, migrations_dir, plugin_dir
from guidedrag_graph.migrate import discover
from guidedrag_graph.kb import sample_kb_dir
assert Path(guidedrag_graph.__file__).is_relative_to(sys.argv[1]), guidedrag_graph.__file__
assert cypher_dir().is_relative_to(sys.argv[1]), cypher_dir()
assert "// @fragment" in cypher_template("select_entity")
sample = (sample_kb_dir() / "chunks.jsonl").is_file()
assert plugin_dir().is_relative_to(sys.argv[1]), plugin_dir()
java = sorted(p.name for p in (plugin_dir() / "src").rglob("*.java"))
assert (plugin_dir() / "pom.xml").is_file() and "Rank.java" in java, java
print(len(discover()), len(list(cypher_dir().glob("*.cypher"))), sample)
"""


@pytest.mark.slow
def test_installed_wheel_finds_its_templates_migrations_and_sample_kb(tmp_path: Path) -> None:
    wheels, target = tmp_path / "wheels", tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(wheels),
            str(REPO_ROOT),
        ],
        check=True,
        cwd=tmp_path,
    )
    wheel = next(wheels.glob("guidedrag_graph-*.whl"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
        cwd=tmp_path,
    )
    env = {**os.environ, "PYTHONPATH": str(target)}
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(target)],
        check=True,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    ).stdout.split()
    assert int(out[0]) == len(list((REPO_ROOT / "migrations").glob("V*.cypher")))
    assert int(out[1]) == len(list((REPO_ROOT / "cypher").glob("*.cypher")))
    assert out[2] == "True"
