"""neo4j-graphrag's contract, end to end: its real ``GraphRAG``, ``VectorRetriever`` and KG-builder
embedder component, our ``GuidedRetriever``/``GuidedEmbedder``, the real Neo4j (tiny KB) and the
local OpenAI-compatible test LLM over real HTTP.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import neo4j
import numpy as np
import pytest
from neo4j import Driver
from neo4j_graphrag.components.embedder import TextChunkEmbedder
from neo4j_graphrag.components.types import TextChunk, TextChunks
from neo4j_graphrag.embeddings.base import Embedder as GraphRAGEmbedder
from neo4j_graphrag.generation import GraphRAG
from neo4j_graphrag.llm import OpenAILLM
from neo4j_graphrag.retrievers import VectorRetriever
from neo4j_graphrag.types import RetrieverResultItem

from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.integrations.neo4j_graphrag import (
    ABSTENTION_ANSWER,
    GuidedEmbedder,
    GuidedGraphRAG,
    GuidedRetriever,
)
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.semantics import Semantics
from tests.llm_server import LLMServer, llm_server
from tests.probes import CountingEmbedder

pytestmark = pytest.mark.neo4j

QUESTION = "Where was Ada Lovelace born?"


@pytest.fixture
def llm() -> Iterator[LLMServer]:
    with llm_server() as server:
        yield server


def graphrag(retriever: GuidedRetriever, llm: LLMServer) -> GraphRAG:
    return GraphRAG(
        retriever=retriever,
        llm=OpenAILLM(model_name="test-model", base_url=llm.base_url, api_key="test-key"),
    )


def ids(result: Any) -> list[str]:
    return [item.metadata["id"] for item in result.items]


# ------------------------------------------------------------------------------ Embedder
def test_embedder_adapter_keeps_the_e5_query_passage_asymmetry(
    embedder: Embedder,
) -> None:
    adapter = GuidedEmbedder(embedder)
    assert isinstance(adapter, GraphRAGEmbedder)
    text = "Ada Lovelace was born in London in 1815."
    as_query = np.array(adapter.embed_query(text))
    as_passage = np.array(adapter.passage_embedder().embed_query(text))
    np.testing.assert_allclose(as_query, embedder.embed_queries([text])[0], atol=1e-6)
    np.testing.assert_allclose(as_passage, embedder.embed_passages([text])[0], atol=1e-6)
    assert len(as_query) == adapter.dimensions == embedder.dimensions
    assert float(as_query @ as_passage) < 0.999  # different prefixes, different vectors
    back = adapter.passage_embedder().query_embedder()
    assert not back.for_passages and back.embed_query(text) == adapter.embed_query(text)
    assert asyncio.run(adapter.async_embed_query(text)) == adapter.embed_query(text)


def test_kg_builder_chunk_embedder_writes_passage_vectors(
    embedder: Embedder,
) -> None:
    """neo4j-graphrag's own KG-builder component embeds chunks through ``embed_query``; the
    passage side makes those vectors the ones GuidedRAG's loader would store."""
    texts = ["Charles Babbage was born in London in 1791.", "Paris is the capital of France."]
    chunks = TextChunks(chunks=[TextChunk(text=t, index=i) for i, t in enumerate(texts)])
    component = TextChunkEmbedder(embedder=GuidedEmbedder(embedder).passage_embedder())
    out = asyncio.run(component.run(text_chunks=chunks))
    for chunk, expected in zip(out.chunks, embedder.embed_passages(texts), strict=True):
        assert chunk.metadata is not None
        np.testing.assert_allclose(chunk.metadata["embedding"], expected, atol=1e-6)


def test_vector_retriever_with_the_adapter_finds_the_chunk(
    tiny_kb: Driver,
    settings: Settings,
    embedder: Embedder,
) -> None:
    """The query side plugged into neo4j-graphrag's plain ``VectorRetriever`` over our index."""
    retriever = VectorRetriever(
        tiny_kb,
        settings.vector_index_name,
        embedder=GuidedEmbedder(embedder),
        return_properties=["id", "text"],
    )
    result = retriever.search(query_text="When was the Eiffel Tower completed?", top_k=1)
    assert "paris-2" in str(result.items[0].content)


# ------------------------------------------------------------------------------ Retriever
def test_result_formatter_is_used_by_graphrag(
    tiny_kb: Driver,
    settings: Settings,
    llm: LLMServer,
    embedder: Embedder,
) -> None:
    seen: list[neo4j.Record] = []

    def formatter(record: neo4j.Record) -> RetrieverResultItem:
        seen.append(record)
        node = record["node"]  # the VectorRetriever shape: node properties + nodeLabels
        return RetrieverResultItem(
            content=f"[{node['id']}] (document: {record['document_title']}) "
            f"FORMATTED {node['text']}",
            metadata={"id": node["id"], "labels": record["nodeLabels"]},
        )

    rag = GuidedRAG(settings, driver=tiny_kb, embedder=embedder)
    retriever = GuidedRetriever(tiny_kb, settings, rag=rag, result_formatter=formatter)
    assert retriever.get_result_formatter() is formatter
    result = graphrag(retriever, llm).search(
        QUESTION,
        retriever_config={"semantics": {"entities": ["Ada Lovelace"]}, "top_k": 2},
        return_context=True,
    )
    assert len(seen) == 2
    assert result.retriever_result is not None
    assert ids(result.retriever_result) == ["ada-1", "ada-2"]
    assert result.retriever_result.items[0].metadata == {"id": "ada-1", "labels": ["Chunk"]}
    assert "FORMATTED Ada Lovelace was born in London" in llm.prompt_text()
    assert "[ada-1]" in result.answer


def test_filters_restrict_the_candidates_under_auto_and_hard(
    tiny_kb: Driver,
    settings: Settings,
    llm: LLMServer,
    embedder: Embedder,
) -> None:
    rag = GuidedRAG(settings, driver=tiny_kb, embedder=embedder)
    retriever = GuidedRetriever(tiny_kb, settings, rag=rag)
    filters = {"id": {"$in": ["ada-2", "babbage-1"]}}
    result = graphrag(retriever, llm).search(
        QUESTION,
        retriever_config={
            "semantics": {"entities": ["Ada Lovelace"]},
            "filters": filters,
            "top_k": 5,
        },
        return_context=True,
    )
    assert result.retriever_result is not None
    # auto ranks the chunks that pass (U), the entity's tiers inside them boosted first
    assert ids(result.retriever_result) == ["ada-2", "babbage-1"]
    meta = result.retriever_result.metadata
    assert meta is not None and meta["filters_matched"] == 2
    assert meta["steering"] == "auto" and meta["tier_sizes"]["U"] == 2
    # near('Ada Lovelace') holds both (babbage-1 mentions the Analytical Engine), and nothing
    # outside the filter: every tier is narrowed to U
    assert meta["tier_sizes"]["N"] == 2
    assert "[ada-2]" in llm.prompt_text() and "[ada-1]" not in llm.prompt_text()
    same = rag.retrieve(
        QUESTION, semantics=Semantics(entities=("Ada Lovelace",)), filters=filters, k=5
    )
    assert [c.id for c in same.chunks] == ids(result.retriever_result)

    # hard: the paper's selection, narrowed by the filter inside the query
    hard = retriever.search(
        query_text=QUESTION, entities=["Ada Lovelace"], filters=filters, steering="hard"
    )
    assert ids(hard) == ["ada-2"]
    assert hard.metadata is not None and hard.metadata["steering"] == "hard"

    # Without semantics the filter alone is the universe; $or and $like compile as in
    # neo4j-graphrag, values stay parameters.
    only = retriever.search(
        query_text="Which city is the capital of France?",
        filters={"$or": [{"document_id": "d-paris"}, {"id": {"$like": "byron"}}]},
    )
    assert sorted(ids(only)) == ["byron-1", "paris-1", "paris-2"]
    assert all(item.metadata["document_id"] in ("d-paris", "d-byron") for item in only.items)


def test_filters_that_match_nothing_or_name_no_property(
    tiny_kb: Driver,
    settings: Settings,
    embedder: Embedder,
) -> None:
    counting = CountingEmbedder(embedder)
    rag = GuidedRAG(settings, driver=tiny_kb, embedder=counting)  # type: ignore[arg-type]
    retriever = GuidedRetriever(tiny_kb, settings, rag=rag)
    none = retriever.search(query_text=QUESTION, filters={"document_id": "d-nowhere"})
    assert none.items == []
    assert none.metadata is not None and none.metadata["abstained"] is True
    assert "no chunk matches the filters" in none.metadata["empty"]["message"]
    assert counting.calls == 0  # abstained before embedding anything
    with pytest.raises(ConfigurationError, match="'documnet_id', which no node"):
        retriever.search(query_text=QUESTION, filters={"documnet_id": "d-paris"})
    hostile = "id` IS NOT NULL OR true //"
    with pytest.raises(ConfigurationError, match="which no node in the database has"):
        retriever.search(query_text=QUESTION, filters={hostile: "x"})


def test_query_vector_skips_embedding_and_effective_search_ratio_is_accepted(
    tiny_kb: Driver,
    settings: Settings,
    embedder: Embedder,
) -> None:
    counting = CountingEmbedder(embedder)
    rag = GuidedRAG(settings, driver=tiny_kb, embedder=counting)  # type: ignore[arg-type]
    retriever = GuidedRetriever(tiny_kb, settings, rag=rag)
    by_text = retriever.search(query_text="When was the Eiffel Tower completed?", top_k=3)
    assert counting.calls == 1
    vector = [float(x) for x in embedder.embed_queries(["When was the Eiffel Tower completed?"])[0]]
    by_vector = retriever.search(query_vector=vector, top_k=3, effective_search_ratio=4)
    assert counting.calls == 1  # the given vector was used, nothing embedded
    assert ids(by_vector) == ids(by_text) and ids(by_text)[0] == "paris-2"
    with pytest.raises(ConfigurationError, match="query_text or query_vector"):
        retriever.search(top_k=3)
    with pytest.raises(ConfigurationError, match="effective_search_ratio"):
        retriever.search(query_vector=vector, effective_search_ratio=0)


def test_relations_are_honoured_without_relational_flag(
    tiny_kb: Driver,
    settings: Settings,
    llm: LLMServer,
    embedder: Embedder,
) -> None:
    rag = GuidedRAG(settings, driver=tiny_kb, embedder=embedder)
    retriever = GuidedRetriever(tiny_kb, settings, rag=rag)
    pipeline = graphrag(retriever, llm)
    related = pipeline.search(
        QUESTION,
        retriever_config={"semantics": {"entities": ["Ada Lovelace"], "relations": ["born in"]}},
        return_context=True,
    )
    assert related.retriever_result is not None and related.retriever_result.metadata
    meta = related.retriever_result.metadata
    assert "hop('Ada Lovelace', ['BORN_IN'])" in meta["selection"]  # auto's A_rel tier
    assert meta["steering"] == "auto" and "A_rel" in meta["tier_sizes"]
    expected = rag.retrieve(
        QUESTION,
        semantics=Semantics(entities=("Ada Lovelace",), relations=("born in",), relational=True),
    )
    assert ids(related.retriever_result) == [c.id for c in expected.chunks]
    assert ids(related.retriever_result)[0] == "ada-1"
    # The top-level shorthand does the same; hard runs the paper's mapping (the hop only), and
    # an explicit relational=False still wins there.
    short = retriever.search(query_text=QUESTION, entities=["Ada Lovelace"], relations=["born in"])
    assert ids(short) == ids(related.retriever_result)
    hard = retriever.search(
        query_text=QUESTION, entities=["Ada Lovelace"], relations=["born in"], steering="hard"
    )
    assert ids(hard) == ["ada-1"]
    explicit = retriever.search(
        query_text=QUESTION,
        semantics={"entities": ["Ada Lovelace"], "relations": ["born in"], "relational": False},
        steering="hard",
    )
    assert sorted(ids(explicit)) == ["ada-1", "ada-2"]


def test_every_stated_entity_is_kept_and_auto_is_said(
    tiny_kb: Driver, settings: Settings, embedder: Embedder
) -> None:
    rag = GuidedRAG(settings, driver=tiny_kb, embedder=embedder)
    retriever = GuidedRetriever(tiny_kb, settings, rag=rag)
    found = retriever.search(
        query_text="Who was the father of Ada Lovelace?", entities=["Ada Lovelace", "Lord Byron"]
    )
    assert found.metadata is not None and found.metadata["steering"] == "auto"
    assert "'Ada Lovelace'" in found.metadata["selection"]
    assert "'Lord Byron'" in found.metadata["selection"]  # the second entity is not dropped
    expected = rag.retrieve(
        "Who was the father of Ada Lovelace?",
        semantics=Semantics(entities=("Ada Lovelace", "Lord Byron"), complexity=2),
    )
    assert ids(found) == [c.id for c in expected.chunks]
    assert found.metadata["tier_sizes"] == expected.tier_sizes


# ------------------------------------------------------------------------------ GuidedGraphRAG
def test_guided_graphrag_calls_the_llm_only_when_retrieval_finds_chunks(
    tiny_kb: Driver,
    settings: Settings,
    llm: LLMServer,
    embedder: Embedder,
) -> None:
    rag = GuidedRAG(settings, driver=tiny_kb, embedder=embedder)
    retriever = GuidedRetriever(tiny_kb, settings, rag=rag)
    model = OpenAILLM(model_name="test-model", base_url=llm.base_url, api_key="test-key")
    unknown = {"semantics": {"entities": ["Nobody Anyone Knows"]}}

    # neo4j-graphrag's own GraphRAG asks its LLM with an empty context
    GraphRAG(retriever=retriever, llm=model).search(
        QUESTION, retriever_config=unknown, return_context=False
    )
    assert len(llm.requests) == 1
    llm.requests.clear()

    guided = GuidedGraphRAG(retriever=retriever, llm=model)
    abstained = guided.search(QUESTION, retriever_config=unknown, return_context=True)
    assert llm.requests == []  # no HTTP request reached the LLM server
    assert abstained.abstained is True and abstained.llm_called is False
    assert abstained.reason and "Nobody Anyone Knows" in abstained.reason
    assert abstained.answer == ABSTENTION_ANSWER.format(reason=abstained.reason)
    assert abstained.retriever_result is not None and abstained.retriever_result.items == []
    filtered = guided.search(
        QUESTION,
        retriever_config={"filters": {"document_id": "d-nowhere"}},
        response_fallback="Not in the KB.",
    )
    assert filtered.answer == "Not in the KB." and filtered.abstained
    assert filtered.retriever_result is None  # return_context defaults to False
    assert llm.requests == []

    answered = guided.search(
        QUESTION,
        retriever_config={"semantics": {"entities": ["Ada Lovelace"]}, "top_k": 2},
        return_context=True,
    )
    assert len(llm.requests) == 1 and "/chat/completions" in llm.requests[0]["path"]
    assert answered.llm_called is True and answered.abstained is False
    assert "[ada-1]" in answered.answer and answered.reason is None
    assert answered.retriever_result is not None
    assert ids(answered.retriever_result) == ["ada-1", "ada-2"]
