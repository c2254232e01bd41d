"""Random unit vectors written as bare chunks, and the exact top k they should rank as
(retrieval and planner tests)."""

from __future__ import annotations

import numpy as np
from neo4j import Driver

DIM = 384


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def write_chunks(driver: Driver, vectors: dict[str, np.ndarray]) -> None:
    rows = [{"id": cid, "embedding": [float(x) for x in v]} for cid, v in vectors.items()]
    driver.execute_query(
        "MERGE (d:Document {id: 'doc'}) SET d.title = 'Test document' "
        "WITH d UNWIND $rows AS row "
        "CREATE (c:Chunk {id: row.id, text: 'text of ' + row.id, document_id: 'doc'}) "
        "SET c.embedding = row.embedding CREATE (c)-[:PART_OF]->(d)",
        rows=rows,
    )
    driver.execute_query("CALL db.awaitIndexes(120)")


def numpy_top(
    vectors: dict[str, np.ndarray], ids: list[str], query: np.ndarray, k: int
) -> list[str]:
    scored = sorted(ids, key=lambda cid: -float(vectors[cid] @ query))
    return scored[:k]
