"""Entity taggers against the real Neo4j (and the local HTTP LLM for the LLM/hybrid taggers)."""

from __future__ import annotations

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.errors import ConfigurationError, GenerationError
from guidedrag_graph.kb.entity_names import embed_entity_names
from guidedrag_graph.linking.taggers import parse_llm_tags, tagger_for
from tests.llm_server import llm_server

pytestmark = pytest.mark.neo4j


def test_fulltext_tagger_finds_whole_names_longest_first(
    tiny_kb: Driver,
    settings: Settings,
) -> None:
    tagger = tagger_for("fulltext", GraphContext.open(settings, tiny_kb))
    assert tagger.tag("Where was Ada Lovelace born?") == ["Ada Lovelace"]
    assert tagger.tag("Did Charles Babbage ever meet Lord Byron in London?") == [
        "Charles Babbage",
        "Lord Byron",
        "London",
    ]
    assert tagger.tag("What did babbage design?") == ["Charles Babbage"]  # by alias
    assert tagger.tag("Who painted the Mona Lisa?") == []
    assert tagger.tag("(+-&&||!)") == []


def test_embedding_tagger_after_embedding_entity_names(
    tiny_kb: Driver,
    settings: Settings,
    embedder: Embedder,
) -> None:
    done = embed_entity_names(tiny_kb, settings, embedder=embedder)
    assert done == 9  # every entity of the tiny KB
    assert embed_entity_names(tiny_kb, settings, embedder=embedder) == 0  # idempotent
    try:
        tiny_kb.execute_query("CALL db.awaitIndexes(120)")
        tagger = tagger_for("embedding", GraphContext.open(settings, tiny_kb), embedder=embedder)
        tags = tagger.tag("Eiffel Tower")
        assert tags and tags[0] == "Eiffel Tower"
        assert tagger.match(["Lovelace, Ada"]) == ["Ada Lovelace"]  # type: ignore[attr-defined]
    finally:
        tiny_kb.execute_query("MATCH (e:Entity) REMOVE e.name_embedding")


def test_llm_tagger_parses_json_and_keeps_known_entities(
    tiny_kb: Driver,
    settings: Settings,
) -> None:
    with llm_server() as server:
        server.reply = '```json\n{"entities": ["ada lovelace", "Grace Hopper", "BABBAGE"]}\n```'
        configured = settings.model_copy(update={"openai_base_url": server.base_url})
        tagger = tagger_for("llm", GraphContext.open(configured, tiny_kb))
        assert tagger.tag("Did Ada Lovelace work with Babbage?") == [
            "Ada Lovelace",
            "Charles Babbage",
        ]
        body = server.requests[0]["body"]
        assert body["response_format"] == {"type": "json_object"}
        assert "Did Ada Lovelace work with Babbage?" in server.prompt_text()


def test_hybrid_tagger_matches_llm_tags_by_embedding(
    tiny_kb: Driver,
    settings: Settings,
    embedder: Embedder,
) -> None:
    embed_entity_names(tiny_kb, settings, embedder=embedder)
    try:
        tiny_kb.execute_query("CALL db.awaitIndexes(120)")
        with llm_server() as server:
            server.reply = '{"entities": ["Lovelace, Ada", "London"]}'
            configured = settings.model_copy(update={"openai_base_url": server.base_url})
            tagger = tagger_for("hybrid", GraphContext.open(configured, tiny_kb), embedder=embedder)
            assert tagger.tag("Was Lovelace, Ada from London?") == ["London", "Ada Lovelace"]
    finally:
        tiny_kb.execute_query("MATCH (e:Entity) REMOVE e.name_embedding")


def test_tagger_errors_name_the_fix(settings: Settings, driver: Driver) -> None:
    with pytest.raises(ConfigurationError, match="choose one of"):
        tagger_for("magic", GraphContext.open(settings, driver))
    with pytest.raises(ConfigurationError, match="OPENAI_BASE_URL"):
        tagger_for("llm", GraphContext.open(settings, driver))
    with pytest.raises(GenerationError, match="another tagger"):
        parse_llm_tags("I think it is Ada")
    assert parse_llm_tags('["a", "b"]') == ["a", "b"]
