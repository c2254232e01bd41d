"""Scopes (issue 35) on Neo4j 5.26 (the LTS line: no SEARCH clause, so auto's U is read with
db.index.vector.queryNodes, the ``u_search=index`` variant): the scope's templates run there as
written, and every steering ranks only inside the scope. The 5.26 server is CI's second one
(``apoc_settings`` in conftest), with the tiny KB loaded by the loader."""

from __future__ import annotations

from typing import Any

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import Embedder, embedder_for
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.selection import all_, document
from guidedrag_graph.semantics import Semantics
from guidedrag_graph.templates import queries as templates
from tests.conftest import load_tiny_kb
from tests.template_scripts import as_written, browser_params

pytestmark = pytest.mark.neo4j

# Charles Babbage is mentioned in two documents (d-ada, d-babbage): with the top chunk's document
# out of scope he is still mentioned in it, so stated calls rank (an entity only outside the
# scope is unknown there: docs/security.md, "What a scope hides").
QUESTION = "Where was Charles Babbage born?"


@pytest.fixture(scope="module")
def tiny_526(
    apoc_driver: Driver, apoc_settings: Settings, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Driver, Embedder]:
    embedder = embedder_for(apoc_settings)
    folder = tmp_path_factory.mktemp("tiny_kb_scope_526")
    return load_tiny_kb(apoc_driver, apoc_settings, folder, embedder), embedder


@pytest.mark.parametrize("name", ["scope", "scope_narrow"])
def test_the_scope_templates_run_on_526(tiny_526: tuple[Driver, Embedder], name: str) -> None:
    driver, _ = tiny_526
    script = templates.browser_script(name, {})
    doc = driver.execute_query("MATCH (d:Document) RETURN d.id AS id LIMIT 1").records[0]["id"]
    params = {**browser_params(driver, script), "scp_0_ids": [doc]}
    for statement in as_written(script):
        assert driver.execute_query(statement, params).records


CALLS: list[dict[str, Any]] = [
    {"semantics": Semantics(entities=("Charles Babbage",))},
    {},
    {"link": False},
    {"selection": "khop('Charles Babbage', 1) | all()", "steering": "hard"},
    {"selection": "entity('Charles Babbage')", "steering": "soft"},
]


@pytest.mark.parametrize("call", CALLS, ids=["auto", "linked", "no entity", "hard", "soft"])
def test_every_steering_ranks_inside_the_scope_on_526(
    tiny_526: tuple[Driver, Embedder], apoc_settings: Settings, call: dict[str, Any]
) -> None:
    driver, embedder = tiny_526
    with GuidedRAG(apoc_settings, driver=driver, embedder=embedder) as rag:
        top = rag.retrieve(QUESTION, k=3, **call).chunks[0]
        expr = all_() - document(top.document_id)
        allowed = set(rag.selector.chunk_ids(expr))
        ids = [c.id for c in rag.scoped(expr.to_text()).retrieve(QUESTION, k=3, **call).chunks]
    assert ids and set(ids) <= allowed and top.id not in ids
