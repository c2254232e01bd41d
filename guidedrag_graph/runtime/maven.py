"""Maven, the one tool the managed runtime fetches jars with (the server, Browser, APOC) and
builds the rank plugin with: how it is found, how a dependency closure is copied, and how a
finished download is moved into the cache so an interrupted one never passes for complete."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from guidedrag_graph.errors import Neo4jRuntimeError

MAVEN_MISSING = "Maven (mvn) is not on PATH: install it (apt-get install maven)"


def mvn_executable(missing: str = MAVEN_MISSING) -> str:
    """The ``mvn`` on PATH; ``Neo4jRuntimeError(missing)`` without one."""
    mvn = shutil.which("mvn")
    if mvn is None:
        raise Neo4jRuntimeError(missing)
    return mvn


@contextmanager
def download_folder(target: Path) -> Iterator[Path]:
    """A temporary folder beside ``target`` (same file system, so the move is a rename)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".download-") as tmp:
        yield Path(tmp)


def copy_dependencies(mvn: str, pom: str, work: Path, log: Path, *, quiet: bool = True) -> int:
    """Copy the runtime closure of ``pom``'s dependencies into ``work/lib``; returns Maven's exit
    code (its output goes to ``log``)."""
    (work / "pom.xml").write_text(pom)
    cmd = [
        mvn,
        "-B",
        *(["-q"] if quiet else []),
        "dependency:copy-dependencies",
        "-DincludeScope=runtime",
        f"-DoutputDirectory={work / 'lib'}",
    ]
    with log.open("w") as fh:
        proc = subprocess.run(cmd, cwd=work, stdout=fh, stderr=subprocess.STDOUT, check=False)
    return proc.returncode


def move_into_place(folder: Path, target: Path, version: str) -> None:
    """Mark ``folder`` complete (``.complete`` holds ``version``) and make it ``target``."""
    (folder / ".complete").write_text(version)
    if target.exists():
        shutil.rmtree(target)
    folder.rename(target)
