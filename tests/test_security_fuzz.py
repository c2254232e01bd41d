"""The identifier fuzz, short form: 1,000 hostile names through every identifier source,
rendered (no server), and a representative subset against the real server with the sample KB:
0 writes, 0 schema changes, 0 outbound requests, every refusal one line.

The long form is ``python scripts/security_fuzz.py --names N`` (docs/security.md).
"""

from __future__ import annotations

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from tests.security import hostile_names, listener
from tests.security_fuzz import compile_fuzz, db_fuzz

SOURCES = {"mapping", "setting", "db_type", "db_key"}


def test_a_thousand_hostile_names_render_safely_or_are_refused_in_one_line() -> None:
    names = hostile_names(1_000)
    assert len(set(names)) == 1_000
    assert any("\\u0060" in n for n in names) and any("\uff40" in n for n in names)
    assert any("\x00" in n for n in names) and any("\u202e" in n for n in names)
    assert any("\ud800" <= c <= "\udfff" for n in names for c in n)
    assert any(len(n) >= 65_536 for n in names) and any("LOAD CSV" in n for n in names)
    figures = compile_fuzz(names)
    assert figures.failures == []
    for source in SOURCES:
        assert figures.accepted[source] + figures.refused[source] == 1_000
    # Every source both accepts odd names and refuses impossible ones: both paths are exercised.
    assert all(figures.accepted[s] > 0 and figures.refused[s] > 0 for s in SOURCES)
    assert figures.renders > 5_000


def _subset(names: list[str], n: int) -> list[str]:
    """Every class of the corpus: the hand-written names first, then an even spread."""
    head = names[: n // 2]
    rest = names[40:]
    step = max(1, len(rest) // max(1, n - len(head)))
    return (head + rest[::step])[:n]


@pytest.mark.neo4j
def test_hostile_names_against_the_server_change_nothing_and_send_nothing(
    own_sample_db: Driver, settings: Settings
) -> None:
    vector = own_sample_db.execute_query(
        "MATCH (c:Chunk) RETURN c.embedding AS v ORDER BY c.id LIMIT 1"
    ).records[0]["v"]
    with listener() as seen:
        names = _subset(hostile_names(1_000, url=seen.url), 30)
        figures = db_fuzz(own_sample_db, settings, names, seen.requests, [float(x) for x in vector])
    assert figures.failures == []
    assert (figures.writes, figures.schema_changes, figures.outbound) == (0, 0, 0)
    assert seen.requests == []
    for source in SOURCES:
        assert figures.accepted[source] + figures.refused[source] == len(names), source
    assert figures.accepted["db_type"] > 20 and figures.accepted["db_key"] > 20
