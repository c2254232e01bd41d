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
    "templates/queries.py": "the template renderer",
    "templates/lexer.py": "the template renderer",
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


# --- every template is found by name ------------------------------------------------------------
REPO = PACKAGE.parent
TEMPLATE_NAMES = sorted(p.stem for p in (REPO / "cypher").glob("*.cypher"))
PYTHON = [
    p
    for folder in ("guidedrag_graph", "benchmarks", "scripts", "tests")
    for p in sorted((REPO / folder).rglob("*.py"))
]


def _literals(sources: dict[str, str]) -> tuple[set[str], list[str]]:
    """Every plain string constant in ``sources`` (path -> text), and each f-string that begins
    like a template name (``f"load_relations{mode}"``): the latter hide a template from grep."""
    plain: set[str] = set()
    built: list[str] = []
    for path, source in sources.items():
        tree = ast.parse(source)
        joined = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if id(node) not in joined:
                    plain.add(node.value)
            elif isinstance(node, ast.JoinedStr) and node.values:
                head = node.values[0]
                text = head.value if isinstance(head, ast.Constant) else ""
                if (
                    isinstance(text, str)
                    and len(text) > 3
                    and any(name.startswith(text) for name in TEMPLATE_NAMES)
                ):
                    built.append(f"{path}:{node.lineno}: f{text!r}...")
    return plain, built


def test_every_template_name_appears_literally_in_python() -> None:
    """``grep -rn '"retrieve_boost"'`` finds every caller: no template name is built. A file
    that templates include (``// @include chunk_rows rows``) is found by grep in cypher/."""
    code = {str(p.relative_to(REPO)): p.read_text(encoding="utf-8") for p in PYTHON}
    plain, built = _literals(code)
    included = {
        m.group(1)
        for p in (REPO / "cypher").glob("*.cypher")
        for m in re.finditer(r"^\s*// @include (\w+) ", p.read_text(encoding="utf-8"), re.M)
    }
    shipped = "".join(text for path, text in code.items() if not path.startswith("tests"))
    missing = [
        n
        for n in TEMPLATE_NAMES
        if n not in included and (n not in plain or f'"{n}"' not in shipped)
    ]
    assert not missing, f"templates no Python module names literally: {missing}"
    assert not built, f"template names built by f-strings: {built}"


def test_the_name_check_sees_built_names() -> None:
    sample = {"x.py": 'q = templates.query(f"load_relations{mode}_create", schema)\n'}
    plain, built = _literals(sample)
    assert built == ["x.py:1: f'load_relations'..."]
    assert "load_relations" not in plain
