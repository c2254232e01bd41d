"""Every selection template in cypher/ runs as-is, as Neo4j Browser would run it.

Its ``:param`` lines become parameters (the value is evaluated by Neo4j, as Browser does), every
statement runs, and each returns exactly the columns its header documents. The graph is the
sample KB (``sample_db``); the example values in the files are names from it.
"""

from __future__ import annotations

import re
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
from guidedrag_graph.templates.queries import browser_script
from tests.template_scripts import as_written, browser_params, case_id, cases

OWN = ("select_", "set_", "resolve_", "relation_type", "suggest_entities")
FILES = sorted(p for p in cypher_dir().glob("*.cypher") if p.name.startswith(OWN))
CASES = cases([p.stem for p in FILES])  # every file in every variant it declares
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


def script_of(
    driver: Driver, name: str, variant: dict[str, str] | None = None
) -> tuple[dict[str, Any], list[str], list[str]]:
    """(params, statements, documented columns) of one template file in one variant, as
    Browser runs it (``templates.browser_script``)."""
    text = browser_script(name, variant)
    params: dict[str, Any] = {}
    body: list[str] = []
    for line in text.splitlines():
        match = _PARAM.match(line)
        if match:
            value = driver.execute_query(f"RETURN {match.group(2)} AS v").records[0]["v"]
            params[match.group(1)] = value
        else:
            body.append(line)
    statements = [s.strip() for s in re.split(r";\s*$", "\n".join(body), flags=re.M)]
    statements = [s for s in statements if re.sub(r"(?m)^\s*//.*$", "", s).strip()]
    columns = _COLUMNS.search(text)
    assert columns, f"{name}: no '// Columns: ...' line"
    return params, statements, [c.strip() for c in columns.group(1).split(",")]


def test_every_template_documents_itself() -> None:
    assert len(FILES) >= 20
    for path in FILES:
        text = path.read_text(encoding="utf-8")
        assert text.startswith("// "), f"{path.name} must open with a comment"
        assert ":param " in text, f"{path.name} must carry :param lines for Browser"
        assert "// @fragment " in text and "// @end" in text, path.name


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_template_runs_as_is(kb: Driver, case: tuple[str, dict[str, str]]) -> None:
    params, statements, columns = script_of(kb, *case)
    assert statements, case_id(case)
    for statement in statements:
        result = kb.execute_query(statement, params)
        assert result.keys == columns, (case_id(case), statement)


def test_templates_answer_on_the_sample_kb(kb: Driver) -> None:
    """The Browser defaults are not just well-formed: they select what the reference says."""
    graph = sample_graph()
    examples = [
        ("select_entity", {}, entity("euro")),
        ("select_hop", {"types": "listed"}, hop("euro", ["IS_CURRENCY_OF"])),
        ("select_hop", {"types": "any"}, khop("euro", 1)),
        ("select_near", {}, near("euro")),
        ("select_document", {}, document("wiki:Journal of Mathematical Physics")),
    ]
    for name, variant, expr in examples:
        params, statements, _ = script_of(kb, name, variant)
        record = kb.execute_query(statements[0], params).records[0]
        expected = evaluate(expr, graph)
        assert expected, name  # the example must select something
        assert record["size"] == len(expected), name
        assert set(record["chunk_ids"]) <= expected, name
    params, statements, _ = script_of(kb, "select_boost")
    rows = kb.execute_query(statements[0], params).records
    tiers = evaluate_tiers(boost((entity("euro"), 0.2), (near("euro"), 0.05)), graph)
    assert {r["id"]: (r["boost"], r["tier"]) for r in rows} == tiers
    assert {b for b, _ in tiers.values()} == {0.2, 0.05}
    params, statements, _ = script_of(kb, "set_op", {"op": "intersect"})
    assert kb.execute_query(statements[0], params).records[0]["result"] == ["c2"]


def test_boost_example_tiers_are_what_entity_and_near_select(kb: Driver) -> None:
    """retrieve_boost's Browser example is boost(entity(x), near(x)): its tier sizes are the
    reference's for any entity x, including one mentioned by a single chunk (a co-mention
    pattern through two distinct MENTIONS relationships found nothing for those)."""
    graph = sample_graph()
    mentioned: dict[str, int] = {}
    for _, entity_id in graph.mentions:
        mentioned[entity_id] = mentioned.get(entity_id, 0) + 1
    once = sorted(
        e
        for e, n in mentioned.items()
        if n == 1 and e in graph.entities and graph.resolve_entity(graph.entities[e].name) == [e]
    )[:8]
    assert once, "the sample KB has entities mentioned by one chunk"
    script = browser_script("retrieve_boost", {"rank_tiers": "cypher"})
    params, statements = browser_params(kb, script), as_written(script)
    for entity_id in ["euro", *once]:
        name = graph.entities[entity_id].name
        rows = kb.execute_query(
            statements[0], {**params, "sel_0_ids": [entity_id], "sel_2_ids": [entity_id]}
        ).records
        expected = [len(evaluate(entity(name), graph)), len(evaluate(near(name), graph))]
        assert rows and rows[0]["tier_sizes"] == expected, entity_id
