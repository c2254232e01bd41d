"""Each adapter call carries its own result, and every door takes the same per-call options.

Real langchain-core, llama-index-core and neo4j-graphrag, the real server and the sample KB:
a LangChain ``batch`` and a LlamaIndex ``gather`` of five questions, one of which names an entity
the KB does not know, return five results that each say their own question's abstention, tier
sizes and linked names; ``filters``, ``relations``, ``selection``, ``steering`` and ``k``/
``top_k`` per call give what ``GuidedRAG.retrieve`` gives; the LangChain tool is typed and
strict; a blank question and a bad ``k`` are refused in the same words at every door.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.pipeline import GuidedRAG, RetrievalResult
from guidedrag_graph.retrieve_args import QUESTION_EMPTY, k_problem
from guidedrag_graph.semantics import merge_stated
from tests.async_rag import on_async_rag
from tests.cli_run import error_line, run_cli
from tests.conftest import sample_bundle

pytestmark = pytest.mark.neo4j

UNKNOWN = "No Such Entity Anywhere"
ABSTAINING = 2  # the batch's question that states UNKNOWN


@pytest.fixture
def rag(settings: Settings, embedder: Embedder, sample_db: Driver) -> Iterator[GuidedRAG]:
    # Per test, opened after the sample KB is in place: cheap (the KB's state is shared per
    # driver), and it observes the database's version after any reload (context.KBState).
    with GuidedRAG(settings, driver=sample_db, embedder=embedder) as pipeline:
        yield pipeline


def five() -> list[tuple[str, dict[str, Any]]]:
    """Five sample questions with their stated entities and relations; the third states a
    name the KB does not know."""
    out = []
    for i, q in enumerate(sample_bundle().questions[:5]):
        assert q.semantics is not None
        entities = [UNKNOWN] if i == ABSTAINING else list(q.semantics.entities)
        out.append((q.question, {"entities": entities, "relations": list(q.semantics.relations)}))
    return out


def expected(rag: GuidedRAG) -> list[RetrievalResult]:
    results = [
        rag.retrieve(q, semantics=merge_stated(None, o["entities"], o["relations"]))
        for q, o in five()
    ]
    assert [r.abstained for r in results] == [i == ABSTAINING for i in range(5)]
    # the tiers differ between questions, so a result that took another's would show
    assert len({tuple(sorted(r.tier_sizes.items())) for r in results}) >= 3
    return results


def assert_own(outputs: list[Any], rag: GuidedRAG, id_of: Any) -> None:
    for out, want in zip(outputs, expected(rag), strict=True):
        assert [id_of(item) for item in out] == [c.id for c in want.chunks]
        assert out.abstained is want.abstained
        assert out.reason == (want.empty.message if want.empty else None)
        assert out.tier_sizes == want.tier_sizes and out.steering == want.steering
        assert out.result.question == want.question
    abstained = outputs[ABSTAINING]
    assert abstained == [] and UNKNOWN in str(abstained.reason)


# ------------------------------------------------------------------------- results per call
def test_langchain_batch_of_five_each_carries_its_own_result(
    sample_db: Driver, rag: GuidedRAG, settings: Settings, embedder: Embedder
) -> None:
    from guidedrag_graph.integrations.langchain import CONFIG_KEY, GuidedLangChainRetriever

    retriever = GuidedLangChainRetriever(rag=rag)
    questions = [q for q, _ in five()]
    configs: list[Any] = [{"configurable": {CONFIG_KEY: o}} for _, o in five()]
    batch = retriever.batch(questions, config=configs)
    assert_own(batch, rag, lambda d: d.id)
    for out in batch:  # each document says its own call's outcome
        for doc in out:
            assert doc.metadata["tier_sizes"] == out.tier_sizes
            assert doc.metadata["abstained"] is False and doc.metadata["reason"] is None
            assert doc.metadata["steering"] == out.steering
    abatch = on_async_rag(  # abatch: concurrent ainvoke calls on the async core
        settings,
        embedder,
        lambda arag: GuidedLangChainRetriever(rag=arag).abatch(questions, config=configs),
    )
    assert_own(abatch, rag, lambda d: d.id)
    assert not hasattr(retriever, "last_result")  # nothing shared is kept on the adapter


def test_llamaindex_gather_of_five_each_carries_its_own_result(
    sample_db: Driver, rag: GuidedRAG, settings: Settings, embedder: Embedder
) -> None:
    from llama_index.core.schema import MetadataMode

    from guidedrag_graph.integrations.llamaindex import GuidedLlamaIndexRetriever

    retriever = GuidedLlamaIndexRetriever(rag)

    async def gather(arag: GuidedRAG) -> list[Any]:
        both = GuidedLlamaIndexRetriever(rag, async_rag=arag)  # aretrieve: on the async core
        return list(await asyncio.gather(*(both.aretrieve(q, **o) for q, o in five())))

    outputs = on_async_rag(settings, embedder, gather)
    assert_own(outputs, rag, lambda n: n.node.node_id)
    assert_own([retriever.retrieve(q, **o) for q, o in five()], rag, lambda n: n.node.node_id)
    assert not hasattr(retriever, "last_result")

    node = outputs[0][0].node
    assert node.metadata["tier_sizes"] == outputs[0].tier_sizes and "cosine" in node.metadata
    to_llm = node.get_content(metadata_mode=MetadataMode.LLM)
    to_embed = node.get_content(metadata_mode=MetadataMode.EMBED)
    assert node.metadata["document_title"] in to_llm and node.metadata["chunk_id"] in to_llm
    assert node.metadata["document_title"] in to_embed and node.metadata["chunk_id"] not in to_embed
    for key in ("score", "cosine", "boost", "selection", "tiers", "tier_sizes", "steering"):
        assert f"{key}:" not in to_llm and f"{key}:" not in to_embed, key


# -------------------------------------------------------------------------------- parity
def per_call_cases(rag: GuidedRAG) -> list[tuple[dict[str, Any], list[str]]]:
    """(options, what GuidedRAG.retrieve returns for them) for filters, relations, selection,
    steering and k/top_k."""
    question, options = five()[0]
    entity = options["entities"][0]
    top = rag.retrieve(question, semantics=merge_stated(None, [entity]))
    document = top.chunks[0].document_id
    filters = {"document_id": {"$in": [document]}}
    cases: list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = [
        # (adapter options, retrieve's selection/keywords, semantics shorthands)
        ({"entities": [entity], "filters": filters}, {"filters": filters}, {"entities": [entity]}),
        (options, {}, options),
        ({"selection": f"entity({entity!r})"}, {"selection": f"entity({entity!r})"}, {}),
        ({"entities": [entity], "steering": "hard"}, {"steering": "hard"}, {"entities": [entity]}),
        ({"entities": [entity], "k": 2}, {"k": 2}, {"entities": [entity]}),
        ({"entities": [entity], "top_k": 3}, {"k": 3}, {"entities": [entity]}),
    ]
    out = []
    for given, keywords, stated in cases:
        keywords = dict(keywords)
        selection = keywords.pop("selection", None)
        want = rag.retrieve(question, selection, semantics=merge_stated(None, **stated), **keywords)
        assert want.chunks
        out.append((given, [c.id for c in want.chunks]))
    assert out[0][1] != [c.id for c in top.chunks]  # the filter changed something
    assert len(out[4][1]) == 2 and len(out[5][1]) == 3
    return out


def test_langchain_and_llamaindex_take_every_option_per_call(
    sample_db: Driver, rag: GuidedRAG
) -> None:
    from guidedrag_graph.integrations.langchain import CONFIG_KEY, GuidedLangChainRetriever
    from guidedrag_graph.integrations.llamaindex import GuidedLlamaIndexRetriever

    question = five()[0][0]
    chain = GuidedLangChainRetriever(rag=rag)
    index = GuidedLlamaIndexRetriever(rag)
    for given, ids in per_call_cases(rag):
        assert [d.id for d in chain.invoke(question, **given)] == ids, given
        config: Any = {"configurable": {CONFIG_KEY: given}}
        assert [d.id for d in chain.invoke(question, config=config)] == ids, given
        assert [n.node.node_id for n in index.retrieve(question, **given)] == ids, given

    for door in (chain.invoke, index.retrieve):
        with pytest.raises(
            ConfigurationError, match=r"unknown argument 'entity'; known: .*entities"
        ):
            door(question, entity=["Euro"])
        with pytest.raises(ConfigurationError, match="same argument, give one"):
            door(question, k=2, top_k=3)


def test_langchain_structured_tool_is_typed_and_strict(sample_db: Driver, rag: GuidedRAG) -> None:
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import StructuredTool

    from guidedrag_graph.integrations.langchain import GuidedLangChainRetriever

    tool = GuidedLangChainRetriever(rag=rag).convert_to_tool()
    assert isinstance(tool, StructuredTool) and tool.name == "guidedrag_search"
    schema = tool.tool_call_schema.model_json_schema()
    assert set(schema["properties"]) == {"question", "entities", "relations", "filters", "k"}
    assert schema["required"] == ["question"]
    assert all(p.get("description") for p in schema["properties"].values())

    question, options = five()[0]
    want = rag.retrieve(question, semantics=merge_stated(None, options["entities"]), k=2)
    arguments = {"question": question, "entities": options["entities"], "k": 2}
    message = tool.invoke({"type": "tool_call", "id": "1", "name": tool.name, "args": arguments})
    assert isinstance(message, ToolMessage)
    assert [d.id for d in message.artifact] == [c.id for c in want.chunks]
    assert all(f"[{c.id}] (document:" in message.content for c in want.chunks)
    as_top_k = {"question": question, "entities": options["entities"], "top_k": 2}
    assert tool.invoke(as_top_k) == message.content

    refused = tool.invoke({"question": question, "entity": ["Euro"]})
    assert "\n" not in refused and "https://" not in refused
    assert "unknown argument 'entity'; known: question, entities, relations, filters, k" in refused
    assert tool.invoke({"question": question, "k": 0}) == k_problem(0)
    abstained = tool.invoke({"question": question, "entities": [UNKNOWN]})
    assert abstained.startswith("The knowledge base abstained:") and UNKNOWN in abstained


# ------------------------------------------------------------------- one wording everywhere
def test_a_blank_question_and_a_bad_k_are_refused_alike_at_every_door(
    sample_db: Driver, rag: GuidedRAG, settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    from guidedrag_graph.integrations.langchain import GuidedLangChainRetriever
    from guidedrag_graph.integrations.llamaindex import GuidedLlamaIndexRetriever
    from guidedrag_graph.integrations.neo4j_graphrag import GuidedRetriever

    chain = GuidedLangChainRetriever(rag=rag)
    index = GuidedLlamaIndexRetriever(rag)
    graphrag = GuidedRetriever(rag.driver, rag.settings, rag=rag)
    doors = {
        "python": lambda q, **o: rag.retrieve(q, **o),
        "langchain": lambda q, **o: chain.invoke(q, **o),
        "langchain async": lambda q, **o: on_async_rag(
            settings, embedder, lambda a: GuidedLangChainRetriever(rag=a).ainvoke(q, **o)
        ),
        "llamaindex": lambda q, **o: index.retrieve(q, **o),
        "llamaindex async": lambda q, **o: on_async_rag(
            settings, embedder, lambda a: GuidedLlamaIndexRetriever(a).aretrieve(q, **o)
        ),
        "neo4j-graphrag": lambda q, **o: graphrag.search(query_text=q, **o),
        "neo4j-graphrag async": lambda q, **o: on_async_rag(
            settings,
            embedder,
            lambda a: GuidedRetriever(a.graph.driver, rag=a).asearch(query_text=q, **o),
        ),
    }
    for name, door in doors.items():
        for blank in ("", "  \n\t"):
            with pytest.raises(ConfigurationError) as caught:
                door(blank)
            assert str(caught.value) == QUESTION_EMPTY, name
        with pytest.raises(ConfigurationError) as caught:
            door("Who?", k=0) if name == "python" else door("Who?", top_k=0)
        assert str(caught.value) == k_problem(0), name
    env = {
        "NEO4J_URI": settings.neo4j_uri,
        "NEO4J_PASSWORD": settings.neo4j_password.get_secret_value(),
    }
    for blank in ("", "   "):
        line = error_line(run_cli(["retrieve", blank], env, cwd=tmp_path))
        assert line == f"error: {QUESTION_EMPTY}"
