"""What belongs to the KB is held once per process and driver (``context.KBState``), so a new
``GuidedRAG`` on a warm driver starts warm (issue 36, item 1): its first question asks Neo4j
what a warm instance's would, plus the one read every ``open`` makes. A write between opens is
seen by the next instance at once, as it was when the state was built per instance."""

from __future__ import annotations

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.semantics import Semantics
from tests.probes import CountingDriver

pytestmark = pytest.mark.neo4j

ADA = Semantics(entities=("Ada Lovelace",))
BARE = "Where was Ada Lovelace born?"


def _asked(counting: CountingDriver, call: object) -> list[str]:
    """The queries ``call()`` sent."""
    before = len(counting.queries)
    call()  # type: ignore[operator]
    return counting.queries[before:]


def test_a_new_instance_on_a_warm_driver_asks_only_what_a_warm_one_asks(
    tiny_kb: Driver, settings: Settings, embedder: Embedder
) -> None:
    counting = CountingDriver(tiny_kb)
    first = GuidedRAG(settings, driver=counting, embedder=embedder)  # type: ignore[arg-type]
    cold = _asked(counting, lambda: first.retrieve(BARE)) + _asked(
        counting, lambda: first.retrieve(BARE, semantics=ADA)
    )
    warm = _asked(counting, lambda: first.retrieve(BARE)) + _asked(
        counting, lambda: first.retrieve(BARE, semantics=ADA)
    )
    assert len(cold) > len(warm) + 2, "the first instance had nothing to build"

    opened = _asked(counting, lambda: GuidedRAG(settings, driver=counting, embedder=embedder))  # type: ignore[arg-type]
    fresh = GuidedRAG(settings, driver=counting, embedder=embedder)  # type: ignore[arg-type]
    new = _asked(counting, lambda: fresh.retrieve(BARE)) + _asked(
        counting, lambda: fresh.retrieve(BARE, semantics=ADA)
    )
    assert len(opened) == 1, opened  # the adoption record, whose bookmark is the KB's version
    assert new == warm
    assert fresh.graph.data is first.graph.data
    again = fresh.retrieve(BARE)
    assert [c.id for c in again.chunks] == [c.id for c in first.retrieve(BARE).chunks]


def test_other_settings_or_another_driver_hold_their_own_state(
    tiny_kb: Driver, settings: Settings, embedder: Embedder
) -> None:
    one = GuidedRAG(settings, driver=tiny_kb, embedder=embedder)
    same = GuidedRAG(settings.model_copy(), driver=tiny_kb, embedder=embedder)
    other = GuidedRAG(
        settings.model_copy(update={"resolution_cache_s": 7.0}), driver=tiny_kb, embedder=embedder
    )
    wrapped = GuidedRAG(settings, driver=CountingDriver(tiny_kb), embedder=embedder)  # type: ignore[arg-type]
    assert same.graph.data is one.graph.data  # equal settings share
    assert other.graph.data is not one.graph.data
    assert wrapped.graph.data is not one.graph.data


def test_a_write_between_opens_is_seen_by_the_next_instance(
    tiny_kb: Driver, settings: Settings, embedder: Embedder
) -> None:
    question = "Who was Grace Hopper?"
    try:
        before = GuidedRAG(settings, driver=tiny_kb, embedder=embedder)
        assert not before.retrieve(question).linked  # the link index is now held, without her
        tiny_kb.execute_query(
            "MATCH (c:Chunk {id: 'ada-1'}) "
            "CREATE (c)-[:MENTIONS]->(:Entity {id: 'grace', name: 'Grace Hopper', "
            "name_key: 'grace hopper', aliases: [], alias_keys: []})"
        )
        after = GuidedRAG(settings, driver=tiny_kb, embedder=embedder)
        linked = after.retrieve(question).linked
        assert [n["entity"] for n in linked] == ["Grace Hopper"], linked
        assert after.graph.data is before.graph.data  # the same state, its answers forgotten
    finally:
        tiny_kb.execute_query("MATCH (e:Entity {id: 'grace'}) DETACH DELETE e")
