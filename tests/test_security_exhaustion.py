"""Exhaustion, short form of ``scripts/security_exhaustion.py``: 2 clients x 3 s of the worst
selections the default limits allow (200 terms of near/khop(hub, 5)) under a 2 s timeout, and a
``RETURN 1`` probe from another session. Errors are only QueryTimeoutError or the cost-bound
refusal, and every query ends within the timeout + 2 s. The long form (16 x 60 s, default
timeout) prints the figures for docs/security.md."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from neo4j import Driver, GraphDatabase

from guidedrag_graph.config import Settings
from scripts.security_exhaustion import ALLOWED, SLACK_S, run, worst_selections

pytestmark = pytest.mark.slow


@pytest.fixture
def probe_driver(settings: Settings) -> Iterator[Driver]:
    driver = GraphDatabase.driver(
        settings.neo4j_uri,
        auth=(settings.neo4j_username, settings.neo4j_password.get_secret_value()),
    )
    try:
        yield driver
    finally:
        driver.close()


def test_worst_case_selections_are_within_the_default_limits(
    sample_db: Driver, settings: Settings
) -> None:
    selections = worst_selections(sample_db, settings)
    assert len(selections) == 4
    for expr in selections:
        assert sum(1 for _ in expr.leaves()) == settings.max_terms == 200
        assert all(leaf.hops == settings.max_hop_depth == 5 for leaf in expr.leaves())


def test_short_exhaustion_run_ends_every_query_in_time_with_known_errors(
    sample_db: Driver, probe_driver: Driver, settings: Settings
) -> None:
    short = settings.model_copy(update={"query_timeout": 2.0})
    figures = run(sample_db, probe_driver, short, clients=2, seconds=3)
    assert figures.durations, "no query ran"
    assert set(figures.errors) <= ALLOWED, figures.samples
    assert figures.max_duration <= short.query_timeout + SLACK_S, figures.durations
    assert figures.probe and figures.probe_errors == 0
