"""Entity-name embeddings: what the embedding and hybrid taggers search (``guidedrag kb
embed-entities``), and the vector index they search them through.

A KB-maintenance step like loading, kept with the KB: the loader writes no name embeddings
(most users never run those taggers), so this fills them in afterwards, resumably. On a KB
guidedrag loaded, migration V0006 made the index; on an adopted graph nothing did, so this
creates it (or finds the one already on those embeddings) and records its name in the adoption
record, which every command reads: ``--tagger embedding`` then works with no variable set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from neo4j import Driver, RoutingControl

from guidedrag_graph.config import Settings
from guidedrag_graph.db.connection import read_query, server_info
from guidedrag_graph.db.fit import vector_index_over
from guidedrag_graph.embeddings import Embedder, embedder_for
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.kb.batch_writes import progress_bar
from guidedrag_graph.schema.presets import SchemaMapping, schema_from_settings
from guidedrag_graph.templates import queries as templates


@dataclass
class EntityNamesReport:
    """What ``embed_entity_names_and_index`` did (``guidedrag kb embed-entities --json``)."""

    embedded: int = 0
    vector_index_name: str | None = None
    vector_index_created: bool = False
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def embed_entity_names(
    driver: Driver,
    settings: Settings,
    schema: SchemaMapping | None = None,
    embedder: Embedder | None = None,
    *,
    batch_size: int = 256,
    progress: bool = False,
) -> int:
    """Store ``name_embedding`` on entities that lack one; returns how many were embedded.

    Names are embedded as passages (the side the index holds); idempotent and resumable: each
    batch is committed, and a rerun picks up what is still missing.
    """
    schema = schema or schema_from_settings(settings)
    embedder = embedder or embedder_for(settings)
    database = settings.neo4j_database
    read = templates.query("entity_name_embeddings", schema)
    write = templates.query("entity_name_embeddings_write", schema)
    total = 0
    if progress:
        rows = read_query(
            driver, templates.query("entity_name_embeddings_count", schema), database=database
        )
        total = int(rows[0]["missing"]) if rows else 0
    done = 0
    with progress_bar(total, "entity names", progress and total > 0) as bar:
        while True:
            rows = read_query(driver, read, {"limit": batch_size}, database=database)
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
                database_=database,
                routing_=RoutingControl.WRITE,
            ).summary
            if summary.counters.properties_set == 0:
                raise ConfigurationError(
                    "entities without an id cannot get a name embedding; reload the KB with "
                    "`guidedrag load` so every entity has an id"
                )
            done += len(rows)
            bar.update(len(rows))


def embed_entity_names_and_index(
    driver: Driver,
    settings: Settings,
    schema: SchemaMapping | None = None,
    embedder: Embedder | None = None,
    *,
    batch_size: int = 256,
    progress: bool = False,
) -> EntityNamesReport:
    """``embed_entity_names``, then make sure the taggers' vector index exists (created with
    the configured name, or the one already over the name embeddings reused) and is recorded
    on an adopted graph."""
    schema = schema or schema_from_settings(settings)
    report = EntityNamesReport()
    report.embedded = embed_entity_names(
        driver, settings, schema, embedder, batch_size=batch_size, progress=progress
    )
    _ensure_index(driver, settings, schema, report)
    return report


def _ensure_index(
    driver: Driver, settings: Settings, schema: SchemaMapping, report: EntityNamesReport
) -> None:
    from guidedrag_graph.context import adoption_record
    from guidedrag_graph.migration.objects import live_definitions
    from guidedrag_graph.migration.run import vector_index_config
    from guidedrag_graph.migration.steps import await_indexes

    database = settings.neo4j_database
    indexes = read_query(driver, templates.query("schema_indexes"), database=database)
    wanted = settings.entity_vector_index_name
    index = vector_index_over(indexes, schema.entity_label, schema.entity_name_embedding, wanted)
    if index is not None:
        report.vector_index_name = str(index["name"])
    else:
        if any(i["name"] == wanted for i in indexes):
            raise ConfigurationError(
                f"an index named {wanted!r} exists but is not a vector index over "
                f":{schema.entity_label}({schema.entity_name_embedding}): set "
                f"GUIDEDRAG_ENTITY_VECTOR_INDEX_NAME to a free name"
            )
        ddl = templates.query(
            "entity_name_vector_index", schema, names={"entity_vector_index": wanted}
        )
        config = vector_index_config(settings, server_info(driver, database))
        driver.execute_query(ddl, {"vector_index_config": config}, database_=database)
        await_indexes(driver, database, 600)
        report.vector_index_name = wanted
        report.vector_index_created = True
    record = adoption_record(driver, database)
    if not record:
        if report.vector_index_name != wanted:
            report.notes.append(
                f"the name embeddings are indexed by {report.vector_index_name!r}: set "
                f"GUIDEDRAG_ENTITY_VECTOR_INDEX_NAME={report.vector_index_name} for the taggers"
            )
        return
    created = [wanted] if report.vector_index_created else []
    made = live_definitions(driver, database).get(wanted) if created else None
    update = {
        "indexes": sorted(set(record.get("indexes", [])) | set(created)),
        # its definition too: `kb adopt --drop` drops it only while it still matches
        "index_definitions": sorted(
            set(record.get("index_definitions", [])) | ({made.to_json()} if made else set())
        ),
        "entity_vector_index_name": report.vector_index_name,
    }
    driver.execute_query(
        templates.query("adoption_record_write"), {"record": update}, database_=database
    )
