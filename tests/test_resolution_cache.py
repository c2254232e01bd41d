"""Resolved names are reused for GUIDEDRAG_RESOLUTION_CACHE_S (one round trip less per
question); unknown relation types never come from the cache (issue 12, item 3), and an unknown
name only while the database's version has not moved (issue 36: one ``RETURN 1`` instead of
two resolution reads, the alias tier a scan of every entity)."""

from __future__ import annotations

import time

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.semantics import Semantics
from tests.probes import CountingDriver

pytestmark = pytest.mark.neo4j

ADA = Semantics(entities=("Ada Lovelace",))


def resolutions(counting: CountingDriver) -> int:
    """How many times names were resolved (``cypher/resolve_entities``' first query; an unknown
    name also costs its alias query, not counted here)."""
    return sum(q.lstrip().startswith("UNWIND range(0, size($sel_names)") for q in counting.queries)


def test_a_name_resolved_once_is_reused_and_the_question_ranks_the_same(
    tiny_kb: Driver, settings: Settings, embedder: Embedder
) -> None:
    counting = CountingDriver(tiny_kb)
    with GuidedRAG(settings, driver=counting, embedder=embedder) as rag:  # type: ignore[arg-type]
        first = rag.retrieve("Where was Ada Lovelace born?", semantics=ADA, k=3)
        asked = resolutions(counting)
        again = rag.retrieve("Where was Ada Lovelace born?", semantics=ADA, k=3)
    assert asked == 1
    assert resolutions(counting) == 1, "the second question resolved its name again"
    assert [c.id for c in again.chunks] == [c.id for c in first.chunks]
    assert again.timings["selection"] < first.timings["selection"]


def test_unknown_names_are_kept_per_version_so_a_new_entity_is_found_at_once(
    tiny_kb: Driver, settings: Settings, embedder: Embedder
) -> None:
    grace = Semantics(entities=("Grace Hopper",))
    counting = CountingDriver(tiny_kb)
    try:
        with GuidedRAG(settings, driver=counting, embedder=embedder) as rag:  # type: ignore[arg-type]
            first = rag.retrieve("Who was Grace Hopper?", semantics=grace)
            before = len(counting.queries)
            again = rag.retrieve("Who was Grace Hopper?", semantics=grace)
            assert first.abstained and again.abstained
            assert again.empty == first.empty  # the same reason and suggestions
            assert resolutions(counting) == 1
            sent = [q.strip().rstrip(";") for q in counting.queries[before:]]
            assert sent == ["RETURN 1 AS ok"], sent  # the version, and nothing else
            tiny_kb.execute_query(
                "MATCH (c:Chunk {id: 'ada-1'}) "
                "CREATE (c)-[:MENTIONS]->(:Entity {id: 'grace', name: 'Grace Hopper', "
                "name_key: 'grace hopper', aliases: [], alias_keys: []})"
            )
            found = rag.retrieve("Who was Grace Hopper?", semantics=grace)
        assert not found.abstained
        assert found.tier_sizes.get("N", 0) >= 1 or found.chunks
    finally:
        tiny_kb.execute_query("MATCH (e:Entity {id: 'grace'}) DETACH DELETE e")


def test_the_cache_expires_and_can_be_turned_off(
    tiny_kb: Driver, settings: Settings, embedder: Embedder
) -> None:
    for seconds, expected in ((0.0, 3), (0.3, 2)):
        counting = CountingDriver(tiny_kb)
        short = settings.model_copy(update={"resolution_cache_s": seconds})
        with GuidedRAG(short, driver=counting, embedder=embedder) as rag:  # type: ignore[arg-type]
            rag.retrieve("Where was Ada Lovelace born?", semantics=ADA)
            rag.retrieve("Where was Ada Lovelace born?", semantics=ADA)
            time.sleep(0.4)
            rag.retrieve("Where was Ada Lovelace born?", semantics=ADA)
        assert resolutions(counting) == expected, seconds


def test_a_relation_type_missing_from_the_cached_list_is_asked_for_again(
    tiny_kb: Driver, settings: Settings, embedder: Embedder
) -> None:
    relational = Semantics(entities=("Ada Lovelace",), relations=("taught",), relational=True)
    try:
        with GuidedRAG(settings, driver=tiny_kb, embedder=embedder) as rag:
            unknown = rag.retrieve(
                "Whom did Ada Lovelace teach?", semantics=relational, steering="hard"
            )
            assert unknown.abstained and unknown.empty is not None
            assert unknown.empty.kind == "unknown_relation_type"
            tiny_kb.execute_query(
                "MATCH (a:Entity {name: 'Ada Lovelace'}), (b:Entity {name: 'London'}) "
                "CREATE (a)-[:TAUGHT {predicate: 'taught'}]->(b)"
            )
            known = rag.retrieve(
                "Whom did Ada Lovelace teach?", semantics=relational, steering="hard"
            )
        assert not known.abstained
    finally:
        tiny_kb.execute_query("MATCH ()-[r:TAUGHT]->() DELETE r")


def test_a_hard_selection_costs_one_round_trip_and_brings_its_size(
    tiny_kb: Driver, settings: Settings, embedder: Embedder
) -> None:
    """Names cached, a hard selection is sized and ranked by one query (the planner's choice
    made in it): exact/plugin for a small selection, filtered SEARCH past the exact limit."""
    from guidedrag_graph.db.connection import server_info

    if not server_info(tiny_kb).supports_search_in_filter:
        pytest.skip("one-query planning needs filtered SEARCH (Neo4j 2026.06+); 5.26 sizes first")
    for exact_max, paths in ((None, {"plugin", "exact"}), (1, {"search_in"})):
        tuned = settings.model_copy(update={"planner_exact_max": exact_max})
        counting = CountingDriver(tiny_kb)
        with GuidedRAG(tuned, driver=counting, embedder=embedder) as rag:  # type: ignore[arg-type]
            rag.retrieve("Where was Ada Lovelace born?", "entity('Ada Lovelace')", steering="hard")
            before = len(counting.queries)
            result = rag.retrieve(
                "Where was Ada Lovelace born?", "entity('Ada Lovelace')", steering="hard"
            )
        assert len(counting.queries) - before == 1, counting.queries[before:]
        assert result.path in paths
        assert result.selection_size == 2
        assert {c.id for c in result.chunks} == {"ada-1", "ada-2"}
        assert result.chunks[0].id == "ada-1"
        with GuidedRAG(tuned, driver=tiny_kb, embedder=embedder) as rag:
            empty = rag.retrieve(
                "Who is both?", "entity('Ada Lovelace') & entity('Paris')", steering="hard"
            )
        assert empty.selection_size == 0 and empty.abstained and empty.chunks == []


def test_a_question_asked_again_reuses_its_compiled_tiers_until_the_cache_expires(
    tiny_kb: Driver, settings: Settings, embedder: Embedder
) -> None:
    """The compiled tiers (and their cost check) are kept with the names they were compiled
    from: the same plan and resolution give the same object, an expired cache a new one, and
    the ranking is the same either way."""
    from guidedrag_graph.steering.tier_prep import prepare_tiers
    from guidedrag_graph.steering.tiers import plan_auto

    short = settings.model_copy(update={"resolution_cache_s": 0.3})
    with GuidedRAG(short, driver=tiny_kb, embedder=embedder) as rag:
        weights = rag.policy.tier_weights(ADA)
        plan = plan_auto(ADA, weights)
        assert plan_auto(Semantics(entities=("Ada Lovelace",)), weights) is plan
        first = prepare_tiers(rag.selector, plan, rag.retriever.paths.variant)
        assert first.compiled is not None and first.text == plan.text()
        assert prepare_tiers(rag.selector, plan, rag.retriever.paths.variant) is first
        ranked = rag.retrieve("Where was Ada Lovelace born?", semantics=ADA, k=3)
        time.sleep(0.4)
        fresh = prepare_tiers(rag.selector, plan, rag.retriever.paths.variant)
        assert fresh is not first
        assert fresh.compiled is not None and fresh.compiled.cypher == first.compiled.cypher
        again = rag.retrieve("Where was Ada Lovelace born?", semantics=ADA, k=3)
    assert [c.id for c in again.chunks] == [c.id for c in ranked.chunks]
    assert again.selection_text == ranked.selection_text == plan.text()


def test_the_default_asked_again_is_one_query_with_or_without_stated_entities(
    tiny_kb: Driver, settings: Settings, embedder: Embedder
) -> None:
    """``auto`` with its names cached (and the linker's keys held): the tiers are sized, ranked
    and returned by ONE query, whether the entities were stated or linked from the question."""
    counting = CountingDriver(tiny_kb)
    question = "Where was Ada Lovelace born?"
    with GuidedRAG(settings, driver=counting, embedder=embedder) as rag:  # type: ignore[arg-type]
        vector = rag.embedder.embed_queries([question])[0]
        for semantics in (ADA, None):
            first = rag.retrieve(question, semantics=semantics, query_vector=vector, k=3)
            before = len(counting.queries)
            again = rag.retrieve(question, semantics=semantics, query_vector=vector, k=3)
            assert len(counting.queries) - before == 1, counting.queries[before:]
            assert again.steering == "auto" and again.tier_sizes
            assert [c.id for c in again.chunks] == [c.id for c in first.chunks]
