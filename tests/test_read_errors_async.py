"""The async runner fails like ``read_query``: one classifier (``db/read_errors.py``) turns a
server-side timeout and a server that stays down into the same one-line errors for a read on a
``neo4j.AsyncDriver`` as for one on a ``neo4j.Driver`` (the sync side: test_selection_hardening_db,
test_security_inputs). Real Neo4j; a closed port for the down server."""

from __future__ import annotations

import asyncio

import pytest
from neo4j import AsyncGraphDatabase

from guidedrag_graph.config import Settings
from guidedrag_graph.db import connection
from guidedrag_graph.db.reads import Read, bridged, open_async_driver, read
from guidedrag_graph.errors import DatabaseUnavailableError, QueryTimeoutError
from tests.conftest import free_port
from tests.test_selection_hardening_db import SLOW


def _read_async(driver_of: object, query: str, timeout: float | None = None) -> None:
    async def run() -> None:
        driver = driver_of() if callable(driver_of) else driver_of
        try:
            await bridged(read, driver, Read("probe", query, {}), database="neo4j", timeout=timeout)
        finally:
            await driver.close()

    asyncio.run(run())


def test_an_async_read_past_its_timeout_is_the_timeout_line(settings: Settings) -> None:
    with pytest.raises(QueryTimeoutError, match=r"^Neo4j stopped the query after 1 s \(GUIDE"):
        _read_async(lambda: open_async_driver(settings), SLOW, timeout=1.0)


def test_an_async_read_on_a_down_server_is_the_down_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """The retry time is ``connection.READ_RETRY_S`` for both runners (one rule)."""
    monkeypatch.setattr(connection, "READ_RETRY_S", 0.5)
    port = free_port()
    with pytest.raises(DatabaseUnavailableError, match=r"^Neo4j is down \(Service") as caught:
        _read_async(
            lambda: AsyncGraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=("neo4j", "x")),
            "RETURN 1 AS one",
        )
    assert "guidedrag neo4j start" in str(caught.value)
    assert "\n" not in str(caught.value)
