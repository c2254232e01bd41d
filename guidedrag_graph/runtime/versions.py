"""Which Neo4j versions the managed runtime runs, and what each release line needs (its Java,
entry point, JVM flags and conf lines)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from guidedrag_graph.errors import Neo4jRuntimeError


@dataclass(frozen=True)
class ServerLine:
    """What differs between Neo4j release lines: Java, entry point and JVM flags."""

    java_major: int
    entry_point: str
    extra_jvm_flags: tuple[str, ...]
    extra_conf: tuple[str, ...]


# Flags from the shipped conf/neo4j.conf, which a Maven-assembled home lacks. Without
# --add-opens=java.base/java.nio the vector index population stalls short of ONLINE.
COMMON_JVM_FLAGS = (
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields",
    "-XX:+DisableExplicitGC",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED",
    "-Dlog4j2.disable.jmx=true",
    "-Dfile.encoding=UTF-8",
)

LINE_5 = ServerLine(
    java_major=17,
    entry_point="org.neo4j.server.CommunityEntryPoint",
    extra_jvm_flags=(),
    extra_conf=(),
)
LINE_CALVER = ServerLine(
    java_major=25,
    entry_point="org.neo4j.server.Neo4jCommunity",
    extra_jvm_flags=(
        "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
        "--add-modules=jdk.incubator.vector",
        "-Dorg.neo4j.shaded.lucene9.vectorization.upperJavaFeatureVersion=25",
        "--sun-misc-unsafe-memory-access=allow",
    ),
    extra_conf=(
        "db.query.default_language=CYPHER_25",
        "server.fleet_discovery.enabled=false",
        "dbms.fleet_manager.enabled=false",
    ),
)

# Versions we have run the whole suite on. Others are allowed but warned about by the CLI.
PINNED_VERSIONS = ("2026.08.1", "5.26.30")


def server_line(version: str) -> ServerLine:
    """5.x runs on Java 17; the CalVer line (2025.xx, 2026.xx) on Java 25."""
    if re.fullmatch(r"5\.\d+\.\d+", version):
        return LINE_5
    if re.fullmatch(r"20\d\d\.\d\d\.\d+", version):
        if version == "2026.08.0":
            raise Neo4jRuntimeError(
                "Neo4j 2026.08.0 is withdrawn by its own release note; use 2026.08.1"
            )
        return LINE_CALVER
    raise Neo4jRuntimeError(
        f"unsupported Neo4j version {version!r}: use 5.26.x or a 2025/2026 CalVer version "
        f"such as {PINNED_VERSIONS[0]}"
    )


def _java_major(java_home: Path) -> int | None:
    release = java_home / "release"
    if not release.is_file():
        return None
    match = re.search(r'JAVA_VERSION="(\d+)', release.read_text(errors="replace"))
    return int(match.group(1)) if match else None


def find_java(major: int) -> Path:
    """The ``java`` binary of a JDK of exactly ``major``; JAVA_HOME first, then /usr/lib/jvm."""
    candidates: list[Path] = []
    for var in (f"GUIDEDRAG_JAVA{major}_HOME", "JAVA_HOME"):
        if os.environ.get(var):
            candidates.append(Path(os.environ[var]))
    jvm_root = Path("/usr/lib/jvm")
    if jvm_root.is_dir():
        candidates.extend(sorted(p for p in jvm_root.iterdir() if p.is_dir()))
    for home in candidates:
        if _java_major(home) == major and (home / "bin" / "java").is_file():
            return home / "bin" / "java"
    raise Neo4jRuntimeError(
        f"no Java {major} found (looked at $GUIDEDRAG_JAVA{major}_HOME, $JAVA_HOME and "
        f"/usr/lib/jvm/*): install a JDK {major} (e.g. temurin-{major}-jdk) or set "
        f"GUIDEDRAG_JAVA{major}_HOME"
    )
