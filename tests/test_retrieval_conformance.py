"""The retrieval conformance suite (``guidedrag_graph.testing.retrieval_conformance``) on the
layouts our own loader writes: the guidedrag preset with relations as types and as a property,
and neo4j-graphrag's lexical graph. The builders' own layouts run the same suite in
``tests/test_builders_*.py``, on what their writers wrote. Every case is checked on every
physical path the server offers (the session server has the rank plugin and filtered SEARCH).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.migration.run import migrate
from guidedrag_graph.schema.presets import PRESETS, SchemaMapping, schema_from_settings
from guidedrag_graph.testing.memory_graph import corpus_graph, load_graph, write_embeddings
from guidedrag_graph.testing.retrieval_conformance import RetrievalConformance
from tests.conftest import wipe

pytestmark = pytest.mark.neo4j

LAYOUTS: dict[str, dict[str, object]] = {
    "guidedrag-types": {"schema_preset": "guidedrag"},
    "guidedrag-property": {"schema_preset": "guidedrag", "relation_mode": "property"},
    "graphrag-types": {"schema_preset": "neo4j-graphrag"},
}


@pytest.fixture(scope="module", params=sorted(LAYOUTS))
def layout(
    request: pytest.FixtureRequest, driver: Driver, main_settings: Settings
) -> Iterator[Settings]:
    chosen = main_settings.model_copy(update=LAYOUTS[str(request.param)])
    schema: SchemaMapping = schema_from_settings(chosen)
    wipe(driver)
    migrate(driver, chosen, schema)
    graph = corpus_graph()
    load_graph(graph, driver, schema)
    rng = np.random.default_rng(11)
    basis = rng.normal(size=(3, chosen.embedding_dimensions))  # low rank: cosines spread
    write_embeddings({c: rng.normal(size=3) @ basis for c in graph.chunks}, driver, schema)
    driver.execute_query("CALL db.awaitIndexes(60)")
    yield chosen
    wipe(driver)


class TestOurLayouts(RetrievalConformance):
    @pytest.fixture
    def conformance_graph(self, driver: Driver, layout: Settings) -> tuple[Driver, Settings]:
        return driver, layout


def test_the_corpus_graph_is_what_the_layouts_hold(driver: Driver, layout: Settings) -> None:
    """The suite's snapshot reads back what was written (so the reference is not vacuous)."""
    from guidedrag_graph.testing.retrieval_conformance import snapshot

    snap = snapshot(driver, layout.neo4j_database, schema_from_settings(layout))
    graph = corpus_graph()
    assert set(snap.vectors) == set(graph.chunks)
    assert snap.graph.mentions == graph.mentions
    assert snap.graph.relations == graph.relations
    assert PRESETS[layout.schema_preset].chunk_label  # the preset exists for every layout
