"""A graph written by LlamaIndex's ``Neo4jPropertyGraphStore`` (through ``PropertyGraphIndex``),
used as it is: preset ``llamaindex`` plus ``kb adopt``.

The store writes ``(:__Node__:Chunk {id, text, embedding, ...metadata})`` and
``(:__Node__:__Entity__:<Type> {id, name, embedding})`` with ``(chunk)-[:MENTIONS]->(entity)`` and
the extracted relations between entities. Only the extraction model is replaced: a
deterministic kg_extractor fills the same node metadata keys an LLM extractor fills; the index
pipeline, embedding and the store's writes are LlamaIndex's own. The store calls APOC
(``apoc.merge.relationship``, ``apoc.create.addLabels``, ``apoc.map.clean``, ``apoc.meta.data``).

llama-index-graph-stores-neo4j declares ``neo4j<6`` while this project needs the 6.x driver;
the store's calls work on 6.x, so CI installs it with ``--no-deps`` (see .ci/run).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.db.fit import schema_mismatch
from guidedrag_graph.embeddings import Embedder, embedder_for
from guidedrag_graph.kb.adopt import adopt
from guidedrag_graph.kb.inspect import inspect_graph, propose_mapping
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.schema.presets import PRESETS
from guidedrag_graph.testing.builders_corpus import DOCUMENTS, ENTITIES, extract
from guidedrag_graph.testing.retrieval_conformance import RetrievalConformance
from tests.adopted_cli import check_adopted_graph_needs_no_variable
from tests.conftest import wipe

pytestmark = pytest.mark.neo4j

PRESET = PRESETS["llamaindex"]


def build_with_llamaindex(settings: Settings, embedder: Embedder) -> None:
    try:
        from llama_index.graph_stores.neo4j import Neo4jPropertyGraphStore
    except ImportError as exc:  # a clear failure, never a skip: CI must have it
        raise AssertionError(
            "llama-index-graph-stores-neo4j is missing: pip install --no-deps "
            "'llama-index-graph-stores-neo4j>=0.8,<0.9' (.ci/run does)"
        ) from exc
    from llama_index.core import Document, PropertyGraphIndex
    from llama_index.core.embeddings import BaseEmbedding
    from llama_index.core.graph_stores.types import (
        KG_NODES_KEY,
        KG_RELATIONS_KEY,
        EntityNode,
        Relation,
    )
    from llama_index.core.llms import MockLLM
    from llama_index.core.schema import TransformComponent

    class DeterministicExtractor(TransformComponent):  # type: ignore[misc]
        """Sets the entity and relation metadata an LLM path extractor would set."""

        def __call__(self, nodes: Any, **kwargs: Any) -> Any:
            for node in nodes:
                found = extract(node.get_content())
                node.metadata[KG_NODES_KEY] = [
                    EntityNode(name=name, label=kind) for name, kind in found.entities
                ]
                node.metadata[KG_RELATIONS_KEY] = [
                    Relation(
                        label=rel,
                        source_id=EntityNode(name=head).id,
                        target_id=EntityNode(name=tail).id,
                    )
                    for head, rel, tail in found.relations
                ]
            return nodes

    class E5Embedding(BaseEmbedding):  # type: ignore[misc]
        def _get_query_embedding(self, query: str) -> list[float]:
            return [float(x) for x in embedder.embed_queries([query])[0]]

        def _get_text_embedding(self, text: str) -> list[float]:
            return [float(x) for x in embedder.embed_passages([text])[0]]

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

    store = Neo4jPropertyGraphStore(
        username=settings.neo4j_username,
        password=settings.neo4j_password.get_secret_value(),
        url=settings.neo4j_uri,
        database=settings.neo4j_database,
    )
    documents = [
        Document(text=text, metadata={"title": title}) for title, text in DOCUMENTS.items()
    ]
    PropertyGraphIndex.from_documents(
        documents,
        llm=MockLLM(),
        kg_extractors=[DeterministicExtractor()],
        embed_model=E5Embedding(model_name="multilingual-e5-small"),
        property_graph_store=store,
        use_async=False,
    )
    store.close()


@pytest.fixture(scope="module")
def embedder(apoc_settings: Settings) -> Embedder:
    return embedder_for(apoc_settings)


@pytest.fixture(scope="module")
def graph(apoc_driver: Driver, apoc_settings: Settings, embedder: Embedder) -> Settings:
    wipe(apoc_driver)
    build_with_llamaindex(apoc_settings, embedder)
    settings = apoc_settings.model_copy(update={"schema_preset": "llamaindex"})
    report = adopt(apoc_driver, settings, PRESET)
    assert report.vector_index_name == settings.vector_index_name
    assert report.created and report.name_keys_written == len(ENTITIES)
    return settings


def _chunk_ids(driver: Driver) -> dict[str, str]:
    rows = driver.execute_query("MATCH (c:Chunk) RETURN c.title AS title, c.id AS id")
    return {r["title"]: r["id"] for r in rows.records}


def test_the_layout_is_llamaindexs(apoc_driver: Driver, graph: Settings) -> None:
    record = apoc_driver.execute_query(
        "MATCH (c:__Node__:Chunk)-[:MENTIONS]->(e:__Node__:__Entity__) "
        "RETURN count(DISTINCT c) AS chunks, count(DISTINCT e) AS entities"
    ).records[0]
    assert (record["chunks"], record["entities"]) == (len(DOCUMENTS), len(ENTITIES))
    assert schema_mismatch(apoc_driver, graph.neo4j_database, PRESET) is None


def test_guided_retrieval_on_llamaindexs_graph(
    apoc_driver: Driver, graph: Settings, embedder: Embedder
) -> None:
    ids = _chunk_ids(apoc_driver)
    with GuidedRAG(graph, driver=apoc_driver, embedder=embedder) as rag:
        phobos = rag.retrieve("How often does Phobos orbit Mars?", "entity('phobos')", k=3)
        moons = rag.retrieve("Which moons orbit Mars?", "hop('Mars', ['ORBITS'], 1, 'in')", k=3)
        everything = rag.retrieve("Which currency did Germany use before the Euro?", k=4)
    assert [c.id for c in phobos.chunks] == [ids["Mars"]]
    assert phobos.chunks[0].document_title == "Mars"
    assert sorted(c.id for c in moons.chunks) == sorted([ids["Mars"], ids["Deimos"]])
    assert sorted(c.id for c in everything.chunks) == sorted(ids.values())


def test_inspect_proposes_the_preset(apoc_driver: Driver, graph: Settings) -> None:
    proposed, _ = propose_mapping(inspect_graph(apoc_driver, graph.neo4j_database))
    for name in (
        "chunk_label",
        "entity_label",
        "part_of_type",
        "mentions_type",
        "mentions_direction",
        "chunk_id",
        "chunk_text",
        "chunk_embedding",
        "entity_id",
        "entity_name",
        "document_title",
    ):
        assert getattr(proposed, name) == getattr(PRESET, name), name


def test_adopted_llamaindex_graph_needs_no_variable(
    apoc_settings: Settings, graph: Settings, tmp_path: Path
) -> None:
    seen = check_adopted_graph_needs_no_variable(
        apoc_settings,
        tmp_path,
        preset="llamaindex",
        question="How often does Phobos orbit Mars?",
        entity="Phobos",
        title="Mars",
    )
    # nothing on the graph indexed the entity names: embed-entities made the index
    assert seen["embed"]["vector_index_created"] is True


class TestRetrievalConformance(RetrievalConformance):
    """The retrieval conformance suite on the graph this builder wrote (its ids, labels and
    relationship directions), every case on every path the server offers, against numpy."""

    @pytest.fixture
    def conformance_graph(self, apoc_driver: Driver, graph: Settings) -> tuple[Driver, Settings]:
        return apoc_driver, graph
