"""What is in the KB (`guidedrag kb stats`): counts, relation types, empty embeddings, indexes."""

from __future__ import annotations

from typing import Any

from neo4j import Driver, RoutingControl

from guidedrag_graph.config import Settings
from guidedrag_graph.schema import SchemaMapping


def kb_stats(driver: Driver, settings: Settings, schema: SchemaMapping) -> dict[str, Any]:
    """Counts of the lexical graph and of entity relations, and the state of every index."""
    s, q = schema, schema.q
    database = settings.neo4j_database

    def one(query: str) -> Any:
        records, _, _ = driver.execute_query(
            query, database_=database, routing_=RoutingControl.READ
        )
        return records[0][0] if records else None

    doc, chunk, ent = q(s.document_label), q(s.chunk_label), q(s.entity_label)
    out: dict[str, Any] = {
        "schema_preset": s.preset,
        "relation_mode": s.relation_mode,
        "documents": one(f"MATCH (d:{doc}) RETURN count(d)"),
        "chunks": one(f"MATCH (c:{chunk}) RETURN count(c)"),
        "chunks_without_embedding": one(
            f"MATCH (c:{chunk}) WHERE c.{q(s.chunk_embedding)} IS NULL RETURN count(c)"
        ),
        "entities": one(f"MATCH (e:{ent}) RETURN count(e)"),
        "mentions": one(f"MATCH {s.mentions_pattern('c:' + chunk, 'e:' + ent)} RETURN count(*)"),
    }
    if s.relation_mode == "property":
        rel = f"(:{ent})-[r:{q(s.generic_relation_type)}]->(:{ent})"
        type_expr = f"r.{q(s.relation_type_property)}"
    else:
        rel = f"(:{ent})-[r]->(:{ent})"
        type_expr = "type(r)"
    records, _, _ = driver.execute_query(
        # Entity-to-entity only: a predicate such as "part of" may share a structural type's name.
        f"MATCH {rel} RETURN {type_expr} AS type, count(*) AS n ORDER BY n DESC, type",
        database_=database,
        routing_=RoutingControl.READ,
    )
    out["relations"] = sum(int(r["n"]) for r in records)
    out["relation_types"] = len(records)
    out["top_relation_types"] = [{"type": r["type"], "count": r["n"]} for r in records[:10]]
    indexes, _, _ = driver.execute_query(
        "SHOW INDEXES YIELD name, type, state, populationPercent, labelsOrTypes, properties "
        "WHERE type <> 'LOOKUP' RETURN name, type, state, populationPercent, labelsOrTypes, "
        "properties ORDER BY name",
        database_=database,
        routing_=RoutingControl.READ,
    )
    out["indexes"] = [
        {
            "name": r["name"],
            "type": r["type"],
            "state": r["state"],
            "population_percent": r["populationPercent"],
            "on": f"{','.join(r['labelsOrTypes'] or [])}({','.join(r['properties'] or [])})",
        }
        for r in indexes
    ]
    return out
