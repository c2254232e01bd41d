"""A real Neo4j Community server assembled from Maven Central jars and run as a child JVM.

The build machines have no Docker engine and no Neo4j package, but they reach Maven Central, and
``org.neo4j:neo4j``'s runtime closure is a whole Community server. We start the server JVM
directly (no ``bin/neo4j`` launcher exists in a Maven-assembled home) in its own process group,
so ``stop`` can end it and everything it spawned.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from guidedrag_graph.errors import Neo4jRuntimeError
from guidedrag_graph.runtime.apoc import APOC_PATTERNS, copy_into_plugins, install_apoc
from guidedrag_graph.runtime.extra_conf import extra_conf_lines
from guidedrag_graph.runtime.jars import add_browser, install
from guidedrag_graph.runtime.plugins import plugin_conf_lines
from guidedrag_graph.runtime.server_env import (
    OUTBOUND_BLOCKLIST,
    ServerStatus,
    java_argfile_quote,
    pid_alive,
    port_in_use,
    server_env,
    server_transaction_timeout,
    transaction_memory_max,
    transactions_memory_total,
)
from guidedrag_graph.runtime.versions import COMMON_JVM_FLAGS, find_java, server_line


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
        query_timeout: float = 30.0,
        extra_conf: Sequence[str] = (),
    ) -> None:
        # Absolute: the server runs with its home as working directory, so a relative --home
        # would make it look for conf/ and data/ under home/home (a fresh empty store there).
        self.home = Path(home).absolute()
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
        # GUIDEDRAG_QUERY_TIMEOUT (its default when not given): db.transaction.timeout's basis.
        self.query_timeout = query_timeout
        # KEY=VALUE settings written after ours, checked (and refused) here, before anything
        # is written; what is ours whatever plugins/ holds later is in extra_conf.RESERVED_KEYS
        self.extra_conf = extra_conf_lines(extra_conf, self._own_conf())

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
            running=pid_alive(pid),
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
        lines = [*self._own_conf(), *self.extra_conf]  # extras checked in __init__
        conf = conf_dir / "neo4j.conf"
        conf.write_text("\n".join(lines) + "\n")
        return conf_dir

    def _own_conf(self) -> list[str]:
        """The neo4j.conf lines this module writes (before any ``extra_conf``)."""
        return [
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
            # Defence in depth (docs/security.md): no query of ours reads files or the network, so a
            # Cypher injection that got through could not send data out with LOAD CSV ...
            "dbms.security.allow_csv_import_from_file_urls=false",
            f"internal.dbms.cypher_ip_blocklist={OUTBOUND_BLOCKLIST}",
            # ... and one runaway transaction fails with a memory error instead of taking the
            # heap (and every other session) down with it.
            f"db.memory.transaction.max={transaction_memory_max(self.heap)}",
            f"dbms.memory.transaction.total.max={transactions_memory_total(self.heap)}",
            # The timeout is checked by a monitor thread, every 2 s by default: a query would
            # outlive GUIDEDRAG_QUERY_TIMEOUT by up to that much before it is even marked.
            "db.transaction.monitor.check.interval=200ms",
            # A transaction opened without a timeout of its own ends at our client's deadline.
            f"db.transaction.timeout={server_transaction_timeout(self.query_timeout)}",
            *self.line.extra_conf,
            # extra jars in plugins/ (runtime/plugins.py) and APOC: one unrestricted line
            *plugin_conf_lines(self.home, APOC_PATTERNS if self.with_apoc else ()),
        ]

    def _set_initial_password(self, java: Path, lib: Path, conf_dir: Path) -> None:
        """Run ``neo4j-admin dbms set-initial-password`` on a home without a system database.

        The password travels in a Java argument file (``java @file``, mode 0600, deleted at
        once), never on the command line, where ``ps`` would show it to every local user. The
        tool itself (``AdminTool``) runs in that JVM: the ``Neo4jAdminCommand`` launcher would
        start a second JVM with the password back on its command line.
        """
        if (self.home / "data" / "databases" / "system").exists():
            return
        env = server_env(self.home, conf_dir)
        args = [
            "-cp",
            f"{conf_dir}/*:{lib}/*",
            *COMMON_JVM_FLAGS,
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
        env = server_env(self.home, conf_dir)
        proc = subprocess.run(
            [
                str(java),
                "-cp",
                f"{conf_dir}/*:{lib}/*",
                *COMMON_JVM_FLAGS,
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
        self._refuse_if_busy()
        java = find_java(self.line.java_major)
        lib = install(self.version, self.cache_dir)
        if self.with_apoc:
            copy_into_plugins(
                install_apoc(self.version, self.cache_dir, lib), self.home / "plugins"
            )
        conf_dir = self._write_conf()
        add_browser(self.home / "plugins", self.cache_dir)  # http://127.0.0.1:<http>/browser/
        self._set_initial_password(java, lib, conf_dir)
        proc = self._launch(java, lib, conf_dir)
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

    def _refuse_if_busy(self) -> None:
        """A server of this home already running, or either port taken, stops the start."""
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

    def _launch(self, java: Path, lib: Path, conf_dir: Path) -> subprocess.Popen[bytes]:
        """The server JVM in its own session (``stop`` ends its group), and the state file."""
        cmd = [
            str(java),
            "-cp",
            f"{self.home / 'plugins'}/*:{conf_dir}/*:{lib}/*",
            *COMMON_JVM_FLAGS,
            *self.line.extra_jvm_flags,
            f"-Xms{self.heap}",
            f"-Xmx{self.heap}",
            self.line.entry_point,
            f"--home-dir={self.home}",
            f"--config-dir={conf_dir}",
            "--console-mode",
        ]
        env = server_env(self.home, conf_dir)
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
        return proc

    def _bolt_answers(self) -> bool:
        from neo4j.exceptions import AuthError, Neo4jError, ServiceUnavailable

        from guidedrag_graph.db.connection import new_driver
        from guidedrag_graph.templates import queries as templates

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
        was_running = pid_alive(pid)
        if was_running:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGTERM)
            deadline = time.monotonic() + timeout_s
            while pid_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.2)
            if pid_alive(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)
                while pid_alive(pid):
                    time.sleep(0.1)
        # Reap it if we are its parent, so no zombie stays behind in long-lived test processes.
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)
        self.state_file.unlink(missing_ok=True)
        return was_running
