"""Database states a fixture may hand out again instead of rebuilding them, but only once it has
checked that the database is exactly as the last build left it.

Rebuilding was most of the suite's setup time: ``migrated_db`` dropped and re-created every index
(two vector indexes among them) for each of its ~170 tests, and each module that asked for the
tiny KB wiped, migrated, embedded and loaded it again. A *state* here is everything a test could
observe: every index and constraint (name, kind, what it covers, its options, ONLINE), and every
node and relationship with its labels or type and all its properties. Equal states are
interchangeable; any difference, whatever a test did, means the fixture builds anew.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from neo4j import Driver

State = tuple[Any, ...]

MIGRATION_LABEL = "__GuidedRAGMigration"


def _canonical(value: Any) -> Any:
    """A hashable, order-independent form of a record value (maps become sorted item tuples)."""
    if isinstance(value, dict):
        return tuple(sorted((k, _canonical(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_canonical(v) for v in value)
    return value


def schema_state(driver: Driver) -> State:
    """Every index and constraint but the built-in token lookups, as the server describes it."""
    indexes = driver.execute_query(
        "SHOW INDEXES YIELD name, type, entityType, labelsOrTypes, properties, options, state "
        "WHERE type <> 'LOOKUP' RETURN * ORDER BY name"
    ).records
    constraints = driver.execute_query(
        "SHOW CONSTRAINTS YIELD name, type, entityType, labelsOrTypes, properties "
        "RETURN * ORDER BY name"
    ).records
    return tuple(_canonical(dict(r)) for r in indexes), tuple(
        _canonical(dict(r)) for r in constraints
    )


def graph_state(driver: Driver) -> State:
    """The schema, every node (labels, properties) and every relationship (type, properties,
    ends): the whole database, for the small KBs this is used on."""
    nodes = driver.execute_query(
        "MATCH (n) RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS props "
        "ORDER BY id"
    ).records
    rels = driver.execute_query(
        "MATCH (a)-[r]->(b) RETURN elementId(r) AS id, elementId(a) AS a, type(r) AS type, "
        "properties(r) AS props, elementId(b) AS b ORDER BY id"
    ).records
    return (
        schema_state(driver),
        tuple(_canonical(dict(r)) for r in nodes),
        tuple(_canonical(dict(r)) for r in rels),
    )


def delete_all_but_migration_records(driver: Driver) -> None:
    """Empty the database of data, keeping the schema and what ``migrate`` recorded."""
    while True:
        record = driver.execute_query(
            f"MATCH (n) WHERE NOT n:{MIGRATION_LABEL} WITH n LIMIT 10000 DETACH DELETE n "
            "RETURN count(*) AS deleted"
        ).records[0]
        if record["deleted"] == 0:
            return


class KeptStates:
    """The state each named build left on each server, to tell whether it is still there.

    ``ensure`` runs ``build`` unless the server still holds exactly what the last ``build`` of
    that name left there (``observe`` reads the state); ``builds`` counts the real builds, for
    the session summary."""

    def __init__(self) -> None:
        self._left: dict[tuple[str, str], State] = {}
        self.builds: dict[str, int] = {}

    def ensure(
        self,
        name: str,
        server: str,
        driver: Driver,
        build: Callable[[], None],
        observe: Callable[[Driver], State] = graph_state,
        *,
        before_check: Callable[[Driver], None] | None = None,
    ) -> bool:
        """True when the kept state was reused; ``before_check`` (such as deleting data the
        state does not include) runs first, and only when there is a kept state to compare."""
        key = (name, server)
        kept = self._left.get(key)
        if kept is not None:
            if before_check is not None:
                before_check(driver)
            if observe(driver) == kept:
                return True
        self._left.pop(key, None)
        build()
        self._left[key] = observe(driver)
        self.builds[name] = self.builds.get(name, 0) + 1
        return False
