"""A boost(...) of more tiers than a 64-bit mask holds ranks through guidedrag.rankTiers exactly as
through the pure-Cypher tier query (the plugin once refused more than 63 tiers)."""

from __future__ import annotations

import numpy as np
import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.retrieval import Retriever
from guidedrag_graph.selection import Selector, boost, entity


@pytest.mark.neo4j
@pytest.mark.parametrize("terms", [63, 64, 90])
def test_a_boost_of_64_terms_and_more_ranks_like_pure_cypher(
    sample_db: Driver, settings: Settings, terms: int
) -> None:
    names = [
        r["name"]
        for r in sample_db.execute_query(
            "MATCH (e:Entity)<-[:MENTIONS]-(:Chunk) RETURN DISTINCT e.name AS name "
            "ORDER BY name LIMIT $n",
            n=terms,
        ).records
    ]
    assert len(names) == terms, f"the sample KB has {len(names)} mentioned entities"
    # Strongest first, every weight distinct, so the best tier decides the boost.
    expr = boost(*((entity(name), round(0.3 / (1 + i), 6)) for i, name in enumerate(names)))
    off = settings.model_copy(update={"rank_plugin": "off"})
    plugin = Retriever(GraphContext.open(settings, sample_db))
    cypher = Retriever(GraphContext.open(off, sample_db))
    assert plugin.graph.rank_tiers_plugin and not cypher.graph.rank_plugin
    compiled = Selector(GraphContext.open(settings, sample_db)).compile(expr)
    rng = np.random.default_rng(terms)
    dim = settings.embedding_dimensions
    for _ in range(3):
        query = rng.normal(size=dim)
        query /= np.linalg.norm(query)
        a = plugin.rank(query, compiled, k=10)
        b = cypher.rank(query, compiled, k=10)
        assert "guidedrag.rankAuto" in a.cypher and "guidedrag.rank" not in b.cypher
        assert len(a.chunks) == 10
        assert [(c.id, c.tier) for c in a.chunks] == [(c.id, c.tier) for c in b.chunks]
        for x, y in zip(a.chunks, b.chunks, strict=True):
            assert x.score + x.boost == pytest.approx(y.score + y.boost, abs=1e-6)
        assert any(c.boost > 0 for c in a.chunks)  # the tiers did rank
