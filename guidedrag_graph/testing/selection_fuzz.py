"""Hostile selections for the reliability suite: a hand-written corpus and a seeded
random generator, plus the one-attempt runner that classifies what happened.

Used by ``tests/test_selection_reliability.py`` (short form, with hypothesis) and
``scripts/reliability_fuzz.py`` (long form, with figures). An attempt goes the way user input
goes: DSL text through ``parse`` or JSON through ``from_json``, then ``Selector.prepare``
and ``Selector.chunk_ids`` against the real database. The only acceptable failures are the
library's own errors (``GuidedRAGError``); anything else is *unexplained*.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from dataclasses import dataclass
from typing import Any

from neo4j import Driver

from guidedrag_graph.errors import GuidedRAGError
from guidedrag_graph.selection import nodes as A
from guidedrag_graph.selection.json_form import from_json
from guidedrag_graph.selection.parser import parse
from guidedrag_graph.selection.selector import Selector
from guidedrag_graph.templates import queries as templates

# Strings an attacker or a broken client would send: quoting, identifiers, comments, Cypher
# keywords, control and invalid characters, sizes and numbers far out of range.
HOSTILE_STRINGS: tuple[str, ...] = (
    "'",
    '"',
    "`",
    "``",
    "\\",
    "\\'",
    "//",
    "/* x */",
    "\n",
    "\r\n//",
    "\x00",
    "\ud800",
    "\udcff",
    "\ufeff",
    "\u2028",
    "}) DETACH DELETE n //",
    "x` RETURN 1 AS id //",
    "') MATCH (n) DETACH DELETE n //",
    '" OR 1=1 --',
    "$sel_0_ids",
    "MATCH (n) SET n.x = 1",
    "CALL dbms.killQueries",
    "LOAD CSV FROM 'file:///etc/passwd' AS l RETURN l",
    ":param x => 1",
    "euro",
    "EURO ",
    "${jndi:ldap://x}",
    "%s%n",
    "Ω" * 3,
    "A" * 1_000,
    "A" * 1_001,
    "A" * 1_000_000,
)

HOSTILE_TEXTS: tuple[str, ...] = (
    "",
    " ",
    "(" * 200 + "all()" + ")" * 200,
    "(" * 100_000,
    ")" * 10,
    " | ".join(f"entity('e{i}')" for i in range(500)),
    " | ".join(f"entity('e{i}')" for i in range(200)),
    "khop('x', " + "9" * 5000 + ")",
    "khop('x', 99)",
    "near('euro', 5)",
    "khop('euro', 5)",
    "hop('euro', ['IS_CURRENCY_OF'], depth=5)",
    "entity('\ud800')",
    "entity('\udcff')",
    "category('" + "A" * 1_000_000 + "')",
    "chunks(" + ", ".join(f"'c{i}'" for i in range(2_000)) + ")",
    "entity([" + ", ".join(f"'e{i}'" for i in range(1_001)) + "])",
    "entity('a') ; MATCH (n) DETACH DELETE n",
    "entity('a') // DETACH DELETE",
    "entity('a') # comment\n| all()",
    "boost(entity('euro'): 1e999)",
    "boost(entity('euro'): -1)",
    "boost(boost(all(): 1): 1)",
    "boost(all(): 0.1) & all()",
    "boost(" + ", ".join(f"entity('e{i}'): 0.1" for i in range(300)) + ")",
    "date('2020-13-45', null)",
    "date(" + "9" * 7 + ", null)",
    "hop('euro', [" + ", ".join(["'R'"] * 5000) + "])",
    "entity(name=)",
    "entity(" * 1000,
    "all(" + "x" * 10_000,
    "\x00entity('a')",
    "entity('a')\x00",
    "enti\u0074y('a')",
    "ｅｎｔｉｔｙ('a')",
    "entity('a' 'b')",
    'entity("a\\")',
)

HOSTILE_JSON: tuple[Any, ...] = (
    {"op": "source", "name": True},
    {"op": "khop", "name": True},
    {"op": "type", "name": [{"a": 1}]},
    {"op": "chunks", "ids": [{}]},
    {"op": "khop", "name": "x", "k": 10**100},
    {"op": "khop", "name": "x", "k": 1.5},
    {"op": "hop", "name": "x", "types": "R", "direction": "sideways"},
    {"op": "boost", "tiers": [{"expr": {"op": "all"}, "weight": float("nan")}]},
    {"op": "boost", "tiers": []},
    {"op": "entity", "name": "\ud800"},
    {"op": "__class__"},
    {"op": None},
    [],
    "not json at all",
    '{"op": "union", "left": ' * 5000,
    "[" * 100_000,
    {"op": "entities", "names": ["euro"] * 5000},
)

OPS = ("|", "&", "-", "^")


@dataclass
class Outcome:
    """One attempt: what it was, whether it was refused (and why), how long it took."""

    kind: str  # "ok", "refused" (a library error), "unexplained"
    seconds: float
    error: str = ""
    selected: int = 0


def attempt(selector: Selector, item: str | A.Expr | dict[str, Any] | list[Any]) -> Outcome:
    """Run one hostile input the way user input runs; never raises."""
    started = time.perf_counter()
    try:
        if isinstance(item, str) and item.lstrip().startswith(("{", "[")):
            expr = from_json(item, selector.limits)
        elif isinstance(item, str):
            expr = parse(item, selector.limits)
        elif isinstance(item, (dict, list)):
            expr = from_json(item, selector.limits)  # type: ignore[arg-type]
        else:
            expr = item
        prep = selector.prepare(expr)
        ids = selector.chunk_ids(prep)
        return Outcome("ok", time.perf_counter() - started, selected=len(ids))
    except GuidedRAGError as exc:
        return Outcome("refused", time.perf_counter() - started, type(exc).__name__)
    except Exception as exc:
        message = f"{type(exc).__name__}: {str(exc)[:200]}"
        return Outcome("unexplained", time.perf_counter() - started, message)


def corpus() -> list[Any]:
    """Every hand-written hostile input: texts, JSON, and each string in every leaf."""
    items: list[Any] = [*HOSTILE_TEXTS, *HOSTILE_JSON]
    for s in HOSTILE_STRINGS:
        items += [
            A.Entity(s),
            A.Category(s),
            A.Document(s),
            A.Source(s),
            A.Type(s),
            A.Chunks((s,)),
            f"entity({A.quote(s)})",
            f"hop({A.quote(s)}, [{A.quote(s)}])",
            json.dumps({"op": "near", "name": s}, ensure_ascii=False, allow_nan=True)
            if "\ud800" not in s and "\udcff" not in s
            else {"op": "near", "name": s},
        ]
    return items


def random_item(rng: random.Random, names: list[str]) -> Any:
    """A random hostile input: a mutated or oversized expression, as text, JSON or an object."""
    roll = rng.random()
    if roll < 0.15:
        return rng.choice(corpus())
    expr = random_expr(rng, names, rng.randint(1, 12))
    if roll < 0.55:
        text = expr.to_text()
        for _ in range(rng.randint(0, 3)):  # byte-level mutations of valid text
            pos = rng.randint(0, len(text))
            text = (
                text[:pos] + rng.choice(["(", ")", "'", "|", "`", "\\", "9" * 30, ""]) + text[pos:]
            )
        return text
    if roll < 0.75:
        return expr.to_json()
    return expr


def random_string(rng: random.Random, names: list[str]) -> str:
    roll = rng.random()
    if roll < 0.4 and names:
        return rng.choice(names)
    if roll < 0.7:
        return rng.choice(HOSTILE_STRINGS[:-1])  # the megabyte string is in the corpus only
    size = rng.choice([1, 5, 40, 999, 1000, 1001, 5000])
    return "".join(
        chr(rng.choice([rng.randint(32, 126), rng.randint(0x80, 0x2FFF)])) for _ in range(size)
    )


def random_expr(rng: random.Random, names: list[str], leaves: int) -> A.Expr:
    def leaf() -> A.Expr:
        s = random_string(rng, names)
        depth = rng.choice([1, 1, 2, 3, 5])
        kind = rng.randrange(11)
        if kind == 0:
            return A.Entity(s)
        if kind == 1:
            return A.Entities(tuple(random_string(rng, names) for _ in range(rng.randint(1, 8))))
        if kind == 2:
            return A.Hop(s, (rng.choice(["IS_CURRENCY_OF", "PART_OF", "MENTIONS", s]),), depth)
        if kind == 3:
            return A.KHop(s, depth)
        if kind == 4:
            return A.Near(s, min(depth, 3))
        if kind == 5:
            return A.Category(s)
        if kind == 6:
            return A.Type(s)
        if kind == 7:
            return A.Document(s)
        if kind == 8:
            return A.Source(s)
        if kind == 9:
            return A.Chunks(tuple(random_string(rng, names) for _ in range(rng.randint(0, 5))))
        return A.All()

    expr = leaf()
    for _ in range(leaves - 1):
        other = leaf()
        op = rng.choice(OPS)
        expr = {"|": A.Union, "&": A.Intersect, "-": A.Difference, "^": A.SymDiff}[op](
            *((expr, other) if rng.random() < 0.7 else (other, expr))
        )
    if rng.random() < 0.1:
        expr = A.Boost((A.Tier(expr, rng.choice([0.0, 0.05, 0.2])), A.Tier(leaf(), 0.1)))
    return expr


def fingerprint(driver: Driver, database: str | None = None) -> tuple[int, int, str]:
    """(nodes, relationships, content checksum) of the whole database: test-sized graphs only."""
    digest = hashlib.sha256()
    nodes = rels = 0
    for name in ("reliability_nodes", "reliability_relationships"):
        records, _, _ = driver.execute_query(templates.query(name), database_=database)
        rows = sorted(repr(sorted(r.data().items())) for r in records)
        for row in rows:
            digest.update(row.encode("utf-8", "backslashreplace"))
        if name == "reliability_nodes":
            nodes = len(rows)
        else:
            rels = len(rows)
    return nodes, rels, digest.hexdigest()


def running_transactions(driver: Driver, database: str | None = None) -> list[dict[str, Any]]:
    """Transactions still running on the server (``SHOW TRANSACTIONS``), this one excluded."""
    records, _, _ = driver.execute_query(
        templates.query("reliability_transactions"), database_=database
    )
    return [r.data() for r in records]
