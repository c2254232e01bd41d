"""A graph written by LangChain's ``Neo4jGraph.add_graph_documents`` (langchain-neo4j), the layout
of Neo4j's LLM Graph Builder, used as it is: preset ``langchain`` plus ``kb adopt``.

``include_source=True`` stores each source text as a ``(:Document {id, text, ...metadata})`` that
``MENTIONS`` the entities; ``baseEntityLabel=True`` gives every entity ``__Entity__`` with its name
as ``id``. The chunk embeddings and their vector index come from LangChain too
(``Neo4jVector.from_existing_graph``), as a LangChain user would make them. Only the extraction
model is replaced: the GraphDocuments come from the corpus tables. The writer calls APOC
(``apoc.merge.relationship``, ``apoc.meta.data`` for its schema refresh).
"""

from __future__ import annotations

from hashlib import md5
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

PRESET = PRESETS["langchain"]


def build_with_langchain(settings: Settings, embedder: Embedder) -> None:
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from langchain_neo4j import Neo4jGraph, Neo4jVector
    from langchain_neo4j.graphs.graph_document import GraphDocument, Node, Relationship

    class E5Embeddings(Embeddings):
        """Stored texts are passages for e5, questions are queries."""

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [[float(x) for x in row] for row in embedder.embed_passages(texts)]

        def embed_query(self, text: str) -> list[float]:
            return [float(x) for x in embedder.embed_queries([text])[0]]

    password = settings.neo4j_password.get_secret_value()
    graph = Neo4jGraph(url=settings.neo4j_uri, username=settings.neo4j_username, password=password)
    documents = []
    for title, text in DOCUMENTS.items():
        found = extract(text)
        nodes = {name: Node(id=name, type=kind) for name, kind in found.entities}
        documents.append(
            GraphDocument(
                nodes=list(nodes.values()),
                relationships=[
                    Relationship(source=nodes[h], target=nodes[t], type=r)
                    for h, r, t in found.relations
                ],
                source=Document(page_content=text, metadata={"title": title, "source": "test"}),
            )
        )
    graph.add_graph_documents(documents, include_source=True, baseEntityLabel=True)
    graph.close()
    Neo4jVector.from_existing_graph(
        E5Embeddings(),
        url=settings.neo4j_uri,
        username=settings.neo4j_username,
        password=password,
        node_label="Document",
        text_node_properties=["text"],
        embedding_node_property="embedding",
        index_name="vector",
    )._driver.close()


@pytest.fixture(scope="module")
def embedder(apoc_settings: Settings) -> Embedder:
    return embedder_for(apoc_settings)


@pytest.fixture(scope="module")
def graph(apoc_driver: Driver, apoc_settings: Settings, embedder: Embedder) -> Settings:
    wipe(apoc_driver)
    build_with_langchain(apoc_settings, embedder)
    settings = apoc_settings.model_copy(update={"schema_preset": "langchain"})
    report = adopt(apoc_driver, settings, PRESET)
    assert report.vector_index_name == "vector"  # LangChain's own index, reused and recorded
    return settings  # no GUIDEDRAG_VECTOR_INDEX_NAME: every command reads the adoption record


def _doc_id(title: str) -> str:
    return md5(DOCUMENTS[title].encode("utf-8")).hexdigest()  # LangChain's id for a source


def test_the_layout_is_langchains(apoc_driver: Driver, graph: Settings) -> None:
    rows = apoc_driver.execute_query(
        "MATCH (d:Document)-[:MENTIONS]->(e:__Entity__) RETURN count(*) AS n, "
        "count(DISTINCT e) AS entities, collect(DISTINCT d.id) AS ids"
    ).records[0]
    assert rows["entities"] == len(ENTITIES)
    assert sorted(rows["ids"]) == sorted(_doc_id(t) for t in DOCUMENTS)
    assert schema_mismatch(apoc_driver, graph.neo4j_database, PRESET) is None


def test_guided_retrieval_on_langchains_graph(
    apoc_driver: Driver, graph: Settings, embedder: Embedder
) -> None:
    with GuidedRAG(graph, driver=apoc_driver, embedder=embedder) as rag:
        phobos = rag.retrieve("How often does Phobos orbit Mars?", "entity('phobos')", k=3)
        moons = rag.retrieve("Which moons orbit Mars?", "hop('Mars', ['ORBITS'], 1, 'in')", k=3)
        euro = rag.retrieve(
            "What is the currency of France?", "entity('Euro') - entity('Deutsche Mark')", k=3
        )
        everything = rag.retrieve("Which currency did Germany use before the Euro?", k=4)
    assert [c.id for c in phobos.chunks] == [_doc_id("Mars")]
    # the source node is its own document: the title is its metadata
    assert phobos.chunks[0].document_title == "Mars"
    assert sorted(c.id for c in moons.chunks) == sorted([_doc_id("Mars"), _doc_id("Deimos")])
    assert [c.id for c in euro.chunks] == [_doc_id("Euro")]
    assert sorted(c.id for c in everything.chunks) == sorted(_doc_id(t) for t in DOCUMENTS)


def test_inspect_proposes_the_preset(apoc_driver: Driver, graph: Settings) -> None:
    proposed, notes = propose_mapping(inspect_graph(apoc_driver, graph.neo4j_database))
    fields: dict[str, Any] = {
        name: getattr(PRESET, name)
        for name in (
            "chunk_label",
            "document_label",
            "entity_label",
            "part_of_type",
            "mentions_type",
            "mentions_direction",
            "chunk_id",
            "chunk_text",
            "chunk_embedding",
            "entity_id",
            "document_title",
        )
    }
    assert {name: getattr(proposed, name) for name in fields} == fields
    assert any("own document" in note for note in notes)


def test_adopted_langchain_graph_needs_no_variable(
    apoc_settings: Settings, graph: Settings, tmp_path: Path
) -> None:
    seen = check_adopted_graph_needs_no_variable(
        apoc_settings,
        tmp_path,
        preset="langchain",
        question="How often does Phobos orbit Mars?",
        entity="Phobos",
        title="Mars",
    )
    assert seen["adopt"]["vector_index_name"] == "vector"


class TestRetrievalConformance(RetrievalConformance):
    """The retrieval conformance suite on the graph this builder wrote (its ids, labels and
    relationship directions), every case on every path the server offers, against numpy."""

    @pytest.fixture
    def conformance_graph(self, apoc_driver: Driver, graph: Settings) -> tuple[Driver, Settings]:
        return apoc_driver, graph
