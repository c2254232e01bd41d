"""The 5.26 variants on Neo4j 5.26: CI's second server (5.26 LTS with APOC, which the KG
builders' tests start) gets the tiny KB through the loader, every variant a 5.26 server can run
(no ``CYPHER 25``/``SEARCH``: ``u_search=index``, the Cypher rankers, the loader's relation
writes; the plugin's only where it is installed) runs there as its Browser script, and the
retriever, choosing its variants from that server's facts, ranks as on the main server.
"""

from __future__ import annotations

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.context import RANK_PROCEDURE
from guidedrag_graph.db.connection import procedure_available, server_info
from guidedrag_graph.embeddings import Embedder, embedder_for
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.semantics import Semantics
from guidedrag_graph.templates import queries as templates
from tests.conftest import load_tiny_kb
from tests.template_scripts import (
    NAMES,
    as_written,
    browser_params,
    case_id,
    cases,
    documented_columns,
)

pytestmark = pytest.mark.neo4j

QUESTION = "Who was the father of Ada Lovelace?"
# Every variant of the files that have variants, but those written for 2026 only.
CASES = [
    case
    for case in cases([n for n in NAMES if templates.variants(n)])
    if "CYPHER 25" not in templates.browser_script(*case)
]


@pytest.fixture(scope="module")
def embedder_526(apoc_settings: Settings) -> Embedder:
    return embedder_for(apoc_settings)


@pytest.fixture(scope="module")
def kb_526(
    apoc_driver: Driver,
    apoc_settings: Settings,
    embedder_526: Embedder,
    tmp_path_factory: pytest.TempPathFactory,
) -> Driver:
    """The tiny KB on the 5.26 server, loaded by the loader (load_relations runs there)."""
    folder = tmp_path_factory.mktemp("tiny_kb_526")
    return load_tiny_kb(apoc_driver, apoc_settings, folder, embedder_526)


def test_the_526_variants_are_there() -> None:
    assert ("retrieve_search", {"u_search": "index"}) in CASES
    assert (
        "retrieve_boost",
        {"u_search": "index", "rank_tiers": "cypher", "scope": "none"},
    ) in CASES
    assert ("load_relations", {"mode": "types", "write": "create"}) in CASES
    assert all(v.get("u_search") != "search" for _, v in CASES)


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_variant_runs_as_written_on_526(case: tuple[str, dict[str, str]], kb_526: Driver) -> None:
    name, variant = case
    script = templates.browser_script(name, variant)
    if "guidedrag." in script and not procedure_available(kb_526, RANK_PROCEDURE):
        pytest.skip("the rank plugin is not installed on this server")
    params = browser_params(kb_526, script)
    with kb_526.session() as session, session.begin_transaction() as tx:
        for statement in as_written(script):
            result = tx.run(statement, params)
            keys, records = list(result.keys()), list(result)
            if documented_columns(script) is not None:
                assert keys == documented_columns(script), case_id(case)
            if name == "retrieve_search":
                assert len(records) == params["fetch_k"]  # the tiny KB has more chunks
        tx.rollback()


def test_the_retriever_ranks_on_526_as_on_the_main_server(
    kb_526: Driver,
    apoc_settings: Settings,
    embedder_526: Embedder,
    tiny_kb: Driver,
    settings: Settings,
    embedder: Embedder,
) -> None:
    stated = Semantics(entities=("Ada Lovelace",))
    with GuidedRAG(apoc_settings, driver=kb_526, embedder=embedder_526) as rag:
        if not server_info(kb_526).supports_search_clause:  # a real 5.26 server
            assert rag.retriever.paths.variant("retrieve_boost")["u_search"] == "index"
        old_base = rag.retrieve(QUESTION, k=3)
        old_auto = rag.retrieve(QUESTION, semantics=stated, k=3)
        old_hard = rag.retrieve(QUESTION, "khop('Ada Lovelace', 1)", k=3, steering="hard")
    with GuidedRAG(settings, driver=tiny_kb, embedder=embedder) as rag:
        base = rag.retrieve(QUESTION, k=3)
        auto = rag.retrieve(QUESTION, semantics=stated, k=3)
        hard = rag.retrieve(QUESTION, "khop('Ada Lovelace', 1)", k=3, steering="hard")
    assert [c.id for c in old_base.chunks] == [c.id for c in base.chunks]
    assert [c.id for c in old_auto.chunks] == [c.id for c in auto.chunks]
    assert [c.id for c in old_hard.chunks] == [c.id for c in hard.chunks]
    assert len(auto.chunks) == 3 and old_auto.steering == auto.steering == "auto"
