"""Every query of a retrieval passes the one read function (``reader.read``), which logs at DEBUG
its template's name, its parameters (vectors elided) and its time, on the sync and async paths.

Real Neo4j, the sample KB; a fresh ``GuidedRAG`` so server facts, the link index and name
resolution are read too.
"""

from __future__ import annotations

import asyncio
import logging
import re

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.pipeline import GuidedRAG
from tests.probes import CountingDriver

pytestmark = pytest.mark.neo4j

QUESTION = "What currency predated the Euro in the country Signmark is from?"
LINE = re.compile(r"^read (\w+) \{.*\} in \d+\.\d\d ms: \d+ rows$")


def _lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "guidedrag_graph.db.reads"]


def test_every_read_of_a_retrieval_is_logged_once(
    sample_db: Driver,
    settings: Settings,
    embedder: Embedder,
    caplog: pytest.LogCaptureFixture,
) -> None:
    driver = CountingDriver(sample_db)  # every query the server is sent, however it is sent
    vector = [float(x) for x in embedder.embed_queries([QUESTION])[0]]
    caplog.set_level(logging.DEBUG, logger="guidedrag_graph.db.reads")
    with GuidedRAG(settings, driver=driver, embedder=embedder) as rag:  # type: ignore[arg-type]
        rag.graph.data.clear()
        result = rag.retrieve(QUESTION, query_vector=vector, filters={"position": {"$gte": 0}})
        rag.retrieve(QUESTION, "entity('Signmark') | entity('Euro')", steering="soft", k=2)
    lines = _lines(caplog)
    assert len(lines) == len(driver.queries) >= 5, (lines, driver.queries)
    assert all(LINE.match(line) for line in lines), lines
    names = [LINE.match(line).group(1) for line in lines]  # type: ignore[union-attr]
    # adoption, facts, the filter's checks, linking, resolution, ranking: each named
    for name in ("adoption_settings", "property_keys", "link_index", "retrieve_boost"):
        assert name in names, names
    assert "query" not in names  # every read says which template it ran
    joined = "\n".join(lines)
    assert f"<{len(vector)} items>" in joined  # the vector is elided ...
    assert repr(vector[0]) not in joined  # ... never printed
    assert result.chunks


def test_the_async_path_logs_through_the_same_function(
    sample_db: Driver, settings: Settings, embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="guidedrag_graph.db.reads")

    async def run() -> None:
        async with await GuidedRAG.aopen(settings, embedder=embedder) as rag:
            rag.graph.data.clear()
            await rag.aretrieve(QUESTION, k=2)

    asyncio.run(run())
    lines = _lines(caplog)
    assert all(LINE.match(line) for line in lines), lines
    names = {LINE.match(line).group(1) for line in lines}  # type: ignore[union-attr]
    assert {"adoption_settings", "link_index"} <= names, names
    # the ranking read: one rankAuto call where the plugin lists it (the test servers' does)
    assert names & {"retrieve_auto", "retrieve_boost"}, names


def test_nothing_is_formatted_when_debug_is_off(
    sample_db: Driver, settings: Settings, embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="guidedrag_graph.db.reads")
    with GuidedRAG(settings, driver=sample_db, embedder=embedder) as rag:
        rag.retrieve(QUESTION, k=2)
    assert _lines(caplog) == []
