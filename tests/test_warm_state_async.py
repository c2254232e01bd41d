"""The warm state is shared on an ``AsyncDriver`` too (``GuidedRAG.aopen``): a second instance
opened on the same async driver holds the first one's link index and answers, and a write
between opens is seen by the next instance (the version comes back through the async runner)."""

from __future__ import annotations

import asyncio

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.db.reads import open_async_driver
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.pipeline import GuidedRAG

pytestmark = pytest.mark.neo4j


def test_instances_opened_on_one_async_driver_share_the_state_and_see_a_write(
    tiny_kb: Driver, settings: Settings, embedder: Embedder
) -> None:
    question = "Who was Grace Hopper?"

    async def run() -> tuple[bool, bool, list[dict[str, str]], list[dict[str, str]]]:
        driver = open_async_driver(settings)
        try:
            first = await GuidedRAG.aopen(settings, driver=driver, embedder=embedder)
            before = (await first.aretrieve(question)).linked
            second = await GuidedRAG.aopen(settings, driver=driver, embedder=embedder)
            shared = second.graph.data is first.graph.data
            await asyncio.to_thread(
                tiny_kb.execute_query,
                "MATCH (c:Chunk {id: 'ada-1'}) "
                "CREATE (c)-[:MENTIONS]->(:Entity {id: 'grace', name: 'Grace Hopper', "
                "name_key: 'grace hopper', aliases: [], alias_keys: []})",
            )
            third = await GuidedRAG.aopen(settings, driver=driver, embedder=embedder)
            after = (await third.aretrieve(question)).linked
            return shared, third.graph.data is first.graph.data, before, after
        finally:
            await driver.close()

    try:
        shared, still_shared, before, after = asyncio.run(run())
    finally:
        tiny_kb.execute_query("MATCH (e:Entity {id: 'grace'}) DETACH DELETE e")
    assert shared and still_shared
    assert not before
    assert [n["entity"] for n in after] == ["Grace Hopper"], after
