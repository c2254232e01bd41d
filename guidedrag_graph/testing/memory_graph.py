"""Load a reference graph into Neo4j, for differential tests, conformance suites and examples.

Kept out of the evaluator so the reference semantics itself never writes to a database: the
evaluator is what the database is checked against, this module is how the check is set up.
"""

from __future__ import annotations

import numpy as np
from neo4j import Driver

from guidedrag_graph.schema.presets import SchemaMapping, name_key
from guidedrag_graph.selection.evaluator import DocumentRec, EntityRec, InMemoryGraph
from guidedrag_graph.templates import queries as templates
from guidedrag_graph.testing.builders_corpus import DOCUMENTS, extract


def load_graph(
    graph: InMemoryGraph, driver: Driver, schema: SchemaMapping, database: str | None = None
) -> None:
    """Write ``graph`` with ``schema``'s names (types or property relation mode), through
    ``cypher/memory_graph_load.cypher``."""
    rows: dict[str, tuple[str, list[dict[str, object]]]] = {
        "documents": (
            "docs",
            [
                {"id": d.id, "title": d.title, "source": d.source, "date": d.date}
                for d in graph.documents.values()
            ],
        ),
        "chunks": ("chunks", [{"id": c, "doc": d} for c, d in graph.chunks.items()]),
        "entities": ("entities", [_entity_row(e) for e in graph.entities.values()]),
        "mentions": ("rows", [{"c": c, "e": e} for c, e in sorted(graph.mentions)]),
    }
    for part, (parameter, values) in rows.items():
        query = templates.fragment("memory_graph_load", part, schema)
        driver.execute_query(query, {parameter: values}, database_=database)
    _load_relations(graph, driver, schema, database)


def _load_relations(
    graph: InMemoryGraph, driver: Driver, schema: SchemaMapping, database: str | None
) -> None:
    by_type: dict[str, list[dict[str, str]]] = {}
    for head, rtype, tail in sorted(graph.relations):
        by_type.setdefault(rtype, []).append({"h": head, "t": tail, "type": rtype})
    for rtype, rows in by_type.items():
        if schema.relation_mode == "types":
            relation = templates.Relation((rtype,), "out")
            query = templates.fragment("memory_graph_load", "relations", schema, relation=relation)
        else:
            query = templates.fragment("memory_graph_load", "relations_property", schema)
        driver.execute_query(query, {"rows": rows}, database_=database)


def _entity_row(e: EntityRec) -> dict[str, object]:
    return {
        "id": e.id,
        "name": e.name,
        "key": name_key(e.name),
        "aliases": list(e.aliases),
        "alias_keys": [name_key(a) for a in e.aliases],
        "type": e.type,
    }


def write_embeddings(
    vectors: dict[str, np.ndarray],
    driver: Driver,
    schema: SchemaMapping,
    database: str | None = None,
) -> None:
    """Set each chunk's vector (ids as ``load_graph`` wrote them)."""
    rows = [{"id": c, "embedding": [float(x) for x in v]} for c, v in sorted(vectors.items())]
    query = templates.fragment("memory_graph_load", "embeddings", schema)
    driver.execute_query(query, {"rows": rows}, database_=database)


def corpus_graph() -> InMemoryGraph:
    """The KG-builder corpus (``builders_corpus``) as our loader would hold it: one document and
    one chunk per paragraph, the entities each names, the relations between those."""
    graph = InMemoryGraph()
    for i, (title, text) in enumerate(DOCUMENTS.items()):
        doc, chunk = f"d{i}", f"c{i}"
        graph.documents[doc] = DocumentRec(doc, title, "corpus")
        graph.chunks[chunk] = doc
        found = extract(text)
        for name, kind in found.entities:
            key = name_key(name)
            graph.entities[key] = EntityRec(key, name, type=kind)
            graph.mentions.add((chunk, key))
        graph.relations |= {(name_key(h), r, name_key(t)) for h, r, t in found.relations}
    return graph
