"""Helpers of the hostile suite (issue 22): what a batch of hostile inputs may not change.

``snapshot`` counts and checksums every node and relationship, ``schema_names`` lists every index
and constraint, and ``Listener`` is an HTTP server on 127.0.0.1 that counts the requests it gets
(a ``LOAD CSV`` that got out would reach it).
"""

from __future__ import annotations

import hashlib
import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from neo4j import Driver

# Names that break out of naive backtick quoting, or try to (issue 22's reproducers and kin).
BREAKOUT = "Chunk\\u0060) RETURN 'INJECTED' AS x //"
HOSTILE_NAMES = [
    BREAKOUT,
    "Entity\\u0060) WITH 1 AS x CREATE (:Pwned) //",
    "R\\u0060]->() RETURN 'INJECTED' AS x //",
    "\\U00000060) RETURN 1 //",
    "a\\u005cu0060b",
    "x\\",
    "name\x00",
    "tab\tname",
    "line\nbreak //",
    "rtl\u202eemaN",
    "fullwidth\uff40) RETURN 1 //",  # U+FF40 FULLWIDTH GRAVE ACCENT: not a backtick to Neo4j
    "a`) RETURN 'INJECTED' AS x //",
    "\ud800",
    "}) DETACH DELETE n //",
]


@dataclass(frozen=True)
class Snapshot:
    nodes: int
    relationships: int
    checksum: str


def snapshot(driver: Driver) -> Snapshot:
    """Counts and a checksum of every node's labels and properties and every relationship."""
    digest = hashlib.sha256()
    nodes = driver.execute_query(
        "MATCH (n) RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS props "
        "ORDER BY id"
    ).records
    for record in nodes:
        digest.update(repr((record["id"], sorted(record["labels"]), record["props"])).encode())
    rels = driver.execute_query(
        "MATCH (a)-[r]->(b) RETURN elementId(r) AS id, type(r) AS type, elementId(a) AS a, "
        "elementId(b) AS b, properties(r) AS props ORDER BY id"
    ).records
    for record in rels:
        digest.update(repr(tuple(record.values())).encode())
    return Snapshot(len(nodes), len(rels), digest.hexdigest())


def schema_names(driver: Driver) -> set[str]:
    """Every index and constraint, with its type, so a swap of one for another shows."""
    indexes = driver.execute_query("SHOW INDEXES YIELD name, type RETURN name, type").records
    constraints = driver.execute_query(
        "SHOW CONSTRAINTS YIELD name, type RETURN name, type"
    ).records
    return {f"index {r['name']} {r['type']}" for r in indexes} | {
        f"constraint {r['name']} {r['type']}" for r in constraints
    }


@dataclass
class Listener:
    """An HTTP server on 127.0.0.1 that counts every request (the outbound-request probe)."""

    port: int = 0
    requests: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"


@contextmanager
def listener() -> Iterator[Listener]:
    seen = Listener()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.requests.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"a,b\n")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    seen.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        server.shutdown()
        server.server_close()
