"""A new instance on a warm driver opens without a read and its first call checks the warm
state it trusted (``pipeline/first_call.py``): a write made between two opens is seen by the
second instance's first call, even one that would read nothing at all (an empty scope, kept).
Real Neo4j (the tiny KB)."""

from __future__ import annotations

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.pipeline import GuidedRAG
from tests.probes import CountingDriver

pytestmark = pytest.mark.neo4j

SCOPE = "document('Grace Hopper')"  # no such document yet: the scope holds nothing
QUESTION = "Who was Grace Hopper?"


def test_a_write_between_two_opens_is_seen_by_a_first_call_that_reads_nothing(
    tiny_kb: Driver, settings: Settings, embedder: Embedder
) -> None:
    counting = CountingDriver(tiny_kb)  # a driver of its own: a state of its own
    try:
        before = GuidedRAG(settings, driver=counting, embedder=embedder, scope=SCOPE)  # type: ignore[arg-type]
        empty = before.retrieve(QUESTION)
        assert empty.abstained and empty.empty is not None
        assert empty.empty.kind == "empty_scope"
        kept = len(counting.queries)
        assert before.retrieve(QUESTION).abstained and len(counting.queries) == kept  # kept
        tiny_kb.execute_query(
            "MATCH (a:Chunk {id: 'ada-1'}) "
            "CREATE (d:Document {id: 'd-grace', title: 'Grace Hopper'}) "
            "CREATE (c:Chunk {id: 'grace-1', text: 'Grace Hopper wrote the first compiler.', "
            "  position: 0, embedding: a.embedding})-[:PART_OF]->(d)"
        )
        after = GuidedRAG(settings, driver=counting, embedder=embedder, scope=SCOPE)  # type: ignore[arg-type]
        assert len(counting.queries) == kept, "an open on a warm driver sent a read"
        assert after.graph.data is before.graph.data
        found = after.retrieve(QUESTION)
        assert not found.abstained, found.empty
        assert [c.id for c in found.chunks] == ["grace-1"]
    finally:
        tiny_kb.execute_query("MATCH (n) WHERE n.id IN ['d-grace', 'grace-1'] DETACH DELETE n")
