"""A property scope's predicate inside the vector index's SEARCH (issue 35, deliverable 3;
docs/security.md "Which path ranks inside it"), against numpy's exact ranking of the scope.

Where the scope is a property filter alone and a conjunction the SEARCH's WHERE takes, on
properties the chunk index declares (recreated here WITH [c.id, c.document_id]), auto's U comes
from a SEARCH filtered by that predicate (``retrieve_boost`` ``scope=property``), not by the list
of in-scope ids; it must return the same ids (numpy's exact top k inside the scope). A predicate
the SEARCH does not take, or a property the index does not declare, keeps the id-list path.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.retrieval.scope_predicate import search_properties
from guidedrag_graph.schema.presets import PRESETS
from guidedrag_graph.selection.evaluator import evaluate_tiers
from guidedrag_graph.semantics import Semantics
from guidedrag_graph.steering.tiers import plan_auto
from guidedrag_graph.testing.retrieval_conformance import snapshot
from tests.test_scope_index import (
    EXACT_MAX,
    INDEX_WITH_ID,
    QUESTIONS,
    SIZES,
    _exact_top,
    _scope,
    rebuilt_index,
)

INDEX_WITH_DOCUMENT = INDEX_WITH_ID.replace("WITH [c.id]", "WITH [c.id, c.document_id]")
BY_PREDICATE = "the SEARCH filtered by its property predicate"
BY_IDS = "the SEARCH filtered by their ids"


@pytest.mark.parametrize(
    ("filters", "want"),
    [
        ({"tenant": "acme"}, {"tenant"}),
        ({"tenant": {"$in": ["a", "b"]}, "year": {"$between": [2000, 2010]}}, {"tenant", "year"}),
        ({"$and": [{"year": {"$gt": 1}}, {"year": {"$lte": 9}}]}, {"year"}),
        ({"$and": [{"year": {"$gt": 1}}, {"year": {"$gte": 2}}]}, None),  # two lower bounds
        ({"$and": [{"tenant": "a"}, {"tenant": "b"}]}, None),  # two exact values
        ({"$or": [{"tenant": "a"}, {"tenant": "b"}]}, None),
        ({"$or": [{"tenant": "a"}, {"year": 1}]}, None),
        ({"year": 1, "$or": [{"tenant": "a"}]}, None),
        ({"tenant": {"$ne": "a"}}, None),
        ({"tenant": {"$nin": ["a"]}}, None),
        ({"title": {"$like": "Eu%"}}, None),
    ],
)
def test_which_predicates_the_search_takes(filters: dict[str, Any], want: set[str] | None) -> None:
    """Neo4j's rules (checked on 2026.08.1): ANDed property predicates, per property one exact
    value or one range."""
    got = search_properties(filters)
    assert got == (None if want is None else frozenset(want))


@pytest.fixture
def tuned(settings: Settings) -> Settings:
    return settings.model_copy(update={"planner_exact_max": EXACT_MAX, "rank_plugin": "off"})


@pytest.fixture
def declared(own_sample_db: Driver, tuned: Settings) -> Iterator[GuidedRAG]:
    """The sample KB's chunk index recreated WITH [c.id, c.document_id], seen through a new
    driver (server facts are kept per driver). Afterwards the database is wiped, so the next
    own_sample_db reader reloads the KB as it was: an index recreated over loaded chunks has the
    same declaration but another HNSW graph, and ``test_scope_index``'s filtered-SEARCH rows
    differ on it (seen: its bare auto at 300 chunks, the 5th id)."""
    yield from rebuilt_index(own_sample_db, tuned, INDEX_WITH_DOCUMENT)


def _auto(rag: GuidedRAG, scope: dict[str, Any], question: int, snap: Any, among: set[str]):
    """auto with the question's entities inside ``scope``; and numpy's ids for it."""
    query = np.random.default_rng(question).normal(size=384)
    semantics = Semantics(entities=QUESTIONS[question].semantics.entities)
    expr = plan_auto(semantics, rag.policy.tier_weights(semantics)).boost()
    assert expr is not None
    tiers = evaluate_tiers(expr, snap.graph, hop_cap=rag.settings.hop_cap)
    boosts = {c: w for c, (w, _) in tiers.items()}
    result = rag.scoped(scope).retrieve(
        "q", semantics=semantics, k=5, query_vector=[float(x) for x in query], link=False
    )
    return result, _exact_top(snap, query, boosts, among)


@pytest.mark.neo4j
def test_a_property_scope_on_a_declared_property_ranks_by_its_predicate_in_the_index(
    declared: GuidedRAG, own_sample_db: Driver
) -> None:
    rag = declared
    snap = snapshot(own_sample_db, rag.settings.neo4j_database, PRESETS["guidedrag"])
    checked = 0
    for question in range(len(QUESTIONS)):
        for size in SIZES:
            scope, among = _scope(question, size)
            result, want = _auto(rag, scope, question, snap, among)
            got = [c.id for c in result.chunks]
            assert set(got) <= among, (question, size, "a chunk outside the scope")
            assert got == want, (question, size, result.notes)
            assert any(BY_PREDICATE in n for n in result.notes), result.notes
            assert "WHERE c.`document_id` IN $scpf_0" in result.cypher
            assert "universe_ids" not in result.cypher  # no id list for U's SEARCH
            checked += 1
    assert checked == len(QUESTIONS) * len(SIZES)


@pytest.mark.neo4j
def test_a_predicate_the_search_cannot_take_keeps_the_id_list_path(
    declared: GuidedRAG, own_sample_db: Driver
) -> None:
    rag = declared
    snap = snapshot(own_sample_db, rag.settings.neo4j_database, PRESETS["guidedrag"])
    scope, among = _scope(0, SIZES[1])
    docs = scope["filters"]["document_id"]["$in"]
    # the same chunks (no chunk has the id "none"), through an $or the SEARCH refuses
    widened = {"filters": {"$or": [{"document_id": {"$in": docs}}, {"id": "none"}]}}
    result, want = _auto(rag, widened, 0, snap, among)
    assert [c.id for c in result.chunks] == want
    assert any(BY_IDS in n for n in result.notes), result.notes
    assert "universe_ids" in result.cypher


@pytest.mark.neo4j
def test_a_scope_on_an_undeclared_property_takes_the_id_list_path(
    tuned: Settings, own_sample_db: Driver
) -> None:
    """The sample KB's own index declares only c.id: a document_id scope lists its ids."""
    snap = snapshot(own_sample_db, tuned.neo4j_database, PRESETS["guidedrag"])
    with GuidedRAG(tuned, driver=own_sample_db) as rag:
        for size in SIZES:
            scope, among = _scope(1, size)
            result, want = _auto(rag, scope, 1, snap, among)
            assert [c.id for c in result.chunks] == want, (size, result.notes)
            assert any(BY_IDS in n for n in result.notes), result.notes
            assert "c.`document_id` IN $scpf_0 LIMIT" not in result.cypher


def _filtered(rag: GuidedRAG, filters: dict[str, Any], question: int, snap: Any, among: set[str]):
    """auto with the question's entities and a request filter (no scope); numpy's ids for it."""
    query = np.random.default_rng(question).normal(size=384)
    semantics = Semantics(entities=QUESTIONS[question].semantics.entities)
    expr = plan_auto(semantics, rag.policy.tier_weights(semantics)).boost()
    assert expr is not None
    tiers = evaluate_tiers(expr, snap.graph, hop_cap=rag.settings.hop_cap)
    boosts = {c: w for c, (w, _) in tiers.items()}
    result = rag.retrieve(
        "q",
        semantics=semantics,
        k=5,
        query_vector=[float(x) for x in query],
        link=False,
        filters=filters,
    )
    return result, _exact_top(snap, query, boosts, among)


@pytest.mark.neo4j
def test_request_filters_without_a_scope_rank_u_inside_the_filter(
    declared: GuidedRAG, tuned: Settings, own_sample_db: Driver
) -> None:
    """Before, auto's U under a request filter came from the index's top over the whole KB,
    kept to the filter: a filter holding a small part of the KB lost its top k. Now it is
    ranked like a scope: by its predicate in the SEARCH where the index declares its property
    (``declared``), by the ids of the chunks that pass where it declares only c.id."""
    snap = snapshot(own_sample_db, tuned.neo4j_database, PRESETS["guidedrag"])
    with GuidedRAG(tuned, driver=own_sample_db) as by_ids:
        for question in range(len(QUESTIONS)):
            for size in SIZES:
                scope, among = _scope(question, size)
                for rag, note in ((declared, BY_PREDICATE), (by_ids, BY_IDS)):
                    result, want = _filtered(rag, scope["filters"], question, snap, among)
                    assert [c.id for c in result.chunks] == want, (question, size, result.notes)
                    assert any(n.startswith("filters:") and note in n for n in result.notes), (
                        result.notes
                    )
