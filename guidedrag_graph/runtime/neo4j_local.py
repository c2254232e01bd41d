"""A real Neo4j Community server assembled from Maven Central jars and run as a child JVM.

The build machines have no Docker engine and no Neo4j package, but they reach Maven Central, and
``org.neo4j:neo4j``'s runtime closure is a whole Community server. We start the server JVM
directly (no ``bin/neo4j`` launcher exists in a Maven-assembled home) in its own process group,
so ``stop`` can end it and everything it spawned.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from guidedrag_graph.errors import Neo4jRuntimeError
from guidedrag_graph.runtime.apoc import APOC_PATTERNS, copy_into_plugins, install_apoc
from guidedrag_graph.runtime.plugins import plugin_conf_lines

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ServerLine:
    """What differs between Neo4j release lines: Java, entry point and JVM flags."""

    java_major: int
    entry_point: str
    extra_jvm_flags: tuple[str, ...]
    extra_conf: tuple[str, ...]


# Flags from the shipped conf/neo4j.conf, which a Maven-assembled home lacks. Without
# --add-opens=java.base/java.nio the vector index population stalls short of ONLINE.
_COMMON_JVM_FLAGS = (
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
    mvn = shutil.which("mvn")
    if mvn is None:
        raise Neo4jRuntimeError("Maven (mvn) is not on PATH: install it (apt-get install maven)")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".download-") as tmp:
        work = Path(tmp)
        (work / "pom.xml").write_text(_POM.format(version=version))
        log = target.parent / "install.log"
        cmd = [
            mvn,
            "-B",
            "dependency:copy-dependencies",
            "-DincludeScope=runtime",
            f"-DoutputDirectory={work / 'lib'}",
        ]
        if quiet:
            cmd.insert(2, "-q")
        with log.open("w") as fh:
            proc = subprocess.run(cmd, cwd=work, stdout=fh, stderr=subprocess.STDOUT, check=False)
        jars = list((work / "lib").glob("neo4j-*.jar")) if (work / "lib").is_dir() else []
        if proc.returncode != 0 or not jars:
            raise Neo4jRuntimeError(
                f"downloading Neo4j {version} from Maven Central failed (exit {proc.returncode}); "
                f"see {log}. Check the version exists on Maven Central and the network reaches it."
            )
        (work / "lib" / ".complete").write_text(version)
        if target.exists():
            shutil.rmtree(target)
        (work / "lib").rename(target)
    return target


# Neo4j Browser: the Community server serves /browser/ from any jar on its class path holding
# the `browser/` static files. Maven-assembled homes lack it (404), so we add the client jar.
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
    mvn = shutil.which("mvn")
    if mvn is None:
        raise Neo4jRuntimeError("Maven (mvn) is not on PATH: install it (apt-get install maven)")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".download-") as tmp:
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


def java_argfile_quote(arg: str) -> str:
    """One argument for a ``java @argfile``: double-quoted, backslash and quote escaped.

    The launcher reads quoted text literally but for backslash escapes, so any password,
    spaces and quotes included, arrives unchanged.
    """
    escaped = arg.replace("\\", "\\\\").replace('"', '\\"')
    escaped = escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return '"' + escaped + '"'


def port_in_use(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


@dataclass
class ServerStatus:
    running: bool
    pid: int | None
    version: str | None
    bolt_port: int | None
    http_port: int | None
    home: Path

    @property
    def uri(self) -> str | None:
        return f"bolt://127.0.0.1:{self.bolt_port}" if self.bolt_port else None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie still answers kill(0); it is not a running server.
    with contextlib.suppress(OSError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            return False
    return True


class LocalNeo4j:
    """One managed server: a home folder with conf/, data/, logs/ and a state file.

    Several can run side by side (tests, two versions) as long as homes and ports differ.
    """

    def __init__(
        self,
        home: Path,
        *,
        version: str,
        cache_dir: Path,
        bolt_port: int = 7687,
        http_port: int = 7474,
        password: str = "guidedrag-local",
        heap: str = "1g",
        pagecache: str = "512m",
        with_apoc: bool = False,
    ) -> None:
        self.home = home
        self.version = version
        self.cache_dir = cache_dir
        self.bolt_port = bolt_port
        self.http_port = http_port
        self.password = password
        self.heap = heap
        self.pagecache = pagecache
        self.line = server_line(version)
        # APOC Core in plugins/ (runtime/apoc.py): KG builders' writers call its procedures.
        self.with_apoc = with_apoc

    @property
    def state_file(self) -> Path:
        return self.home / "run" / "guidedrag-server.json"

    @property
    def log_file(self) -> Path:
        return self.home / "logs" / "console.log"

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.bolt_port}"

    def _read_state(self) -> dict[str, object] | None:
        try:
            data = json.loads(self.state_file.read_text())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def status(self) -> ServerStatus:
        state = self._read_state()
        if state is None:
            return ServerStatus(False, None, None, None, None, self.home)
        pid = int(str(state["pid"]))
        return ServerStatus(
            running=_pid_alive(pid),
            pid=pid,
            version=str(state.get("version")),
            bolt_port=int(str(state["bolt_port"])),
            http_port=int(str(state["http_port"])),
            home=self.home,
        )

    def _write_conf(self) -> Path:
        conf_dir = self.home / "conf"
        conf_dir.mkdir(parents=True, exist_ok=True)
        for sub in ("data", "logs", "run", "plugins", "import"):
            (self.home / sub).mkdir(parents=True, exist_ok=True)
        lines = [
            "# written by guidedrag neo4j start; edits are overwritten",
            "server.default_listen_address=127.0.0.1",
            f"server.bolt.listen_address=127.0.0.1:{self.bolt_port}",
            f"server.bolt.advertised_address=127.0.0.1:{self.bolt_port}",
            f"server.http.listen_address=127.0.0.1:{self.http_port}",
            f"server.http.advertised_address=127.0.0.1:{self.http_port}",
            "server.https.enabled=false",
            "dbms.security.auth_enabled=true",
            "dbms.usage_report.enabled=false",
            "client.allow_telemetry=false",
            f"server.memory.heap.initial_size={self.heap}",
            f"server.memory.heap.max_size={self.heap}",
            f"server.memory.pagecache.size={self.pagecache}",
            f"server.directories.data={self.home / 'data'}",
            f"server.directories.logs={self.home / 'logs'}",
            f"server.directories.run={self.home / 'run'}",
            f"server.directories.plugins={self.home / 'plugins'}",
            f"server.directories.import={self.home / 'import'}",
            "db.tx_log.rotation.retention_policy=2 files",
            *self.line.extra_conf,
            # extra jars in plugins/ (runtime/plugins.py) and APOC: one unrestricted line
            *plugin_conf_lines(self.home, APOC_PATTERNS if self.with_apoc else ()),
        ]
        conf = conf_dir / "neo4j.conf"
        conf.write_text("\n".join(lines) + "\n")
        return conf_dir

    def _set_initial_password(self, java: Path, lib: Path, conf_dir: Path) -> None:
        """Run ``neo4j-admin dbms set-initial-password`` on a home without a system database.

        The password travels in a Java argument file (``java @file``, mode 0600, deleted at
        once), never on the command line, where ``ps`` would show it to every local user. The
        tool itself (``AdminTool``) runs in that JVM: the ``Neo4jAdminCommand`` launcher would
        start a second JVM with the password back on its command line.
        """
        if (self.home / "data" / "databases" / "system").exists():
            return
        env = {**os.environ, "NEO4J_HOME": str(self.home), "NEO4J_CONF": str(conf_dir)}
        args = [
            "-cp",
            f"{conf_dir}/*:{lib}/*",
            *_COMMON_JVM_FLAGS,
            *self.line.extra_jvm_flags,
            f"-Dbasedir={self.home}",
            "org.neo4j.cli.AdminTool",
            "dbms",
            "set-initial-password",
            self.password,
        ]
        run_dir = self.home / "run"
        run_dir.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=".admin-args-", dir=run_dir)
        argfile = Path(name)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:  # mkstemp: mode 0600
                fh.write("\n".join(java_argfile_quote(arg) for arg in args) + "\n")
            proc = subprocess.run(
                [str(java), f"@{argfile}"],
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
        finally:
            argfile.unlink(missing_ok=True)
        if proc.returncode != 0:
            output = " ".join(f"{proc.stdout} {proc.stderr}".split())
            output = output.replace(" Run with '--verbose' for a more detailed error message.", "")
            raise Neo4jRuntimeError(
                f"setting the initial password failed: {output} (NEO4J_PASSWORD sets it)"
            )

    def import_full(self, arguments: list[str], heap: str = "1g") -> str:
        """``neo4j-admin database import full`` into this home's ``neo4j`` database (offline).

        Runs ``org.neo4j.cli.AdminTool`` in-process with the server's JVM flags: the
        ``Neo4jAdminCommand`` bootstrap forks a child JVM without ``--add-opens=java.nio`` and
        the importer then fails ("java.nio.DirectByteBuffer is not available"). The server must
        be stopped; ``--overwrite-destination`` replaces the database. Returns the tool's output.
        """
        if self.status().running:
            raise Neo4jRuntimeError(
                f"the server from {self.home} is running: stop it before an offline import"
            )
        java = find_java(self.line.java_major)
        lib = install(self.version, self.cache_dir)
        conf_dir = self._write_conf()
        self._set_initial_password(java, lib, conf_dir)
        env = {**os.environ, "NEO4J_HOME": str(self.home), "NEO4J_CONF": str(conf_dir)}
        proc = subprocess.run(
            [
                str(java),
                "-cp",
                f"{conf_dir}/*:{lib}/*",
                *_COMMON_JVM_FLAGS,
                *self.line.extra_jvm_flags,
                f"-Xmx{heap}",
                f"-Dbasedir={self.home}",
                "org.neo4j.cli.AdminTool",
                "database",
                "import",
                "full",
                *arguments,
                "--overwrite-destination",
                "neo4j",
            ],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        output = f"{proc.stdout}{proc.stderr}".strip()
        if proc.returncode != 0:
            tail = " | ".join(output.splitlines()[-6:])
            raise Neo4jRuntimeError(f"neo4j-admin database import failed: {tail}")
        return output

    def start(self, timeout_s: float = 180.0) -> float:
        """Start in the background and wait until Bolt answers; returns seconds taken."""
        began = time.monotonic()
        current = self.status()
        if current.running:
            raise Neo4jRuntimeError(
                f"a server from {self.home} is already running (pid {current.pid}, "
                f"bolt port {current.bolt_port}); stop it first with `guidedrag neo4j stop`"
            )
        for port in (self.bolt_port, self.http_port):
            if port_in_use(port):
                raise Neo4jRuntimeError(
                    f"port {port} on 127.0.0.1 is already in use: stop what holds it or choose "
                    f"other ports (--bolt-port/--http-port, GUIDEDRAG_NEO4J_BOLT_PORT)"
                )
        java = find_java(self.line.java_major)
        lib = install(self.version, self.cache_dir)
        if self.with_apoc:
            copy_into_plugins(
                install_apoc(self.version, self.cache_dir, lib), self.home / "plugins"
            )
        conf_dir = self._write_conf()
        add_browser(self.home / "plugins", self.cache_dir)  # http://127.0.0.1:<http>/browser/
        self._set_initial_password(java, lib, conf_dir)
        cmd = [
            str(java),
            "-cp",
            f"{self.home / 'plugins'}/*:{conf_dir}/*:{lib}/*",
            *_COMMON_JVM_FLAGS,
            *self.line.extra_jvm_flags,
            f"-Xms{self.heap}",
            f"-Xmx{self.heap}",
            self.line.entry_point,
            f"--home-dir={self.home}",
            f"--config-dir={conf_dir}",
            "--console-mode",
        ]
        env = {**os.environ, "NEO4J_HOME": str(self.home), "NEO4J_CONF": str(conf_dir)}
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        with self.log_file.open("ab") as log:
            proc = subprocess.Popen(
                cmd,
                cwd=self.home,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        self.state_file.write_text(
            json.dumps(
                {
                    "pid": proc.pid,
                    "version": self.version,
                    "bolt_port": self.bolt_port,
                    "http_port": self.http_port,
                    "started_at": time.time(),
                }
            )
        )
        deadline = began + timeout_s
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                self.state_file.unlink(missing_ok=True)
                raise Neo4jRuntimeError(
                    f"Neo4j {self.version} exited with code {proc.returncode} during start; "
                    f"see {self.log_file} and {self.home / 'logs' / 'neo4j.log'}"
                )
            if self._bolt_answers():
                return time.monotonic() - began
            time.sleep(0.5)
        self.stop()
        raise Neo4jRuntimeError(
            f"Neo4j {self.version} did not answer on {self.uri} within {timeout_s:.0f}s; "
            f"see {self.log_file}"
        )

    def _bolt_answers(self) -> bool:
        from neo4j.exceptions import AuthError, Neo4jError, ServiceUnavailable

        from guidedrag_graph import templates
        from guidedrag_graph.db import new_driver

        if not port_in_use(self.bolt_port):
            return False
        try:
            with new_driver(self.uri, ("neo4j", self.password), connection_timeout=2) as driver:
                driver.execute_query(templates.query("connection_check"))
            return True
        except AuthError as exc:
            raise Neo4jRuntimeError(
                f"Neo4j at {self.uri} rejected the configured password; the data in "
                f"{self.home / 'data'} was made with another one. Set NEO4J_PASSWORD to it "
                f"or remove that folder"
            ) from exc
        except (ServiceUnavailable, Neo4jError, OSError):
            return False

    def stop(self, timeout_s: float = 60.0) -> bool:
        """SIGTERM the server's process group, SIGKILL after ``timeout_s``; True if one ran."""
        state = self._read_state()
        if state is None:
            return False
        pid = int(str(state["pid"]))
        was_running = _pid_alive(pid)
        if was_running:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGTERM)
            deadline = time.monotonic() + timeout_s
            while _pid_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.2)
            if _pid_alive(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)
                while _pid_alive(pid):
                    time.sleep(0.1)
        # Reap it if we are its parent, so no zombie stays behind in long-lived test processes.
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)
        self.state_file.unlink(missing_ok=True)
        return was_running
