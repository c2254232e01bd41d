"""Emptying a KB (``guidedrag kb wipe``, ``guidedrag eval --reload``): only what the loader made.

The loader gives every node it CREATEs the ``:__GuidedRAGLoaded`` label (``LOADED_LABEL``; the
bulk importer writes it too) and never gives it to a node a MERGE found. A label, not a
property: retrieval matches by the mapped labels and reads named properties, so an extra label
changes no result, costs nothing per row at load time (a label on the node record), and a label
scan finds exactly the KB's nodes when wiping. Deleting those nodes (``DETACH``) takes their
relationships with them. A relation the loader drew between two entities it did not create
carries the mark as a property instead (``cypher/load_relations.cypher``; a KB's own relations
never do) and is deleted next. Everything else stays: another tool's ``:Chunk`` / ``:Entity``
nodes beside the KB, a user's entity or document a bundle merged onto, and a KB loaded before
the label existed — those are counted and reported (``WipeReport.left``), and only
``everything=True`` (``kb wipe --force``) deletes every node with the mapped labels.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from neo4j import Driver, RoutingControl

from guidedrag_graph.config import Settings
from guidedrag_graph.db.fit import LOADED_LABEL
from guidedrag_graph.schema.presets import SchemaMapping
from guidedrag_graph.templates import queries as templates

__all__ = ["LOADED_LABEL", "WipeReport", "left_after_wipe", "wipe_kb"]


@dataclass
class WipeReport:
    """Nodes and relations deleted, and the chunk/document/entity nodes left because the loader
    did not create them (``left``: kind -> count; all 0 after ``everything=True``)."""

    deleted: int = 0
    relations_deleted: int = 0
    left: dict[str, int] = field(default_factory=dict)

    @property
    def left_total(self) -> int:
        return sum(self.left.values())

    def left_note(self) -> str | None:
        """One line on what stayed and why, or None when nothing did."""
        if not self.left_total:
            return None
        what = ", ".join(f"{n} {kind}" for kind, n in self.left.items() if n)
        return (
            f"left {what} that guidedrag's loader did not create (no :{LOADED_LABEL} label: "
            f"another tool's or your own nodes, a node a bundle merged onto, or a KB loaded by a "
            f"guidedrag version before the label); `guidedrag kb wipe --force` deletes every "
            f"node with these labels"
        )


def _delete_all(driver: Driver, database: str, query: str) -> int:
    deleted = 0
    while True:
        records, _, _ = driver.execute_query(query, database_=database)
        n = int(records[0]["deleted"])
        deleted += n
        if n == 0:
            return deleted


def left_after_wipe(driver: Driver, settings: Settings, schema: SchemaMapping) -> dict[str, int]:
    """The chunk, document and entity nodes a default wipe leaves (no ``LOADED_LABEL``)."""
    records, _, _ = driver.execute_query(
        templates.query("kb_wipe_left", schema),
        database_=settings.neo4j_database,
        routing_=RoutingControl.READ,
    )
    return {k: int(records[0][k]) for k in ("chunks", "documents", "entities")}


def wipe_kb(
    driver: Driver, settings: Settings, schema: SchemaMapping, *, everything: bool = False
) -> WipeReport:
    """Delete the nodes the loader created (``everything``: every chunk, document and entity).

    Migrations and indexes stay. Runs in 5000-node transactions until nothing is left to delete.
    """
    database = settings.neo4j_database
    report = WipeReport()
    report.deleted = _delete_all(driver, database, templates.fragment("kb_wipe", "loaded", schema))
    relations = templates.fragment("kb_wipe", "relations", schema)
    report.relations_deleted = _delete_all(driver, database, relations)
    if everything:
        for part in ("chunks", "documents", "entities"):
            query = templates.fragment("kb_wipe", part, schema)
            report.deleted += _delete_all(driver, database, query)
    report.left = left_after_wipe(driver, settings, schema)
    return report
