"""Extra jars in a managed server's ``plugins/`` folder, and the rank plugin built from ``plugin/``.

A generic mechanism any optional jar can reuse (the rank procedure here; APOC or Browser jars
elsewhere): ``add_plugin(home, jar, name=..., unrestricted=...)`` copies the jar to
``<home>/plugins/<name>`` (a stable file name, so a rebuilt jar replaces the old one instead of
loading beside it) and records it in ``<home>/plugins/guidedrag-plugins.json``.
``LocalNeo4j`` writes ``dbms.security.procedures.unrestricted`` from that manifest on every start,
so the conf follows the jars present. The allowlist is left at its default (everything loaded is
allowed), so adding one jar never hides another's procedures.

The rank plugin (``guidedrag.rank``) is a tiny Maven project; ``build_rank_plugin`` compiles it
from a temporary copy of its sources into the cache, keyed by a hash of those sources, so it is
built once per source change and reused offline afterwards (Maven's ``~/.m2`` keeps the API jars).
It builds with ``-DskipTests``: the plugin's in-process tests (``mvn test`` in ``plugin/``, run by
CI) need neo4j-harness, a whole server's jars, which installing the jar should not download.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from guidedrag_graph.errors import Neo4jRuntimeError
from guidedrag_graph.resources import plugin_dir
from guidedrag_graph.runtime.maven import mvn_executable

MANIFEST = "guidedrag-plugins.json"
RANK_PLUGIN_NAME = "guidedrag-rank.jar"
RANK_PROCEDURE = "guidedrag.rank"


@dataclass(frozen=True)
class PluginEntry:
    """One jar recorded in a home's plugin manifest."""

    name: str
    unrestricted: tuple[str, ...] = ()


def _manifest_path(home: Path) -> Path:
    return home / "plugins" / MANIFEST


def installed_plugins(home: Path) -> list[PluginEntry]:
    """The manifest's jars that are still present in ``<home>/plugins``."""
    try:
        data = json.loads(_manifest_path(home).read_text())
    except (OSError, ValueError):
        return []
    entries = []
    for name, spec in sorted(dict(data).items()):
        if (home / "plugins" / name).is_file():
            entries.append(PluginEntry(name, tuple(str(p) for p in spec.get("unrestricted", []))))
    return entries


def add_plugin(
    home: Path, jar: Path, *, name: str | None = None, unrestricted: tuple[str, ...] = ()
) -> Path:
    """Copy ``jar`` into ``<home>/plugins/<name>`` and record it; takes effect at the next start.

    ``unrestricted``: procedure name patterns (``apoc.*``) that need
    ``dbms.security.procedures.unrestricted`` (those reaching internal APIs); most need none.
    """
    if not jar.is_file():
        raise Neo4jRuntimeError(f"plugin jar {jar} does not exist; build it first")
    name = name or jar.name
    plugins = home / "plugins"
    plugins.mkdir(parents=True, exist_ok=True)
    target = plugins / name
    tmp = plugins / f".{name}.tmp"
    shutil.copyfile(jar, tmp)
    tmp.replace(target)
    manifest = _manifest_path(home)
    try:
        data = dict(json.loads(manifest.read_text()))
    except (OSError, ValueError):
        data = {}
    data[name] = {"unrestricted": list(unrestricted)}
    manifest.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    return target


def remove_plugin(home: Path, name: str) -> bool:
    """Delete ``<home>/plugins/<name>`` and its manifest entry; True if it was there."""
    target = home / "plugins" / name
    existed = target.is_file()
    target.unlink(missing_ok=True)
    manifest = _manifest_path(home)
    try:
        data = dict(json.loads(manifest.read_text()))
    except (OSError, ValueError):
        data = {}
    if data.pop(name, None) is not None:
        manifest.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    return existed


def plugin_conf_lines(home: Path, extra_unrestricted: tuple[str, ...] = ()) -> list[str]:
    """neo4j.conf lines the installed plugins need (none when no jar asks for any).

    ``extra_unrestricted``: patterns of jars placed by other means (APOC), so the one
    ``dbms.security.procedures.unrestricted`` line covers them all (a second line would clash).
    """
    patterns = sorted(
        {p for entry in installed_plugins(home) for p in entry.unrestricted}
        | set(extra_unrestricted)
    )
    if not patterns:
        return []
    return [f"dbms.security.procedures.unrestricted={','.join(patterns)}"]


def _sources_digest(source: Path) -> str:
    """A hash of what goes into the jar: the pom and ``src/main`` (classes and the
    ``META-INF/services`` entry that starts the cache's lifecycle), not the tests."""
    digest = hashlib.sha256()
    main = source / "src" / "main"
    files = [source / "pom.xml", *sorted(p for p in main.rglob("*") if p.is_file())]
    for path in files:
        digest.update(str(path.relative_to(source)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def build_rank_plugin(cache_dir: Path, *, source: Path | None = None, quiet: bool = True) -> Path:
    """The ``guidedrag.rank`` jar for the current sources: from the cache, or built with Maven.

    Built from a temporary copy (the sources may sit in a read-only site-packages) and moved
    into ``<cache_dir>/plugins/`` at the end, so an interrupted build never passes for a jar.
    """
    source = source or plugin_dir()
    if not (source / "pom.xml").is_file():
        raise Neo4jRuntimeError(f"the rank plugin's sources are missing ({source / 'pom.xml'})")
    target = cache_dir / "plugins" / f"guidedrag-rank-{_sources_digest(source)}.jar"
    if target.is_file():
        return target
    mvn = mvn_executable(
        "Maven (mvn) is not on PATH: install it (apt-get install maven) to build the rank "
        "plugin, or run without it (retrieval then ranks in pure Cypher)"
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".build-") as tmp:
        work = Path(tmp) / "plugin"
        shutil.copytree(source, work, ignore=shutil.ignore_patterns("target"))
        cmd = [mvn, "-B", "-f", str(work / "pom.xml"), "-DskipTests", "package"]
        if quiet:
            cmd.insert(2, "-q")
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        jars = sorted((work / "target").glob("guidedrag-rank-*.jar"))
        if proc.returncode != 0 or not jars:
            log = target.parent / "build.log"
            log.write_text(proc.stdout + proc.stderr)
            raise Neo4jRuntimeError(
                f"building the rank plugin with Maven failed (exit {proc.returncode}); see {log}"
            )
        shutil.copyfile(jars[0], target.parent / f".{target.name}.tmp")
        (target.parent / f".{target.name}.tmp").replace(target)
    return target


def install_rank_plugin(home: Path, cache_dir: Path, *, quiet: bool = True) -> Path:
    """Build (or reuse) the rank plugin and put it into ``<home>/plugins``."""
    return add_plugin(home, build_rank_plugin(cache_dir, quiet=quiet), name=RANK_PLUGIN_NAME)


def rank_plugin_jar(home: Path) -> Path | None:
    """The rank plugin in ``<home>/plugins``, or None when that server has none."""
    jar = home / "plugins" / RANK_PLUGIN_NAME
    return jar if jar.is_file() else None


def ensure_rank_plugin(home: Path, cache_dir: Path) -> tuple[Path | None, str | None]:
    """Put the current rank plugin into ``<home>/plugins`` (built once and cached, see
    ``build_rank_plugin``): ``(jar, None)``; or, when it cannot be built here, ``(jar already
    there or None, why)`` so the caller can say plainly what the server lacks and how to add it.
    """
    try:
        return install_rank_plugin(home, cache_dir), None
    except Neo4jRuntimeError as exc:
        return rank_plugin_jar(home), str(exc)
