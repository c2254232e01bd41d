"""Scale benchmark (placeholder, filled in below)."""

from __future__ import annotations

from neo4j import Driver


def wipe(driver: Driver) -> None:
    """Delete every node, constraint and index but the token lookups (benchmark databases only)."""
    while driver.execute_query(
        "MATCH (n) WITH n LIMIT 20000 DETACH DELETE n RETURN count(*) AS n"
    ).records[0]["n"]:
        pass
    for r in driver.execute_query("SHOW CONSTRAINTS YIELD name").records:
        driver.execute_query(f"DROP CONSTRAINT `{r['name']}` IF EXISTS")
    for r in driver.execute_query(
        "SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name"
    ).records:
        driver.execute_query(f"DROP INDEX `{r['name']}` IF EXISTS")
