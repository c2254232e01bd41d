"""``load --bulk`` (offline neo4j-admin import) gives the graph the transactional loader gives."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from neo4j import Driver, GraphDatabase
from pydantic import SecretStr

from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.kb import sample_kb_dir
from guidedrag_graph.kb.bulk import bulk_load
from guidedrag_graph.retrieval import ChunkIdSelection, Retriever
from guidedrag_graph.runtime import LocalNeo4j
from guidedrag_graph.schema.presets import PRESETS
from tests.conftest import TEST_PASSWORD, cache_dir, free_port, sample_bundle
from tests.kb_bundles import graph_counts

GUIDEDRAG = PRESETS["guidedrag"]
PROBES = (
    "MATCH (c:Chunk) RETURN c.id AS id, c.text AS text, c.position AS pos, "
    "c.document_id AS doc, c.embedding AS embedding ORDER BY id LIMIT 25",
    "MATCH (e:Entity) RETURN e.id AS id, e.name AS name, e.name_key AS key, "
    "e.alias_keys AS ak, e.type AS type ORDER BY id LIMIT 50",
    "MATCH (h:Entity)-[r]->(t:Entity) RETURN h.id AS h, type(r) AS type, r.predicate AS p, "
    "r.source_chunk AS src, t.id AS t ORDER BY h, type, t, p, src LIMIT 200",
    "MATCH (d:Document) RETURN d.id AS id, d.title AS title, d.source AS source, "
    "toString(d.date) AS date ORDER BY id LIMIT 50",
    # Both mark every node they create (what `kb wipe` deletes), and no relation (none joins two
    # nodes they did not create).
    "MATCH (n) WHERE NOT n:__GuidedRAGMigration RETURN n:__GuidedRAGLoaded AS loaded, "
    "count(*) AS n",
    "MATCH ()-[r]->() WHERE r.__GuidedRAGLoaded IS NOT NULL RETURN count(r) AS marked",
)


@pytest.mark.slow
def test_bulk_import_equals_transactional_load(
    sample_db: Driver, settings: Settings, tmp_path: Path
) -> None:
    server = LocalNeo4j(
        tmp_path / "home",
        version=settings.neo4j_version,
        cache_dir=cache_dir(),
        bolt_port=free_port(),
        http_port=free_port(),
        password=TEST_PASSWORD,
        heap="768m",
        pagecache="256m",
    )
    bulk_settings = settings.model_copy(
        update={"neo4j_uri": server.uri, "neo4j_password": SecretStr(TEST_PASSWORD)}
    )
    server.start()
    try:
        report = bulk_load(bulk_settings, GUIDEDRAG, sample_kb_dir(), server=server)
        assert report.timings["import"] > 0 and "V0005" in " ".join(report.migrations_applied)
        with GraphDatabase.driver(server.uri, auth=("neo4j", TEST_PASSWORD)) as bulk:
            assert graph_counts(bulk, bulk_settings, GUIDEDRAG) == graph_counts(
                sample_db, settings, GUIDEDRAG
            )
            for probe in PROBES:
                assert [dict(r) for r in bulk.execute_query(probe).records] == [
                    dict(r) for r in sample_db.execute_query(probe).records
                ], probe
            # Same retrieval results: exact ranking and the vector index, for every question.
            bundle = sample_bundle()
            ids = tuple(c.id for c in bundle.chunks[::3])
            rng = np.random.default_rng(5)
            for q in [*list(bundle.embeddings.values())[:5], rng.normal(size=384)]:
                for path, selection in (("exact", ChunkIdSelection(ids)), ("index", None)):
                    a = Retriever(GraphContext.open(bulk_settings, bulk, GUIDEDRAG)).rank(
                        q, selection, k=5, path=path if selection else None
                    )
                    b = Retriever(GraphContext.open(settings, sample_db, GUIDEDRAG)).rank(
                        q, selection, k=5, path=path if selection else None
                    )
                    assert [c.id for c in a.chunks] == [c.id for c in b.chunks]
        # A second --bulk onto a database with data is refused before anything is stopped.
        with pytest.raises(ConfigurationError, match="holds data"):
            bulk_load(bulk_settings, GUIDEDRAG, sample_kb_dir(), server=server)
        assert server.status().running
    finally:
        server.stop()
