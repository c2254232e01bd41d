"""Templates as Neo4j Browser runs them: every file in cypher/, every variant it declares.

``templates.browser_script`` gives a file's text for one choice of its variants (includes
expanded, slot comments kept); Browser evaluates each ``:param name => expression`` line, then
runs the rest statement by statement. The template tests run them the same way.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from neo4j import Driver

from guidedrag_graph.resources import cypher_dir
from guidedrag_graph.templates import queries as templates

NAMES = sorted(p.stem for p in cypher_dir().glob("*.cypher"))
_PARAM = re.compile(r"^:param\s+(\w+)\s*=>\s*(.+?);?\s*$", re.M)
_COLUMNS = re.compile(r"^// Columns[^:]*:")


def variants_of(name: str) -> list[dict[str, str]]:
    """Every choice of the file's variants (one empty choice for a file without)."""
    axes = templates.variants(name)
    return [dict(zip(axes, values, strict=True)) for values in itertools.product(*axes.values())]


def cases(names: list[str]) -> list[tuple[str, dict[str, str]]]:
    return [(name, variant) for name in names for variant in variants_of(name)]


def case_id(case: tuple[str, dict[str, str]]) -> str:
    name, variant = case
    return name + "".join(f"[{a}={v}]" for a, v in variant.items())


def browser_params(driver: Driver, text: str) -> dict[str, Any]:
    """The ``:param`` values, each evaluated by Neo4j as Browser does."""
    params: dict[str, Any] = {}
    for name, expression in _PARAM.findall(text):
        params[name] = driver.execute_query(f"RETURN {expression} AS v").records[0]["v"]
    return params


def as_written(text: str) -> list[str]:
    """The script's statements as Browser runs them, split at a ``;`` that ends a line: without
    the ``:param`` and full-line comment lines, with everything else (slot comments included)."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith((":param", "//"))]
    statements = [s.strip() for s in re.split(r";[ \t]*$", "\n".join(lines), flags=re.M)]
    return [s for s in statements if s]


def documented_columns(text: str) -> list[str] | None:
    """The ``// Columns: a, b (a note), c.`` sentence, which may run over several comment
    lines; parenthesised notes are dropped. ``None`` where the file documents no columns."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if _COLUMNS.match(ln)), None)
    if start is None:
        return None
    sentence, depth = "", 0
    rest = lines[start].split(":", 1)[1]
    for line in [rest, *(ln[2:] for ln in lines[start + 1 :] if ln.startswith("//"))]:
        for char in line + " ":
            if char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
            elif depth == 0 and char == "." and sentence.strip():
                columns = [c.strip() for c in sentence.split(",")]
                return [] if columns == ["none"] else columns
            elif depth == 0:
                sentence += char
    columns = [c.strip() for c in sentence.split(",") if c.strip()]
    return [] if columns == ["none"] else columns
