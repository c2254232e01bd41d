"""A user's own vector index without the chunk id as a filter property (no ``WITH [c.id]``).

Neo4j 2026.06+ can filter a vector search by the selection's ids, but only on a property the index
declares; on any other index that query fails with ``PropertyNotFound ... not an additional
property``. The planner must see this before it picks ``search_in`` and fall back, saying why.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from neo4j import Driver, GraphDatabase
from neo4j.exceptions import Neo4jError

from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.db.connection import server_info
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.retrieval import ChunkIdSelection, Retriever
from guidedrag_graph.schema.presets import PRESETS
from guidedrag_graph.templates import queries as templates
from tests.vectors import DIM, numpy_top, unit, write_chunks

pytestmark = pytest.mark.neo4j

USER_INDEX = "user_passage_vectors"
N_CHUNKS = 620  # more than the planner's measured exact maximum (500) on 2026.06+


@pytest.fixture
def user_index_kb(
    blank_db: Driver, settings: Settings
) -> Iterator[tuple[Driver, dict[str, np.ndarray], np.ndarray]]:
    """Chunks with embeddings and a vector index made the plain way: no filter properties.

    A fresh driver, so no cached answer about another index of the same name can leak in.
    """
    rng = np.random.default_rng(11)
    vectors = {f"u{i:03d}": unit(rng.normal(size=DIM)) for i in range(N_CHUNKS)}
    blank_db.execute_query(
        f"CREATE VECTOR INDEX {USER_INDEX} FOR (c:Chunk) ON c.embedding "
        "OPTIONS {indexConfig: {`vector.dimensions`: $dims, "
        "`vector.similarity_function`: 'cosine'}}",
        dims=DIM,
    )
    write_chunks(blank_db, vectors)
    query = unit(vectors["u007"] + 0.3 * rng.normal(size=DIM) / np.sqrt(DIM))
    fresh = GraphDatabase.driver(
        settings.neo4j_uri,
        auth=(settings.neo4j_username, settings.neo4j_password.get_secret_value()),
    )
    try:
        yield fresh, vectors, query
    finally:
        fresh.close()


def test_planner_skips_search_in_on_an_index_without_the_filter_property(
    user_index_kb: tuple[Driver, dict[str, np.ndarray], np.ndarray], settings: Settings
) -> None:
    driver, vectors, query = user_index_kb
    user = settings.model_copy(update={"vector_index_name": USER_INDEX, "rank_plugin": "off"})
    ids = sorted(vectors)[: N_CHUNKS - 20]  # 600 chunks: above the exact maximum
    selection = ChunkIdSelection(tuple(ids), PRESETS["guidedrag"])
    if not server_info(driver).supports_search_in_filter:
        # 5.26 has no filtered SEARCH: the planner never asks for it, ranking still works.
        ranking = Retriever(GraphContext.open(user, driver)).rank(query, selection, k=5)
        assert ranking.path in ("exact", "index") and not ranking.notes
        assert [c.id for c in ranking.chunks] == numpy_top(vectors, ids, query, 5)
        return

    # The crash the planner must avoid: the filtered SEARCH itself, on this real index.
    search_in = templates.query(
        "retrieve_search_in",
        PRESETS["guidedrag"],
        selection=selection.cypher,
        names={"vector_index": USER_INDEX},
    )
    with pytest.raises(Neo4jError, match="additional property"):
        driver.execute_query(
            search_in,
            {
                **selection.params,
                "query_vector": [float(x) for x in query],
                "fetch_k": 5,
                "with_embedding": False,
            },
        )

    retriever = Retriever(GraphContext.open(user, driver))
    ranking = retriever.rank(query, selection, k=5)
    assert ranking.selection_size == 600
    assert ranking.path == "index"
    assert [c.id for c in ranking.chunks] == numpy_top(vectors, ids, query, 5)
    assert any("does not declare Chunk.id as a filter property" in n for n in ranking.notes)
    assert any("WITH [c.id]" in n for n in ranking.notes)
    # Forcing the path is a clear configuration error, not a database crash.
    with pytest.raises(ConfigurationError, match="declare the chunk id as a filter property"):
        retriever.rank(query, selection, k=5, path="search_in")

    # Once the index declares the id, the same driver plans search_in (the fix is seen at once).
    driver.execute_query(f"DROP INDEX {USER_INDEX}")
    driver.execute_query(
        f"CREATE VECTOR INDEX {USER_INDEX} FOR (c:Chunk) ON c.embedding WITH [c.id] "
        "OPTIONS {indexConfig: {`vector.dimensions`: $dims, "
        "`vector.similarity_function`: 'cosine', `vector.quantization.type`: 'none'}}",
        dims=DIM,
    )
    driver.execute_query("CALL db.awaitIndexes(120)")
    fixed = retriever.rank(query, selection, k=5)
    assert fixed.path == "search_in"
    assert not fixed.notes
    assert [c.id for c in fixed.chunks] == numpy_top(vectors, ids, query, 5)


def test_a_missing_index_is_named_in_the_note(
    user_index_kb: tuple[Driver, dict[str, np.ndarray], np.ndarray], settings: Settings
) -> None:
    driver, _vectors, _query = user_index_kb
    if not server_info(driver).supports_search_in_filter:
        pytest.skip("filtered SEARCH exists only on Neo4j 2026.06+; 5.26 never plans search_in")
    nope = settings.model_copy(update={"vector_index_name": "nope", "rank_plugin": "off"})
    retriever = Retriever(GraphContext.open(nope, driver))
    plan = retriever.planner.plan(600, is_all=False)
    assert plan.path == "index"
    assert "'nope' does not exist" in plan.notes[0]
    assert retriever.planner.search_in_unready() == plan.notes[0]
