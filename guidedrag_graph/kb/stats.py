"""What is in the KB (`guidedrag kb stats`): counts, relation types, empty embeddings, indexes."""

from __future__ import annotations

from typing import Any

from neo4j import Driver, RoutingControl

from guidedrag_graph.config import Settings
from guidedrag_graph.schema.presets import SchemaMapping
from guidedrag_graph.templates import queries as templates


def kb_stats(driver: Driver, settings: Settings, schema: SchemaMapping) -> dict[str, Any]:
    """Counts of the lexical graph and of entity relations, and the state of every index."""
    database = settings.neo4j_database

    def read(cypher: str) -> list[Any]:
        records, _, _ = driver.execute_query(
            cypher, database_=database, routing_=RoutingControl.READ
        )
        return records

    out: dict[str, Any] = {
        "schema_preset": schema.preset,
        "relation_mode": schema.relation_mode,
        **read(templates.query("kb_stats", schema))[0].data(),
    }
    records = read(templates.fragment("kb_stats_relations", schema.relation_mode, schema))
    out["relations"] = sum(int(r["n"]) for r in records)
    out["relation_types"] = len(records)
    out["top_relation_types"] = [{"type": r["type"], "count": r["n"]} for r in records[:10]]
    out["indexes"] = [
        {
            "name": r["name"],
            "type": r["type"],
            "state": r["state"],
            "population_percent": r["populationPercent"],
            "on": f"{','.join(r['labelsOrTypes'] or [])}({','.join(r['properties'] or [])})",
        }
        for r in read(templates.query("kb_stats_indexes"))
    ]
    return out
