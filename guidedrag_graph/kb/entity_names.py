"""Entity-name embeddings: what the embedding and hybrid taggers search (``guidedrag kb
embed-entities``, migration V0006's vector index ``entity_name_embedding``).

A KB-maintenance step like loading, kept with the KB: the loader writes no name embeddings
(most users never run those taggers), so this fills them in afterwards, resumably.
"""

from __future__ import annotations

from neo4j import Driver, RoutingControl

from guidedrag_graph import templates
from guidedrag_graph.config import Settings
from guidedrag_graph.db import read_query
from guidedrag_graph.embeddings import Embedder, embedder_for
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.schema import SchemaMapping, schema_from_settings


def embed_entity_names(
    driver: Driver,
    settings: Settings,
    schema: SchemaMapping | None = None,
    embedder: Embedder | None = None,
    *,
    batch_size: int = 256,
) -> int:
    """Store ``name_embedding`` on entities that lack one; returns how many were embedded.

    Names are embedded as passages (the side the index holds); idempotent and resumable: each
    batch is committed, and a rerun picks up what is still missing.
    """
    schema = schema or schema_from_settings(settings)
    embedder = embedder or embedder_for(settings)
    read = templates.query("entity_name_embeddings", schema)
    write = templates.query("entity_name_embeddings_write", schema)
    done = 0
    while True:
        rows = read_query(driver, read, {"limit": batch_size}, database=settings.neo4j_database)
        if not rows:
            return done
        vectors = embedder.embed_passages([str(r["name"]) for r in rows])
        summary = driver.execute_query(
            write,
            {
                "rows": [
                    {"id": r["id"], "embedding": [float(x) for x in v]}
                    for r, v in zip(rows, vectors, strict=True)
                ]
            },
            database_=settings.neo4j_database,
            routing_=RoutingControl.WRITE,
        ).summary
        if summary.counters.properties_set == 0:
            raise ConfigurationError(
                "entities without an id cannot get a name embedding; reload the KB with "
                "`guidedrag load` so every entity has an id"
            )
        done += len(rows)
