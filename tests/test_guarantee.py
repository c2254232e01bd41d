"""Multi-passage recall: each named entity keeps a chunk of its own in the top k."""

from __future__ import annotations

from guidedrag_graph.pipeline.guarantee import guarantee_entities
from guidedrag_graph.retrieval import RankedChunk


def _chunk(cid: str) -> RankedChunk:
    return RankedChunk(cid, None, None, cid, 0.5, 0.0, None)


def _ids(chunks: list[RankedChunk]) -> list[str]:
    return [c.id for c in chunks]


def test_a_missing_entity_takes_the_lowest_place_no_entity_needs() -> None:
    top = [_chunk(c) for c in ("a1", "x", "a2", "y")]
    a_own = [_chunk("a1"), _chunk("a2")]
    b_own = [_chunk("b1"), _chunk("b2")]
    assert _ids(guarantee_entities(top, [a_own, b_own], 4)) == ["a1", "x", "a2", "b1"]
    # when the lowest place is the only chunk of an entity, the next one up gives way
    top = [_chunk(c) for c in ("x", "y", "a1")]
    assert _ids(guarantee_entities(top, [[_chunk("a1")], b_own], 3)) == ["x", "b1", "a1"]


def test_nothing_changes_when_every_entity_is_there_or_has_no_chunk() -> None:
    top = [_chunk(c) for c in ("a1", "b2", "x")]
    assert _ids(guarantee_entities(top, [[_chunk("a1")], [_chunk("b1"), _chunk("b2")], []], 3)) == [
        "a1",
        "b2",
        "x",
    ]
    # a short ranking grows instead of losing a chunk
    assert _ids(guarantee_entities([_chunk("x")], [[_chunk("b1")]], 3)) == ["x", "b1"]
