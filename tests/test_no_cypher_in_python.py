"""Each Cypher query has one home, a file under ``cypher/`` (issue 9): no Python module of the
package writes query text, except through the template renderer.

Checked on the string literals of every module (f-strings with their placeholders; docstrings
and comments are prose and are skipped): none may read like a Cypher clause.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "guidedrag_graph"

# What only Cypher looks like: a clause keyword followed by what that clause takes.
CYPHER = re.compile(
    r"""\b(?:OPTIONAL\s+)?MATCH\s*\(
      | \bMERGE\s*[(\[]
      | \bCREATE\s*\(
      | \bCREATE\s+(?:\w+\s+)?(?:INDEX|CONSTRAINT)\b
      | \bUNWIND\s+[\w$\[(]
      | \bRETURN\s+[\w$(\[`*'"{]
      | \bCALL\s+(?:db|dbms|apoc|gds|guidedrag)\.\w
      | \bCALL\s*\(\s*\w*\s*\)\s*\{
      | \bSHOW\s+(?:\w+\s+)?(?:INDEXES|CONSTRAINTS|PROCEDURES|FUNCTIONS|TRANSACTIONS|DATABASES)
        \s*(?:YIELD\b|$)""",
    re.X,
)
ALLOWED = {
    # the renderer itself (its docstrings show slot syntax)
    "templates.py": "the template renderer",
    "template_lexer.py": "the template renderer",
    # hostile *inputs* for the selection fuzzer, never run as queries
    "testing/selection_fuzz.py": "hostile selection expressions (data, not queries)",
}


def _docstrings(tree: ast.AST) -> set[int]:
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def string_literals(source: str) -> list[tuple[int, str]]:
    """(line, text) of every string literal that is not a docstring; f-strings with ``{x}``
    for each placeholder."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    inside_fstring = {
        id(value)
        for node in ast.walk(tree)
        if isinstance(node, ast.JoinedStr)
        for value in node.values
    }
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else "{x}" for v in node.values)
            out.append((node.lineno, str(text)))
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in skip
            and id(node) not in inside_fstring
        ):
            out.append((node.lineno, node.value))
    return out


def cypher_in(path: Path) -> list[str]:
    return [
        f"{path.relative_to(PACKAGE)}:{line}: {text.strip()[:80]!r}"
        for line, text in string_literals(path.read_text(encoding="utf-8"))
        if CYPHER.search(text)
    ]


def test_no_cypher_text_outside_cypher_templates() -> None:
    found: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE).as_posix() not in ALLOWED:
            found += cypher_in(path)
    assert not found, "Cypher belongs in cypher/*.cypher:\n" + "\n".join(found)


def test_the_allow_list_names_files_that_exist() -> None:
    for name in ALLOWED:
        assert (PACKAGE / name).is_file(), name


@pytest.mark.parametrize(
    "query",
    [
        "MATCH (c:`Chunk`) RETURN count(c)",
        "OPTIONAL MATCH (c)-[:X]->(e)",
        "UNWIND $rows AS row MERGE (m:X {version: row.v})",
        "CREATE (h)-[r:X]->(t)",
        "CREATE VECTOR INDEX x IF NOT EXISTS",
        "RETURN 1",
        "\nRETURN {x} AS id",
        "CALL db.awaitIndexes(600)",
        "CALL dbms.components() YIELD name",
        "CALL () { MATCH (n) RETURN n }",
        "SHOW INDEXES YIELD name, type",
        "SHOW VECTOR INDEXES YIELD name, options WHERE name = $name RETURN options",
        "SHOW PROCEDURES",
    ],
)
def test_the_pattern_catches_queries(query: str) -> None:
    assert CYPHER.search(query)


@pytest.mark.parametrize(
    "prose",
    [
        "database 'x' does not exist; SHOW DATABASES lists a, b: set NEO4J_DATABASE",
        "create the index first, then match the chunks and return them",
        "CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL)",
        "recreate the index WITH [c.id] (`guidedrag migrate`)",
        "the MATCH clause",
    ],
)
def test_the_pattern_leaves_prose_alone(prose: str) -> None:
    assert not CYPHER.search(prose)


def test_docstrings_are_prose_and_f_strings_are_read() -> None:
    source = '"""MATCH (n) RETURN n"""\ndef f(x):\n    """RETURN x"""\n    return f"MATCH ({x})"\n'
    assert [text for _, text in string_literals(source)] == ["MATCH ({x})"]
