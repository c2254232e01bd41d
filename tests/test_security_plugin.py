"""Issue 22 for the rank plugin: a NaN query or stored vector is an error (pure Cypher raises; an
empty ranking would read as "nothing matches"), rankTiers refuses weights and options that mean
nothing, and the plugin's loops end when the transaction is terminated (TerminationGuard)."""

from __future__ import annotations

import time

import pytest
from neo4j import Driver
from neo4j.exceptions import ClientError

from guidedrag_graph.db.connection import read_query
from guidedrag_graph.errors import QueryTimeoutError

RANK = (
    "MATCH (c:Chunk) WITH collect(c) AS cs "
    "CALL guidedrag.rank(cs, 'embedding', $q, 2) YIELD node RETURN node.id AS id"
)
TIERS = (
    "MATCH (c:Chunk) WITH collect(c) AS cs "
    "CALL guidedrag.rankTiers([cs], $weights, cs, 'embedding', [1.0, 0.0], 2, $options) "
    "YIELD node RETURN node.id AS id"
)


def write(driver: Driver, vectors: dict[str, list[float]]) -> None:
    driver.execute_query(
        "UNWIND $rows AS row CREATE (:Chunk {id: row.id, embedding: row.v})",
        rows=[{"id": k, "v": v} for k, v in vectors.items()],
    )


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_a_non_finite_query_vector_is_an_error(migrated_db: Driver, bad: float) -> None:
    write(migrated_db, {"a": [1.0, 0.0], "b": [0.0, 1.0]})
    with pytest.raises(ClientError, match=r"queryVector holds .* at 1; pass finite floats"):
        migrated_db.execute_query(RANK, q=[1.0, bad])
    with pytest.raises(ClientError, match="queryVector holds"):
        migrated_db.execute_query(
            TIERS.replace("[1.0, 0.0]", "$q"), q=[bad, 1.0], weights=[0.1], options={}
        )


@pytest.mark.parametrize("cache", [True, False])
def test_a_non_finite_stored_vector_is_an_error(migrated_db: Driver, cache: bool) -> None:
    write(migrated_db, {"a": [1.0, 0.0], "b": [float("nan"), 1.0]})
    query = RANK.replace("2)", f"2, {{cache: {str(cache).lower()}}})")
    for _ in range(2):  # the second call may read the cache
        with pytest.raises(ClientError, match="holds NaN or infinity; re-embed that node"):
            migrated_db.execute_query(query, q=[1.0, 0.0])
    # ... as pure Cypher does (it does not rank silently around it)
    assert migrated_db.execute_query(RANK, q=[0.0, 0.0]).records == []  # zero query: empty


@pytest.mark.parametrize(
    ("weights", "options", "why"),
    [
        ([float("nan")], {}, "weight 0 is NaN"),
        ([-0.1], {}, "weight 0 is -0.1"),
        ([None], {}, "weight 0 is null"),
        ([float("inf")], {}, "weight 0 is Infinity"),
        ([0.1], {"exactMax": -1}, "exactMax and uK must be >= 0, got -1"),
        ([0.1], {"uK": -5}, "got .* and -5"),
    ],
)
def test_rank_tiers_refuses_weights_and_options_that_mean_nothing(
    migrated_db: Driver, weights: list[float | None], options: dict[str, int], why: str
) -> None:
    write(migrated_db, {"a": [1.0, 0.0], "b": [0.0, 1.0]})
    with pytest.raises(ClientError, match=why):
        migrated_db.execute_query(TIERS, weights=weights, options=options)
    assert len(migrated_db.execute_query(TIERS, weights=[0.0], options={}).records) == 2


def test_the_plugin_loop_stops_at_the_transaction_timeout(migrated_db: Driver) -> None:
    """200,000 store reads of a 4,096-d vector (cache off: ~30 s on the loaded test machine)
    end at the 1 s timeout: the loop checks the TerminationGuard."""
    migrated_db.execute_query(
        "CREATE (:Chunk {id: 'a', embedding: [i IN range(1, 4096) | toFloat(i)]})"
    )
    query = (
        "MATCH (c:Chunk {id: 'a'}) WITH c, [i IN range(1, 200000) | c] AS cs "
        "CALL guidedrag.rank(cs, 'embedding', c.embedding, 1, {cache: false}) "
        "YIELD node RETURN count(node) AS n"
    )
    started = time.monotonic()
    with pytest.raises(QueryTimeoutError):
        read_query(migrated_db, query, database="neo4j", timeout=1.0)
    elapsed = time.monotonic() - started
    assert elapsed < 8, f"the plugin ran {elapsed:.1f} s past a 1 s timeout"
