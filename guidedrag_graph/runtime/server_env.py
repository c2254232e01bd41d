"""What the managed server runs with, apart from the server itself: its defence-in-depth limits
(no outbound Cypher requests, a per-transaction memory cap), an environment without our
secrets, the JVM argument-file quoting, and the process checks ``status`` and ``start`` use.

Kept apart from ``neo4j_local`` (the server's lifecycle) so these rules can be read, and tested,
without starting a JVM.
"""

from __future__ import annotations

import contextlib
import math
import os
import socket
from dataclasses import dataclass
from pathlib import Path

from guidedrag_graph.db.deadline import GRACE_S
from guidedrag_graph.errors import Neo4jRuntimeError

# Every IPv4 and IPv6 address: LOAD CSV (the only outbound request Cypher can make) goes nowhere.
OUTBOUND_BLOCKLIST = "0.0.0.0/0,::/0"

# The share of the heap one transaction may hold (db.memory.transaction.max).
TRANSACTION_HEAP_SHARE = 4

# Environment variables the server JVM never inherits: it has its password in its auth store,
# and a process environment is readable wherever /proc/<pid>/environ is.
_SECRET_MARKERS = ("PASSWORD", "SECRET", "API_KEY", "TOKEN", "CREDENTIAL")


# The share of the heap all transactions together may hold (dbms.memory.transaction.total.max).
TRANSACTIONS_HEAP_SHARE = 2


def transactions_memory_total(heap: str) -> str:
    """``dbms.memory.transaction.total.max`` for a heap setting (``"1g"`` -> ``"512m"``): half
    the heap. Defence in depth: the per-transaction cap alone lets 16 heavy queries claim four
    heaps' worth. Once, with abandoned queries of earlier runs still on the server, an
    exhaustion run spent the heap in back-to-back 1 s GC pauses (RETURN 1 from another session
    p50 1 s); a control on a fresh server without this cap did not reproduce it, so it is a
    guard, not the fix of a measured failure. Over it, the query that would overdraw the pool
    fails with a memory error (``QueryMemoryError``) and the server keeps room to answer."""
    return transaction_memory_max(heap, share=TRANSACTIONS_HEAP_SHARE)


def transaction_memory_max(heap: str, *, share: int = TRANSACTION_HEAP_SHARE) -> str:
    """``db.memory.transaction.max`` for a heap setting (``"1g"`` -> ``"256m"``): a quarter of
    the heap, so a few runaway transactions at once still leave the server room to answer."""
    units = {"k": 1, "m": 1024, "g": 1024**2, "t": 1024**3}
    text = heap.strip().lower().removesuffix("b")
    unit = text[-1:] if text[-1:] in units else ""
    try:
        amount = float(text[:-1] if unit else text)
    except ValueError:
        raise Neo4jRuntimeError(
            f"heap size {heap!r} is not a size like 1g or 512m; set GUIDEDRAG_NEO4J_HEAP"
        ) from None
    kib = amount * units[unit] if unit else amount / 1024
    return f"{max(int(kib / share / 1024), 16)}m"


def server_transaction_timeout(query_timeout: float) -> str:
    """``db.transaction.timeout`` for ``GUIDEDRAG_QUERY_TIMEOUT``: the client's deadline (the
    timeout plus ``read_deadline.GRACE_S``), in whole milliseconds. A backstop: every query of
    ours carries its own timeout (which overrides this default), but a transaction opened
    without one (Browser, cypher-shell, a tool of the user's) would otherwise run for ever on
    the server that answers our reads; with it the server itself ends anything still running
    when our client would have given up on it."""
    return f"{math.ceil((query_timeout + GRACE_S) * 1000)}ms"


def server_env(home: Path, conf_dir: Path) -> dict[str, str]:
    """The environment of the server JVM and the admin tool: ours without any secret."""
    env = {k: v for k, v in os.environ.items() if not any(m in k.upper() for m in _SECRET_MARKERS)}
    return {**env, "NEO4J_HOME": str(home), "NEO4J_CONF": str(conf_dir)}


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


def pid_alive(pid: int) -> bool:
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
