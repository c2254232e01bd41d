"""Our compiler for neo4j-graphrag's filter syntax (retrieval/filters.py): the exact condition it
writes, one-line errors on bad input, and — against the real Neo4j — filters restricting the
candidates at any size, under auto (the universe of the tiers) and hard (the selection narrowed).
"""

from __future__ import annotations

from typing import Any

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.retrieval.filters import FilterError, compile_filter
from guidedrag_graph.semantics import Semantics
from tests.conftest import sample_bundle


@pytest.mark.parametrize(
    ("filters", "condition", "params"),
    [
        ({"position": 2}, "c.`position` = $flt_0", {"flt_0": 2}),
        ({"position": {"$LTE": 2}}, "c.`position` <= $flt_0", {"flt_0": 2}),
        (
            {"position": {"$between": [1, 3]}},
            "$flt_0 <= c.`position` <= $flt_1",
            {"flt_0": 1, "flt_1": 3},
        ),
        ({"id": {"$nin": ["a", "b"]}}, "NOT c.`id` IN $flt_0", {"flt_0": ["a", "b"]}),
        ({"text": {"$ilike": "Rome%"}}, "toLower(c.`text`) CONTAINS $flt_0", {"flt_0": "rome"}),
        (
            {"a": 1, "$or": [{"b": True}, {"c": {"$ne": "x"}}]},
            "(c.`a` = $flt_0) AND ((c.`b` = $flt_1) OR (c.`c` <> $flt_2))",
            {"flt_0": 1, "flt_1": True, "flt_2": "x"},
        ),
        # a hostile key stays one quoted property name
        (
            {"id` IS NOT NULL OR true //": "x"},
            "c.`id`` IS NOT NULL OR true //` = $flt_0",
            {"flt_0": "x"},
        ),
    ],
)
def test_the_condition_it_writes(
    filters: dict[str, Any], condition: str, params: dict[str, Any]
) -> None:
    compiled = compile_filter(filters)
    assert compiled.condition == condition
    assert compiled.params == params


def _deep(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = {"a": 1}
    for _ in range(levels):
        node = {"$and": [node]}
    return node


@pytest.mark.parametrize(
    ("filters", "message"),
    [
        ({"x": {"$in": 5}}, "takes a list of values, got int"),
        ({1: 2}, "has a key of type int"),
        (_deep(900), "nests deeper than"),
        ({"x": None}, "a value must be a string, number or boolean"),
        ({"x": {"$gt": float("nan")}}, "not a finite number"),
        ({"x": {"$regex": "a"}}, "unknown operator '$regex'"),
        ({"x": {"$lt": 1, "$gt": 0}}, "exactly one operator"),
        ({"$and": {"x": 1}}, "non-empty list"),
        ({"$gt": 1}, "where a property name or $and/$or belongs"),
        ({"x": {"$between": [1]}}, "takes [low, high]"),
        ({"x": {"$like": 3}}, "takes a string"),
        ([1, 2], "must be an object"),
        ({}, "empty object"),
    ],
)
def test_bad_filters_are_one_line_errors(filters: Any, message: str) -> None:
    with pytest.raises(FilterError, match=message.replace("[", r"\[").replace("$", r"\$")) as err:
        compile_filter(filters)
    assert "\n" not in str(err.value) and len(str(err.value)) < 400


@pytest.mark.neo4j
def test_filters_restrict_the_candidates_at_any_size(
    sample_db: Driver, settings: Settings, embedder: Embedder
) -> None:
    """A filter matching more chunks than GUIDEDRAG_MAX_LIST never travels as ids: it is a term
    of the query, under auto (U of the tiers) and under hard (the selection narrowed)."""
    question = next(q for q in sample_bundle().questions if q.answerable)
    small = settings.model_copy(update={"max_list": 10})
    every_chunk = sample_db.execute_query("MATCH (c:Chunk) RETURN count(c) AS n").records[0]["n"]
    wide = {"id": {"$like": "mq-"}}  # every chunk of the sample KB
    odd = {"$or": [{"id": {"$like": "1"}}, {"id": {"$like": "3"}}]}
    passing = {
        r["id"]
        for r in sample_db.execute_query(
            "MATCH (c:Chunk) WHERE c.id CONTAINS '1' OR c.id CONTAINS '3' RETURN c.id AS id"
        ).records
    }
    assert 10 < len(passing) < every_chunk
    with GuidedRAG(small, driver=sample_db, embedder=embedder) as rag:
        semantics = question.semantics
        plain = rag.retrieve(question.question, semantics=semantics, k=5)
        everything = rag.retrieve(question.question, semantics=semantics, k=5, filters=wide)
        assert [c.id for c in everything.chunks] == [c.id for c in plain.chunks]
        assert everything.tier_sizes["U"] == every_chunk
        narrowed = rag.retrieve(question.question, semantics=semantics, k=5, filters=odd)
        assert narrowed.steering == "auto" and narrowed.tier_sizes["U"] == len(passing)
        assert len(narrowed.chunks) == 5 and {c.id for c in narrowed.chunks} <= passing
        bare = rag.retrieve(question.question, k=5, filters=odd, link=False)
        assert len(bare.chunks) == 5 and {c.id for c in bare.chunks} <= passing
        hard = rag.retrieve(
            question.question,
            semantics=Semantics(entities=semantics.entities),
            k=5,
            filters=odd,
            steering="hard",
        )
        assert hard.steering == "hard" and {c.id for c in hard.chunks} <= passing
