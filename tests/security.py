"""Helpers of the hostile suite (issue 22): what a batch of hostile inputs may not change.

``snapshot`` counts and checksums every node and relationship, ``schema_names`` lists every index
and constraint, and ``Listener`` is an HTTP server on 127.0.0.1 that counts the requests it gets
(a ``LOAD CSV`` that got out would reach it).
"""

from __future__ import annotations

import hashlib
import http.server
import re
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


# --- the identifier fuzz: >= 1,000 hostile names, every identifier source ---------------------

_CLOSERS = ["`", "``", "```", "\\u0060", "\\U00000060", "\\u005C\\u0060", "\\\\u0060",
            "\uff40", "`)", "`]->()", "`}", "\\u0060)", "\\u0060]->()", "\\u0060}",
            "\\u0060 ", "\\"]  # fmt: skip
_ODD = ["\x00", "\x01", "\x07", "\x1b", "\x7f", "\x85", "\n", "\r", "\t", "\u202e", "\u2066",
        "\u200f", "\ufeff", "\ud800", "\udfff", "'", '"', "//", "/*", "*/", ";", "$x", "{", "]",
        "\u0000\u0060", "\\x60", "\\n", "名前", "🙂", " "]  # fmt: skip


def _payloads(url: str) -> list[str]:
    return [
        "RETURN 'INJECTED' AS x //",
        "WITH 1 AS x CREATE (:Pwned) //",
        "MATCH (n) DETACH DELETE n //",
        f"LOAD CSV FROM '{url}leak' AS r RETURN r //",
        f"WITH 1 AS x LOAD CSV FROM '{url}' + 'x' AS r CREATE (:Pwned {{r: r}}) //",
        "SET n.pwned = true //",
        "UNION MATCH (n) RETURN n //",
        "CALL dbms.killTransactions([]) //",
        "} RETURN 1 //",
        ") RETURN 1 UNION RETURN 1 //",
        "MATCH",
        "RETURN",
        "CREATE",
        "null",
    ]


def hostile_names(n: int = 1_000, url: str = "http://127.0.0.1:9/", seed: int = 22) -> list[str]:
    """``n`` distinct hostile identifiers (deterministic for ``seed``): the hand-written ones,
    then closers (backticks, ``\\uXXXX`` backticks, fullwidth U+FF40, backslashes) joined to
    Cypher payloads (``LOAD CSV`` to ``url`` among them), with control characters, NUL, bidi
    overrides, lone surrogates, keywords and very long names mixed in."""
    import random

    rng = random.Random(seed)
    fixed = [*HOSTILE_NAMES, *_payloads(url), *_CLOSERS, *_ODD, *("`" * k for k in (2, 3, 7, 64))]
    fixed += ["A" * 100_000, "\\u0060" * 1_000, "x" * 65_535 + "\\u0060) RETURN 1 //"]
    names = list(dict.fromkeys(fixed))
    payloads = _payloads(url)
    seen = set(names)
    while len(names) < n:
        parts = [
            rng.choice(["Chunk", "Entity", "R", "id", "", "chunk_embedding", "MENTIONS"]),
            rng.choice(_ODD) if rng.random() < 0.4 else "",
            rng.choice(_CLOSERS),
            rng.choice(payloads),
            rng.choice(_ODD) if rng.random() < 0.3 else "",
        ]
        if rng.random() < 0.05:
            parts.append("B" * rng.choice([1_000, 10_000]))
        name = "".join(parts)
        if name and name not in seen:
            seen.add(name)
            names.append(name)
    return names[:n]


_QUOTED = re.compile(r"`(?:[^`]|``)*`")


def quoted_parts(text: str) -> list[str]:
    return _QUOTED.findall(text)


def shape(text: str) -> str:
    """``text`` with every backtick-quoted identifier replaced by `ID`: two renderings of one
    template that differ only in a name must have the same shape."""
    return _QUOTED.sub("`ID`", text)


def neo4j_reads(quoted: str) -> str:
    """What Neo4j's lexer makes of one backtick-quoted identifier: doubled backticks are one,
    and ``\\uXXXX`` is decoded (the breakout the quoting function must neutralise)."""
    inner = quoted[1:-1].replace("``", "`")
    return re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), inner)


def safely_quoted(quoted: str) -> bool:
    """One identifier that Neo4j reads as written: no backtick inside once ``\\uXXXX`` is
    decoded (other than doubled ones), and every backslash is the ``\\u005c`` escape."""
    inner = quoted[1:-1]
    if inner.replace("\\u005c", "").count("\\"):
        return False
    return "`" not in re.sub(r"\\u005c", "", inner).replace("``", "")
