"""APOC Core for the managed server: the jar and its runtime dependencies, from Maven Central.

KG builders write through APOC procedures (``apoc.merge.relationship``, ``apoc.merge.node``,
``apoc.create.addLabels``, ``apoc.meta.data``), which a Maven-assembled Community server lacks.
APOC Core is published on Maven Central as ``org.neo4j.procedure:apoc-core`` for the 5.x line
only (newest seen: 5.26.19; no 2026.x release exists there), so ``--with-apoc`` is offered for
5.26 servers and refused, with that reason, for CalVer ones.

The jars are cached beside the server jars (``<cache>/apoc/<apoc version>/``) and copied into a
server home's ``plugins/`` folder, which is already on the server's class path. Dependencies
that the server ships itself (commons-lang3, ...) are left out, so plugins/ never shadows the
server's own copy with an older one. ``apoc-core``'s POM does not name ``apoc-common`` (its
``apoc.result`` classes, without which the server refuses to start), so we ask for both.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from guidedrag_graph.errors import Neo4jRuntimeError
from guidedrag_graph.runtime.maven import (
    copy_dependencies,
    download_folder,
    move_into_place,
    mvn_executable,
)

# Server line -> the APOC Core release on Maven Central built for it (APOC follows the server's
# major.minor; patch releases of the server keep working with the newest APOC of their line).
APOC_FOR_LINE: dict[str, str] = {"5.26": "5.26.19"}

# The server setting that lets APOC's procedures run (they use internal APIs).
APOC_PATTERNS = ("apoc.*",)  # procedures that need dbms.security.procedures.unrestricted

_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>guidedrag.local</groupId><artifactId>neo4j-apoc</artifactId>
  <version>1</version><packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.neo4j.procedure</groupId><artifactId>apoc-core</artifactId>
      <version>{version}</version></dependency>
    <dependency><groupId>org.neo4j.procedure</groupId><artifactId>apoc-common</artifactId>
      <version>{version}</version></dependency>
  </dependencies>
</project>
"""

_JAR_NAME = re.compile(r"^(?P<artifact>.+?)-\d[\w.\-]*\.jar$")


def apoc_version_for(server_version: str) -> str:
    """The APOC Core version for a server version, or an error saying none exists."""
    line = ".".join(server_version.split(".")[:2])
    version = APOC_FOR_LINE.get(line)
    if version is None:
        supported = ", ".join(f"{k}.x" for k in APOC_FOR_LINE)
        raise Neo4jRuntimeError(
            f"no APOC Core release on Maven Central matches Neo4j {server_version} (APOC Core "
            f"is published there for {supported} only): run a 5.26 server for KG builders "
            f"that need APOC (GUIDEDRAG_NEO4J_VERSION=5.26.30 guidedrag neo4j start --with-apoc)"
        )
    return version


def _artifact(jar: Path) -> str:
    match = _JAR_NAME.match(jar.name)
    return match.group("artifact") if match else jar.stem


def install_apoc(server_version: str, cache_dir: Path, server_lib: Path) -> Path:
    """Download APOC Core for ``server_version`` into the cache; returns the folder of its jars.

    ``server_lib`` is the server's own jar folder: dependencies already there are not copied.
    As with the server jars, a temporary folder is renamed into place only when complete.
    """
    version = apoc_version_for(server_version)
    target = cache_dir / "apoc" / version
    if (target / ".complete").is_file():
        return target
    mvn = mvn_executable()
    with download_folder(target) as work:
        log = target.parent / f"install-{version}.log"
        returncode = copy_dependencies(mvn, _POM.format(version=version), work, log)
        lib = work / "lib"
        if returncode != 0 or not list(lib.glob("apoc-core-*.jar")):
            raise Neo4jRuntimeError(
                f"downloading APOC Core {version} from Maven Central failed (exit "
                f"{returncode}); see {log}"
            )
        shipped = {_artifact(jar) for jar in server_lib.glob("*.jar")}
        for jar in lib.glob("*.jar"):
            if _artifact(jar) in shipped:
                jar.unlink()
        move_into_place(lib, target, version)
    return target


def copy_into_plugins(apoc_dir: Path, plugins: Path) -> list[Path]:
    """Copy the APOC jars into a server's plugins/ folder (idempotent); returns the copies."""
    plugins.mkdir(parents=True, exist_ok=True)
    copied: list[Path] = []
    for jar in sorted(apoc_dir.glob("*.jar")):
        dest = plugins / jar.name
        if not dest.exists():
            shutil.copy2(jar, dest)
        copied.append(dest)
    return copied
