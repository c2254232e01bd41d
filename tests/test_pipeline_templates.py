"""Every retrieval/augmentation/tagging template runs as-is, the way Neo4j Browser would run it.

Browser evaluates each ``:param name => expression`` line, then runs the rest of the file; we do
the same against the real server (on the tiny KB), so a template cannot drift from its header.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.db import server_info
from guidedrag_graph.query_templates import executable, rename
from guidedrag_graph.resources import cypher_template
from guidedrag_graph.schema import PRESETS
from tests.test_pipeline import embedder, tiny_kb  # noqa: F401  (module fixtures reused)

pytestmark = pytest.mark.neo4j

_PARAM = re.compile(r"^:param\s+(\w+)\s*=>\s*(.+?);?\s*$", re.M)

TEMPLATES = [
    "selection_size",
    "retrieve_exact",
    "retrieve_index",
    "retrieve_search",
    "retrieve_search_in",
    "selection_members",
    "triplets",
    "entity_descriptions",
    "tag_fulltext",
    "tag_resolve",
    "entity_name_embeddings",
    # the rank plugin's (the test server has it, see conftest)
    "retrieve_plugin",
    "procedure_listed",
    "rank_plugin_cache",
]
NEEDS_SEARCH = {"retrieve_search", "retrieve_search_in"}


def browser_params(driver: Driver, text: str) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for name, expression in _PARAM.findall(text):
        params[name] = driver.execute_query(f"RETURN {expression} AS v").records[0]["v"]
    return params


@pytest.mark.parametrize("name", TEMPLATES)
def test_template_runs_as_written(
    name: str,
    tiny_kb: Driver,  # noqa: F811
    settings: Settings,
) -> None:
    text = cypher_template(name)
    assert text.startswith("//"), "each template opens with a comment saying why it exists"
    if name in NEEDS_SEARCH and not server_info(tiny_kb).supports_search_clause:
        pytest.skip("SEARCH needs Neo4j 2026.01+ (5.26 uses retrieve_index)")
    params = browser_params(tiny_kb, text)
    records = tiny_kb.execute_query(executable(text), params).records
    assert isinstance(records, list)
    if name == "selection_size":
        assert records[0]["selection_size"] == 0  # the example ids are not in the tiny KB
    if name == "procedure_listed":
        assert records[0]["listed"] is True
    if name == "retrieve_plugin":
        params["sel_chunk_ids"] = ["ada-1", "ada-2"]
        rows = tiny_kb.execute_query(executable(text), params).records
        assert sorted(r["id"] for r in rows) == ["ada-1", "ada-2"]
    if name == "triplets":
        params["chunk_ids"] = ["ada-1"]
        rows = tiny_kb.execute_query(executable(text), params).records
        assert {(r["head"], r["type"], r["tail"]) for r in rows} >= {
            ("Ada Lovelace", "BORN_IN", "London"),
            ("Ada Lovelace", "CHILD_OF", "Lord Byron"),
        }


def test_rename_maps_the_default_schema_onto_neo4j_graphrag() -> None:
    schema = PRESETS["neo4j-graphrag"]
    out = rename(cypher_template("triplets"), schema)
    assert "(c:`Chunk`)<-[:`FROM_CHUNK`]-(e:`__Entity__`)" in out
    assert "`MENTIONS`" not in out and ":`Entity`" not in out
    out = rename(cypher_template("retrieve_exact"), schema)
    assert "[:`FROM_DOCUMENT`]" in out and "`PART_OF`" not in out
    assert rename("RETURN e.name, c.position, vector.similarity.cosine(x, y)", schema) == (
        "RETURN e.`name`, c.`index`, vector.similarity.cosine(x, y)"
    )
