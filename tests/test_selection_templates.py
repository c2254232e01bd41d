"""Every selection template in cypher/ runs as-is, as Neo4j Browser would run it.

Its ``:param`` lines become parameters (the value is evaluated by Neo4j, as Browser does), every
statement runs, and each returns exactly the columns its header documents. The graph is the
sample KB (``sample_db``); the example values in the files are names from it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from neo4j import Driver

from guidedrag_graph.kb import read_bundle, sample_kb_dir
from guidedrag_graph.resources import cypher_dir
from guidedrag_graph.selection import boost, document, entity, hop, khop, near
from guidedrag_graph.selection.evaluator import (
    DocumentRec,
    EntityRec,
    InMemoryGraph,
    evaluate,
    evaluate_tiers,
)

OWN = ("select_", "set_", "resolve_", "relation_type", "suggest_entities")
FILES = sorted(p for p in cypher_dir().glob("*.cypher") if p.name.startswith(OWN))
_PARAM = re.compile(r"^:param\s+(\w+)\s*=>\s*(.*?);?\s*$")
_COLUMNS = re.compile(r"^// Columns[^:]*:\s*(.*?)(?:\s*\(.*\))?\.\s*$", re.M)


@pytest.fixture
def kb(sample_db: Driver) -> Driver:
    """The sample KB, loaded once per session by the KB fixtures (read only here)."""
    return sample_db


def sample_graph() -> InMemoryGraph:
    """The sample KB as the reference evaluator's in-memory graph."""
    bundle = read_bundle(sample_kb_dir())
    g = InMemoryGraph()
    g.documents = {d.id: DocumentRec(d.id, d.title, d.source or "", None) for d in bundle.documents}
    g.chunks = {c.id: c.document_id for c in bundle.chunks}
    g.entities = {e.id: EntityRec(e.id, e.name, e.aliases, e.type) for e in bundle.entities}
    g.mentions = {(c, e) for c, ids in bundle.chunk_entity_ids.items() for e in ids}
    g.relations = {(r.head_id, r.type, r.tail_id) for r in bundle.relations}
    return g


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
def test_template_runs_as_is(kb: Driver, path: Path) -> None:
    params, statements, columns = browser_script(kb, path)
    assert statements, path.name
    for statement in statements:
        result = kb.execute_query(statement, params)
        assert result.keys == columns, (path.name, statement)


def test_templates_answer_on_the_sample_kb(kb: Driver) -> None:
    """The Browser defaults are not just well-formed: they select what the reference says."""
    graph = sample_graph()
    cases = {
        "select_entity": entity("euro"),
        "select_hop": hop("euro", ["IS_CURRENCY_OF"]),
        "select_khop": khop("euro", 1),
        "select_near": near("euro"),
        "select_document": document("wiki:Journal of Mathematical Physics"),
    }
    for name, expr in cases.items():
        params, statements, _ = browser_script(kb, cypher_dir() / f"{name}.cypher")
        record = kb.execute_query(statements[0], params).records[0]
        expected = evaluate(expr, graph)
        assert expected, name  # the example must select something
        assert record["size"] == len(expected), name
        assert set(record["chunk_ids"]) <= expected, name
    params, statements, _ = browser_script(kb, cypher_dir() / "select_boost.cypher")
    rows = kb.execute_query(statements[0], params).records
    tiers = evaluate_tiers(boost((entity("euro"), 0.2), (near("euro"), 0.05)), graph)
    assert {r["id"]: (r["boost"], r["tier"]) for r in rows} == tiers
    assert {b for b, _ in tiers.values()} == {0.2, 0.05}
    params, statements, _ = browser_script(kb, cypher_dir() / "set_intersect.cypher")
    assert kb.execute_query(statements[0], params).records[0]["result"] == ["c2"]
