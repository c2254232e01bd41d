"""A graph written by neo4j-graphrag's own KG builder (SimpleKGPipeline -> Neo4jWriter), used as
it is: preset ``neo4j-graphrag-builder`` plus ``kb adopt``, no reshaping.

Only the extraction model is replaced (a deterministic ``LLMInterface`` that answers from
``guidedrag_graph.testing.builders_corpus``); the splitter, lexical graph, pruning, entity
resolution and writer are the library's. The writer needs APOC (``apoc.merge.relationship``, and
``apoc.create.addLabels`` on servers without dynamic labels), so this runs on the 5.26 server
with APOC Core.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.db.fit import schema_mismatch
from guidedrag_graph.embeddings import Embedder, embedder_for
from guidedrag_graph.kb.adopt import adopt, unadopt
from guidedrag_graph.kb.inspect import inspect_graph, propose_mapping
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.schema.presets import ELEMENT_ID, PRESETS
from guidedrag_graph.selection.selector import Selector
from guidedrag_graph.testing.builders_corpus import (
    DOCUMENTS,
    ENTITIES,
    RELATIONS,
    chunk_text_in_prompt,
    extract,
)
from guidedrag_graph.testing.retrieval_conformance import RetrievalConformance
from tests.adopted_cli import check_adopted_graph_needs_no_variable
from tests.conftest import wipe

pytestmark = pytest.mark.neo4j

USER_INDEX = "graphrag_chunks"  # the vector index a neo4j-graphrag user made themselves


def _graphrag_classes() -> tuple[Any, Any, Any]:
    from neo4j_graphrag.embeddings.base import Embedder as GraphragEmbedder
    from neo4j_graphrag.llm import LLMInterface
    from neo4j_graphrag.llm.types import LLMResponse

    return GraphragEmbedder, LLMInterface, LLMResponse


def build_with_simple_kg_pipeline(driver: Driver, embedder: Embedder) -> None:
    """Run the library's SimpleKGPipeline over the corpus, one document per run."""
    from neo4j_graphrag.components.text_splitters.fixed_size_splitter import FixedSizeSplitter
    from neo4j_graphrag.experimental.pipeline.kg_builder import SimpleKGPipeline

    graphrag_embedder, llm_interface, llm_response = _graphrag_classes()

    class DeterministicLLM(llm_interface):  # type: ignore[misc,valid-type]
        """Answers the extraction prompt from the corpus tables, in the JSON the prompt asks."""

        def __init__(self) -> None:
            super().__init__(model_name="deterministic-extractor")

        def invoke(self, input: str, *args: Any, **kwargs: Any) -> Any:
            found = extract(chunk_text_in_prompt(input))
            ids = {name: str(i) for i, (name, _) in enumerate(found.entities)}
            graph = {
                "nodes": [
                    {"id": ids[name], "label": kind, "properties": {"name": name}}
                    for name, kind in found.entities
                ],
                "relationships": [
                    {"type": t, "start_node_id": ids[h], "end_node_id": ids[o], "properties": {}}
                    for h, t, o in found.relations
                ],
            }
            return llm_response(content=json.dumps(graph))

        async def ainvoke(self, input: str, *args: Any, **kwargs: Any) -> Any:
            return self.invoke(input)

    class PassageEmbedder(graphrag_embedder):  # type: ignore[misc,valid-type]
        """Chunks are passages for e5 (questions are embedded as queries at retrieval)."""

        def embed_query(self, text: str) -> list[float]:
            return [float(x) for x in embedder.embed_passages([text])[0]]

    pipeline = SimpleKGPipeline(
        llm=DeterministicLLM(),
        driver=driver,
        embedder=PassageEmbedder(),
        schema={
            "node_types": sorted(set(ENTITIES.values())),
            "relationship_types": sorted({r for _, r, _ in RELATIONS}),
        },
        from_file=False,
        text_splitter=FixedSizeSplitter(chunk_size=400, chunk_overlap=0),
        perform_entity_resolution=True,
    )
    for title, text in DOCUMENTS.items():
        asyncio.run(pipeline.run_async(text=text, file_path=title))


@pytest.fixture(scope="module")
def embedder(apoc_settings: Settings) -> Embedder:
    return embedder_for(apoc_settings)


@pytest.fixture(scope="module")
def graph(apoc_driver: Driver, apoc_settings: Settings, embedder: Embedder) -> Settings:
    """The built graph, adopted; returns the settings a user would then have."""
    from neo4j_graphrag.indexes import create_vector_index

    wipe(apoc_driver)
    build_with_simple_kg_pipeline(apoc_driver, embedder)
    create_vector_index(
        apoc_driver,
        USER_INDEX,
        label="Chunk",
        embedding_property="embedding",
        dimensions=apoc_settings.embedding_dimensions,
        similarity_fn="cosine",
    )
    settings = apoc_settings.model_copy(update={"schema_preset": "neo4j-graphrag-builder"})
    report = adopt(apoc_driver, settings, PRESETS["neo4j-graphrag-builder"])
    # Neo4j allows one vector index per property: adopt reuses the user's and says so.
    assert report.vector_index_name == USER_INDEX
    assert any("'graphrag_chunks'" in n and "recorded" in n for n in report.notes)
    assert report.name_keys_written == len(ENTITIES)
    return settings  # no GUIDEDRAG_VECTOR_INDEX_NAME: every command reads the adoption record


def _chunk_element_ids(driver: Driver) -> dict[str, str]:
    rows = driver.execute_query("MATCH (c:Chunk) RETURN c.text AS text, elementId(c) AS eid")
    return {r["text"]: r["eid"] for r in rows.records}


def test_the_writer_wrote_no_id_properties(apoc_driver: Driver, graph: Settings) -> None:
    record = apoc_driver.execute_query(
        "MATCH (n) WHERE n:Chunk OR n:Document OR n:__Entity__ "
        "RETURN count(n) AS nodes, count(n.id) AS with_id"
    ).records[0]
    assert record["nodes"] == len(DOCUMENTS) * 2 + len(ENTITIES)
    assert record["with_id"] == 0


def test_guided_retrieval_on_the_builders_graph(
    apoc_driver: Driver, graph: Settings, embedder: Embedder
) -> None:
    eids = _chunk_element_ids(apoc_driver)
    with GuidedRAG(graph, driver=apoc_driver, embedder=embedder) as rag:
        # 'phobos' resolves through the name_key that adopt wrote
        phobos = rag.retrieve("How often does Phobos orbit Mars?", "entity('phobos')", k=3)
        moons = rag.retrieve("Which moons orbit Mars?", "hop('Mars', ['ORBITS'], 1, 'in')", k=3)
        everything = rag.retrieve(
            "Which currency did Germany use before the Euro?", k=4, link=False
        )
    assert phobos.selection_size == 1
    assert [c.id for c in phobos.chunks] == [eids[DOCUMENTS["Mars"]]]
    assert phobos.chunks[0].document_title == "Mars"  # the Document's path, via FROM_DOCUMENT
    assert phobos.chunks[0].text == DOCUMENTS["Mars"]
    assert sorted(c.id for c in moons.chunks) == sorted(
        [eids[DOCUMENTS["Mars"]], eids[DOCUMENTS["Deimos"]]]
    )
    assert everything.path == "index"
    assert sorted(c.id for c in everything.chunks) == sorted(eids.values())
    assert all(c.id != "None" and c.document_title for c in everything.chunks)


def test_inspect_proposes_the_preset(apoc_driver: Driver, graph: Settings) -> None:
    proposed, _notes = propose_mapping(inspect_graph(apoc_driver, graph.neo4j_database))
    preset = PRESETS["neo4j-graphrag-builder"]
    for name in (
        "chunk_label",
        "entity_label",
        "document_label",
        "part_of_type",
        "mentions_type",
        "mentions_direction",
        "chunk_text",
        "chunk_embedding",
        "chunk_id",
        "entity_name",
        "next_chunk_type",
    ):
        if name == "next_chunk_type":
            continue  # one chunk per document here: no NEXT_CHUNK relationship to see
        assert getattr(proposed, name) == getattr(preset, name), name
    assert proposed.chunk_id == ELEMENT_ID
    # entity names are unique after the builder's resolution, so they may serve as ids
    assert proposed.entity_id in (ELEMENT_ID, "name")


def test_a_preset_that_does_not_fit_says_what_the_graph_has(
    apoc_driver: Driver, graph: Settings
) -> None:
    # The loader-shaped neo4j-graphrag preset reads `id`, which this writer never sets.
    mismatch = schema_mismatch(apoc_driver, graph.neo4j_database, PRESETS["neo4j-graphrag"])
    assert mismatch is not None and "'id'" in mismatch
    assert "fits preset 'neo4j-graphrag-builder'" in mismatch  # the preset that fits, named
    wrong = graph.model_copy(update={"schema_preset": "guidedrag"})
    prep = Selector(GraphContext.open(wrong, apoc_driver)).prepare("entity('Euro')")
    assert prep.empty is not None
    assert "no entity named 'Euro'" in prep.empty.message
    assert ":Entity entity nodes, but there are none" in prep.empty.message
    assert ":__Entity__ (8)" in prep.empty.message
    assert "guidedrag kb adopt --preset neo4j-graphrag-builder" in prep.empty.message


def test_adopt_drop_removes_only_what_adopt_made(apoc_driver: Driver, graph: Settings) -> None:
    def names() -> set[str]:
        rows = apoc_driver.execute_query("SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP'")
        return {r["name"] for r in rows.records}

    before = names()
    assert {"entity_names", "guidedrag_entity_name_key", USER_INDEX} <= before
    report = unadopt(apoc_driver, graph, PRESETS["neo4j-graphrag-builder"])
    assert sorted(report.dropped) == ["entity_names", "guidedrag_entity_name_key"]
    assert report.name_keys_removed == len(ENTITIES)
    assert USER_INDEX in names()  # the user's own index stays
    left = apoc_driver.execute_query(
        "MATCH (n) RETURN count(n.name_key) AS keys, count(CASE WHEN n:__GuidedRAGAdoption "
        "THEN 1 END) AS records"
    ).records[0]
    assert left["keys"] == 0 and left["records"] == 0


def test_adopted_builder_graph_needs_no_variable(
    apoc_settings: Settings, graph: Settings, tmp_path: Path
) -> None:
    seen = check_adopted_graph_needs_no_variable(
        apoc_settings,
        tmp_path,
        preset="neo4j-graphrag-builder",
        question="How often does Phobos orbit Mars?",
        entity="Phobos",
        title="Mars",
    )
    assert seen["adopt"]["vector_index_name"] == USER_INDEX  # the user's own, remembered


class TestRetrievalConformance(RetrievalConformance):
    """The retrieval conformance suite on the graph this builder wrote (its ids, labels and
    relationship directions), every case on every path the server offers, against numpy."""

    @pytest.fixture
    def conformance_graph(self, apoc_driver: Driver, graph: Settings) -> tuple[Driver, Settings]:
        return apoc_driver, graph
