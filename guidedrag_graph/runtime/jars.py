"""The managed server's jars from Maven Central: the Community server's closure, and Neo4j
Browser (the Community server serves ``/browser/`` from any jar on its class path holding the
``browser/`` static files; a Maven-assembled home lacks it)."""

from __future__ import annotations

import logging
import shutil
import subprocess
from pathlib import Path

from guidedrag_graph.errors import Neo4jRuntimeError
from guidedrag_graph.runtime.maven import (
    copy_dependencies,
    download_folder,
    move_into_place,
    mvn_executable,
)
from guidedrag_graph.runtime.versions import server_line

log = logging.getLogger(__name__)

_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>guidedrag.local</groupId><artifactId>neo4j-server</artifactId>
  <version>1</version><packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.neo4j</groupId><artifactId>neo4j</artifactId>
      <version>{version}</version></dependency>
  </dependencies>
</project>
"""


def lib_dir(cache_dir: Path, version: str) -> Path:
    return cache_dir / version / "lib"


def install(version: str, cache_dir: Path, *, quiet: bool = True) -> Path:
    """Download Neo4j ``version``'s jars with Maven into the cache, reusing a complete copy.

    The jars land in a temporary folder renamed into place at the end, so an interrupted
    download never passes for a complete one.
    """
    server_line(version)
    target = lib_dir(cache_dir, version)
    if (target / ".complete").is_file():
        return target
    mvn = mvn_executable()
    with download_folder(target) as work:
        log_file = target.parent / "install.log"
        returncode = copy_dependencies(
            mvn, _POM.format(version=version), work, log_file, quiet=quiet
        )
        jars = list((work / "lib").glob("neo4j-*.jar")) if (work / "lib").is_dir() else []
        if returncode != 0 or not jars:
            raise Neo4jRuntimeError(
                f"downloading Neo4j {version} from Maven Central failed (exit {returncode}); "
                f"see {log_file}. Check the version exists on Maven Central and the network "
                f"reaches it."
            )
        move_into_place(work / "lib", target, version)
    return target


# Neo4j Browser: Maven-assembled homes lack it (/browser/ is a 404), so we add the client jar.
BROWSER_ARTIFACT = "org.neo4j.client:neo4j-browser"
BROWSER_VERSION = "5.24.0"


def browser_jar(cache_dir: Path, version: str = BROWSER_VERSION) -> Path:
    return cache_dir / "neo4j-browser" / version / f"neo4j-browser-{version}.jar"


def install_browser(cache_dir: Path, version: str = BROWSER_VERSION) -> Path:
    """Download the Neo4j Browser jar from Maven Central into the cache (reused when present).

    Written to a temporary name and renamed, so an interrupted download is never taken for a jar.
    """
    target = browser_jar(cache_dir, version)
    if target.is_file():
        return target
    mvn = mvn_executable()
    with download_folder(target) as work:
        tmp = str(work)
        proc = subprocess.run(
            [
                mvn,
                "-B",
                "-q",
                "dependency:copy",
                f"-Dartifact={BROWSER_ARTIFACT}:{version}",
                f"-DoutputDirectory={tmp}",
            ],
            cwd=tmp,
            capture_output=True,
            text=True,
            check=False,
        )
        jar = Path(tmp) / target.name
        if proc.returncode != 0 or not jar.is_file():
            raise Neo4jRuntimeError(
                f"downloading Neo4j Browser {version} ({BROWSER_ARTIFACT}) from Maven Central "
                f"failed (exit {proc.returncode}): {(proc.stdout + proc.stderr).strip()[-300:]}"
            )
        jar.rename(target)
    return target


def add_browser(plugins_dir: Path, cache_dir: Path) -> Path | None:
    """Put the Browser jar into a server's ``plugins/`` (on its class path); None if unavailable.

    Best effort: a server without Browser still serves Bolt, so a failed download only warns.
    """
    try:
        jar = install_browser(cache_dir)
    except Neo4jRuntimeError as exc:
        log.warning("Neo4j Browser not added: %s", exc)
        return None
    plugins_dir.mkdir(parents=True, exist_ok=True)
    for old in plugins_dir.glob("neo4j-browser-*.jar"):
        if old.name != jar.name:
            old.unlink()
    placed = plugins_dir / jar.name
    if not placed.is_file() or placed.stat().st_size != jar.stat().st_size:
        shutil.copyfile(jar, placed)
    return placed
