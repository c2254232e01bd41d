"""The wheel carries the Cypher templates, migrations, sample KB and the rank plugin's sources,
and finds them installed.

Runs the installed copy in a subprocess from a folder outside the checkout, so the repository's
own ``cypher/`` and ``migrations/`` cannot stand in for the packaged ones.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv as venv_module
import zipfile
from pathlib import Path

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.kb import read_bundle, sample_kb_dir
from tests.conftest import wipe

REPO_ROOT = Path(__file__).resolve().parent.parent

PROBE = """
import guidedrag_graph, sys
from pathlib import Path
from guidedrag_graph.resources import cypher_dir, cypher_template, migrations_dir, plugin_dir
from guidedrag_graph.migration.run import discover
from guidedrag_graph.kb import sample_kb_dir
assert Path(guidedrag_graph.__file__).is_relative_to(sys.argv[1]), guidedrag_graph.__file__
assert cypher_dir().is_relative_to(sys.argv[1]), cypher_dir()
assert "// @fragment" in cypher_template("select_entity")
sample = (sample_kb_dir() / "chunks.jsonl").is_file()
assert plugin_dir().is_relative_to(sys.argv[1]), plugin_dir()
java = sorted(p.name for p in (plugin_dir() / "src").rglob("*.java"))
assert (plugin_dir() / "pom.xml").is_file() and "Rank.java" in java, java
services = plugin_dir() / "src/main/resources/META-INF/services"
assert (services / "org.neo4j.kernel.extension.ExtensionFactory").is_file()  # the cache lifecycle
print(len(discover()), len(list(cypher_dir().glob("*.cypher"))), sample)
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's wheel, built once for the tests of this module."""
    wheels = tmp_path_factory.mktemp("wheels")
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
        cwd=wheels,
    )
    return next(wheels.glob("guidedrag_graph-*.whl"))


@pytest.mark.slow
def test_installed_wheel_finds_its_templates_migrations_and_sample_kb(
    tmp_path: Path, wheel: Path
) -> None:
    target = tmp_path / "site"
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


@pytest.mark.slow
def test_readme_install_lines_work_in_a_fresh_venv(
    tmp_path: Path, wheel: Path, driver: Driver, settings: Settings
) -> None:
    """The README's "As a library" lines, for real: the wheel into a new venv whose
    dependencies come from PyPI, then ``guidedrag load --sample`` and ``guidedrag retrieve`` from
    that venv's own console script, outside the checkout, against the test server."""
    venv = tmp_path / "venv"
    with zipfile.ZipFile(wheel) as archive:
        metadata = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        extras = {
            line.split(":", 1)[1].strip()
            for line in archive.read(metadata).decode().splitlines()
            if line.startswith("Provides-Extra:")
        }
    assert {"langchain", "llamaindex", "mcp"} <= extras  # the README's pip install [extras]
    venv_module.create(venv, with_pip=True, clear=True)
    pip = [
        str(venv / "bin" / "python"),
        "-m",
        "pip",
        "install",
        "-q",
        "--disable-pip-version-check",
        # No byte-compiling of every installed module (most of the install's time; nothing the
        # test checks): what runs below is compiled on import, as in any venv.
        "--no-compile",
    ]
    # Without PYTHONPATH: the checkout (and the egg-info a wheel build leaves in it) would pass
    # for an installed guidedrag-graph, and pip would skip the wheel.
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run([*pip, str(wheel)], check=True, cwd=tmp_path, env=clean, timeout=1200)

    env = {
        "PATH": f"{venv / 'bin'}:{os.environ.get('PATH', '')}",
        "HOME": os.environ.get("HOME", str(tmp_path)),
        "NEO4J_URI": settings.neo4j_uri,
        "NEO4J_PASSWORD": settings.neo4j_password.get_secret_value(),
        "GUIDEDRAG_EMBEDDING_CACHE_DIR": str(tmp_path / "embeddings"),
    }
    where = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import guidedrag_graph; print(guidedrag_graph.__file__)",
        ],
        check=True,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    ).stdout.strip()
    assert Path(where).is_relative_to(venv), where  # the installed copy, not the checkout
    guidedrag = str(venv / "bin" / "guidedrag")
    wipe(driver)
    loaded = subprocess.run(
        [guidedrag, "load", "--sample", "--no-progress"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert loaded.returncode == 0, loaded.stderr
    assert "397 chunks" in loaded.stdout, loaded.stdout
    question = read_bundle(sample_kb_dir()).questions[0]
    assert question.semantics is not None
    found = subprocess.run(
        [guidedrag, "retrieve", question.question, "--json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert found.returncode == 0, found.stderr
    chunks = json.loads(found.stdout)["chunks"]
    assert len(chunks) == 5 and all(c["id"].startswith("mq-") for c in chunks)
