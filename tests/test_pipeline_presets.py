"""The pipeline on a graph laid out like neo4j-graphrag's lexical graph (``__Entity__``,
``FROM_CHUNK`` pointing entity → chunk, ``FROM_DOCUMENT``): same answers, no reshaping."""

from __future__ import annotations

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.kb import load_bundle
from guidedrag_graph.migration.run import migrate
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.schema.presets import PRESETS
from guidedrag_graph.semantics import Semantics
from tests.conftest import wipe
from tests.tiny_corpus import write_bundle

pytestmark = pytest.mark.neo4j


def test_neo4j_graphrag_layout(
    driver: Driver,
    settings: Settings,
    tmp_path: object,
    embedder: Embedder,
) -> None:
    from pathlib import Path

    schema = PRESETS["neo4j-graphrag"]
    configured = settings.model_copy(update={"schema_preset": "neo4j-graphrag"})
    wipe(driver)
    try:
        migrate(driver, configured, schema)
        load_bundle(
            driver, configured, schema, write_bundle(Path(str(tmp_path))), embedder=embedder
        )
        driver.execute_query("CALL db.awaitIndexes(120)")
        labels = {
            r["label"]
            for r in driver.execute_query(
                "MATCH (n) UNWIND labels(n) AS label RETURN DISTINCT label"
            ).records
        }
        assert "__Entity__" in labels and "Entity" not in labels
        with GuidedRAG(configured, driver=driver, embedder=embedder) as rag:
            answer = rag.ask(
                "Where was Ada Lovelace born?",
                semantics=Semantics(entities=("Ada Lovelace",)),
                steering="hard",
            )
            base = rag.retrieve("When was the Eiffel Tower completed?", k=1)
        assert answer.retrieval.selection_size == 2
        assert answer.retrieval.chunks[0].id == "ada-1"
        assert answer.retrieval.chunks[0].document_title == "Ada Lovelace"  # via FROM_DOCUMENT
        assert answer.prompt is not None
        assert "(Ada Lovelace)-[BORN_IN]->(London)" in answer.prompt.user
        assert "English mathematician" in answer.prompt.user
        assert [c.id for c in base.chunks] == ["paris-2"]
    finally:
        wipe(driver)
