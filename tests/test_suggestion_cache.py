"""An abstention is cheap when asked again (issue 36, item 2): the "did you mean" suggestions
for a name the KB lacks (a fuzzy full-text query, the dearest read a question can make) are held
in the process's warm state, per name, limit and scope, and forgotten when the database's version
moves, as resolved names are. The lists are the ones the uncached query gives."""

from __future__ import annotations

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.semantics import Semantics
from tests.probes import CountingDriver

pytestmark = pytest.mark.neo4j

TYPO = Semantics(entities=("Ada Lovelase",))
QUESTION = "Where was Ada Lovelase born?"


def fuzzy_queries(counting: CountingDriver) -> int:
    """How many suggestion queries (``cypher/suggest_entities.cypher``) were sent."""
    return sum("db.index.fulltext.queryNodes" in q for q in counting.queries)


def test_an_unknown_name_asked_again_sends_no_fuzzy_query_and_gets_the_same_suggestions(
    tiny_kb: Driver, settings: Settings, embedder: Embedder
) -> None:
    uncached = GuidedRAG(
        settings.model_copy(update={"resolution_cache_s": 0.0}), driver=tiny_kb, embedder=embedder
    )
    expected = uncached.retrieve(QUESTION, semantics=TYPO).empty
    assert expected is not None and "Ada Lovelace" in expected.suggestions

    counting = CountingDriver(tiny_kb)
    first = GuidedRAG(settings, driver=counting, embedder=embedder)  # type: ignore[arg-type]
    one = first.retrieve(QUESTION, semantics=TYPO)
    assert fuzzy_queries(counting) == 1
    fresh = GuidedRAG(settings, driver=counting, embedder=embedder)  # type: ignore[arg-type]
    two = fresh.retrieve(QUESTION, semantics=TYPO)  # a new instance: the process's state
    assert fuzzy_queries(counting) == 1, "the suggestions were asked for again"
    assert one.abstained and two.abstained
    assert one.empty is not None and two.empty is not None
    assert one.empty.suggestions == two.empty.suggestions == expected.suggestions
    assert one.empty.message == two.empty.message == expected.message


def test_suggestions_are_kept_per_limit_and_scope(
    tiny_kb: Driver, settings: Settings, embedder: Embedder
) -> None:
    counting = CountingDriver(tiny_kb)
    resolver = GuidedRAG(settings, driver=counting, embedder=embedder).selector.resolver  # type: ignore[arg-type]
    whole = resolver.suggestions("Ada Lovelase", limit=3)
    assert resolver.suggestions("Ada Lovelase", limit=3) == whole
    assert fuzzy_queries(counting) == 1
    assert resolver.suggestions("Ada Lovelase", limit=3, scope_key="tenant-a") == whole
    assert fuzzy_queries(counting) == 2, "a scoped request was given the whole KB's entry"
    resolver.suggestions("Ada Lovelase", limit=2)
    assert fuzzy_queries(counting) == 3, "another limit was given the first limit's entry"


def test_a_write_is_seen_by_the_suggestions_of_the_next_instance(
    tiny_kb: Driver, settings: Settings, embedder: Embedder
) -> None:
    grace = Semantics(entities=("Grace Hoper",))
    try:
        before = GuidedRAG(settings, driver=tiny_kb, embedder=embedder)
        said = before.retrieve("Who was Grace Hoper?", semantics=grace).empty
        assert said is not None and "Grace Hopper" not in said.suggestions
        tiny_kb.execute_query(
            "MATCH (c:Chunk {id: 'ada-1'}) "
            "CREATE (c)-[:MENTIONS]->(:Entity {id: 'grace', name: 'Grace Hopper', "
            "name_key: 'grace hopper', aliases: [], alias_keys: []})"
        )
        after = GuidedRAG(settings, driver=tiny_kb, embedder=embedder)
        now = after.retrieve("Who was Grace Hoper?", semantics=grace).empty
        assert now is not None and "Grace Hopper" in now.suggestions, now
        assert after.graph.data is before.graph.data  # the same state, its answers forgotten
    finally:
        tiny_kb.execute_query("MATCH (e:Entity {id: 'grace'}) DETACH DELETE e")


def test_close_relation_types_and_the_relation_vocabulary_are_judged_once(
    tiny_kb: Driver, settings: Settings, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from guidedrag_graph.pipeline import question_relations
    from guidedrag_graph.selection import resolver as resolver_module

    calls = {"rank_similar": 0, "links_relations": 0}

    def counted(name: str, real: object) -> object:
        def call(*args: object, **kwargs: object) -> object:
            calls[name] += 1
            return real(*args, **kwargs)  # type: ignore[operator]

        return call

    monkeypatch.setattr(
        resolver_module, "rank_similar", counted("rank_similar", resolver_module.rank_similar)
    )
    monkeypatch.setattr(
        question_relations,
        "links_relations",
        counted("links_relations", question_relations.links_relations),
    )
    rag = GuidedRAG(settings, driver=tiny_kb, embedder=embedder)
    rag.graph.data.clear()
    close = rag.selector.resolver.close_types("BORN_INN")
    assert rag.selector.resolver.close_types("BORN_INN") == close
    assert calls["rank_similar"] == 1
    bare = [rag.retrieve("Where was Ada Lovelace born?") for _ in range(2)]
    assert calls["links_relations"] == 1, "the relation vocabulary was judged again"
    assert [c.id for c in bare[0].chunks] == [c.id for c in bare[1].chunks]
