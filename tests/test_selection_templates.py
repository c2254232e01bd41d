"""Every selection template in cypher/ runs as-is, as Neo4j Browser would run it.

Its ``:param`` lines become parameters (the value is evaluated by Neo4j, as Browser does), every
statement runs, and each returns exactly the columns its header documents. The graph is the
hand-made Roman graph in the default schema (the sample KB fixture replaces it once it exists).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.migrate import migrate
from guidedrag_graph.resources import cypher_dir
from guidedrag_graph.schema import PRESETS
from guidedrag_graph.selection.examples import roman_graph
from tests.conftest import wipe

OWN = ("select_", "set_", "resolve_", "relation_type", "suggest_entities")
FILES = sorted(p for p in cypher_dir().glob("*.cypher") if p.name.startswith(OWN))
_PARAM = re.compile(r"^:param\s+(\w+)\s*=>\s*(.*?);?\s*$")
_COLUMNS = re.compile(r"^// Columns[^:]*:\s*(.*?)(?:\s*\(.*\))?\.\s*$", re.M)


@pytest.fixture(scope="module")
def roman_db(driver: Driver, settings: Settings) -> Iterator[Driver]:
    wipe(driver)
    migrate(driver, settings, PRESETS["guidedrag"])
    roman_graph().load_into(driver, PRESETS["guidedrag"])
    yield driver
    wipe(driver)


def browser_script(driver: Driver, path: Path) -> tuple[dict[str, Any], list[str], list[str]]:
    """(params, statements, documented columns) of one template file."""
    params: dict[str, Any] = {}
    body: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        match = _PARAM.match(line)
        if match:
            value = driver.execute_query(f"RETURN {match.group(2)} AS v").records[0]["v"]
            params[match.group(1)] = value
        else:
            body.append(line)
    statements = [s.strip() for s in re.split(r";\s*$", "\n".join(body), flags=re.M)]
    statements = [s for s in statements if re.sub(r"(?m)^\s*//.*$", "", s).strip()]
    columns = _COLUMNS.search(path.read_text(encoding="utf-8"))
    assert columns, f"{path.name}: no '// Columns: ...' line"
    return params, statements, [c.strip() for c in columns.group(1).split(",")]


def test_every_template_documents_itself() -> None:
    assert len(FILES) >= 20
    for path in FILES:
        text = path.read_text(encoding="utf-8")
        assert text.startswith("// "), f"{path.name} must open with a comment"
        assert ":param " in text, f"{path.name} must carry :param lines for Browser"
        assert "// @fragment " in text and "// @end" in text, path.name


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_template_runs_as_is(roman_db: Driver, path: Path) -> None:
    params, statements, columns = browser_script(roman_db, path)
    assert statements, path.name
    for statement in statements:
        result = roman_db.execute_query(statement, params)
        assert result.keys == columns, (path.name, statement)


def test_templates_answer_on_the_example_graph(roman_db: Driver) -> None:
    """The Browser defaults are not just well-formed: they select what they say."""
    params, statements, _ = browser_script(roman_db, cypher_dir() / "select_entity.cypher")
    record = roman_db.execute_query(statements[0], params).records[0]
    assert sorted(record["chunk_ids"]) == ["c1", "c5"]
    params, statements, _ = browser_script(roman_db, cypher_dir() / "select_hop.cypher")
    # rome --FOUGHT_IN-- nobody: Rome is linked by BORN_IN and CAPITAL_OF only
    assert roman_db.execute_query(statements[0], params).records[0]["size"] == 0
    params, statements, _ = browser_script(roman_db, cypher_dir() / "set_intersect.cypher")
    assert roman_db.execute_query(statements[0], params).records[0]["result"] == ["c2"]
