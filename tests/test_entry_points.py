"""Every way in runs the default (issue 19): for the same inputs, ``GuidedRAG.retrieve``, the CLI
(``retrieve --json``), ``GuidedRetriever.search``, neo4j-graphrag's ``GraphRAG`` (with
``return_context``) and the ``guidedrag cypher`` Browser script return the same chunk ids, on the
sample KB (a MuSiQue subset) — with stated entities and with a bare question (entities linked).
The Browser script is run as Browser runs it: each ``:param`` expression evaluated by the server,
then the query.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import pytest
from click.testing import CliRunner
from neo4j import Driver
from neo4j_graphrag.generation import GraphRAG
from neo4j_graphrag.llm import OpenAILLM

from guidedrag_graph.cli import cli
from guidedrag_graph.cli.ask_cmd import stated_semantics
from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.integrations.neo4j_graphrag import GuidedRetriever
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.semantics import Semantics, merge_stated
from tests.conftest import sample_bundle
from tests.llm_server import llm_server

pytestmark = pytest.mark.neo4j

K = 5


@pytest.fixture
def env(settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> dict[str, str]:
    monkeypatch.chdir(str(tmp_path))  # no stray .env
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return {
        "NEO4J_URI": settings.neo4j_uri,
        "NEO4J_PASSWORD": settings.neo4j_password.get_secret_value(),
        "NEO4J_DATABASE": settings.neo4j_database,
        "GUIDEDRAG_SCHEMA_PRESET": "guidedrag",
    }


def _cases() -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """(question, stated entities, stated relations): three sample questions as stated, and
    the same three bare (the entities linked)."""
    questions = [q for q in sample_bundle().questions if q.answerable][:3]
    stated = [
        (q.question, tuple(q.semantics.entities), tuple(q.semantics.relations)) for q in questions
    ]
    return stated + [(q.question, (), ()) for q in questions]


def _flags(entities: Sequence[str], relations: Sequence[str]) -> list[str]:
    out: list[str] = []
    for name in entities:
        out += ["--entity", name]
    for name in relations:
        out += ["--relation", name]
    return out


_PARAM = re.compile(r"^:param (\w+) => (.*);$")


def run_browser_script(driver: Driver, script: str) -> list[str]:
    """What Browser does with the script: each ``:param`` expression evaluated by the server,
    then the last statement (the query) run with those parameters; the ids it returns."""
    params: dict[str, Any] = {}
    query_lines: list[str] = []
    for line in script.splitlines():
        match = _PARAM.match(line)
        if match:
            params[match.group(1)] = driver.execute_query(f"RETURN {match.group(2)} AS v").records[
                0
            ]["v"]
        elif not line.startswith("//"):
            query_lines.append(line)
    query = "\n".join(query_lines).rstrip().rstrip(";")
    return [str(r["id"]) for r in driver.execute_query(query, params).records]


@pytest.mark.parametrize("case", range(6))
def test_every_entry_point_returns_the_same_ids(
    case: int,
    sample_db: Driver,
    settings: Settings,
    embedder: Embedder,
    env: dict[str, str],
) -> None:
    question, entities, relations = _cases()[case]
    semantics = stated_semantics(entities, relations, None)
    with GuidedRAG(settings, driver=sample_db, embedder=embedder) as rag:
        expected = rag.retrieve(question, semantics=semantics, k=K)
        ids = [c.id for c in expected.chunks]
        assert expected.steering == "auto" and not expected.abstained and len(ids) == K
        if not entities:  # a bare question: what was linked is said, and ranked with
            assert expected.linked and expected.tier_sizes
            assert {"span", "entity", "match"} <= set(expected.linked[0])

        retriever = GuidedRetriever(sample_db, settings, rag=rag)
        searched = retriever.search(
            query_text=question,
            entities=list(entities) or None,
            relations=list(relations) or None,
            top_k=K,
        )
        assert [item.metadata["id"] for item in searched.items] == ids
        assert searched.metadata is not None and searched.metadata["steering"] == "auto"
        assert searched.metadata["tier_sizes"] == expected.tier_sizes

        with llm_server() as server:
            pipeline = GraphRAG(
                retriever=retriever,
                llm=OpenAILLM(model_name="test-model", base_url=server.base_url, api_key="k"),
            )
            config: dict[str, Any] = {"top_k": K}
            if entities:
                config["semantics"] = {"entities": list(entities), "relations": list(relations)}
            answered = pipeline.search(question, retriever_config=config, return_context=True)
        assert answered.retriever_result is not None
        assert [item.metadata["id"] for item in answered.retriever_result.items] == ids

    runner = CliRunner()
    cli_json = runner.invoke(
        cli, ["retrieve", question, *_flags(entities, relations), "-k", str(K), "--json"], env=env
    )
    assert cli_json.exit_code == 0, cli_json.output
    data = json.loads(cli_json.output)
    assert [c["id"] for c in data["chunks"]] == ids
    assert data["steering"] == "auto" and data["tier_sizes"] == expected.tier_sizes

    script = runner.invoke(
        cli, ["cypher", "--question", question, *_flags(entities, relations), "-k", str(K)], env=env
    )
    assert script.exit_code == 0, script.output
    assert ":param query_vector => [" in script.output and ":param tier_weights" in script.output
    assert run_browser_script(sample_db, script.output) == ids
    as_json = runner.invoke(
        cli,
        ["cypher", "--question", question, *_flags(entities, relations), "-k", str(K), "--json"],
        env=env,
    )
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.output)["chunk_ids"] == ids


def test_linked_names_never_abstain_and_stated_ones_do(
    sample_db: Driver, settings: Settings, embedder: Embedder
) -> None:
    from tests.probes import CountingEmbedder

    counting = CountingEmbedder(embedder)
    with GuidedRAG(settings, driver=sample_db, embedder=counting) as rag:  # type: ignore[arg-type]
        # no entity of the KB in the question: linking finds none, the question ranks over U
        bare = rag.retrieve("Who wrote the Zorblaxian Codex of Quuxville?", k=K)
        assert not bare.abstained and len(bare.chunks) == K and bare.linked == []
        assert any("linker found no entity" in n for n in bare.notes)
        calls = counting.calls
        stated = rag.retrieve(
            "Who wrote the Zorblaxian Codex of Quuxville?",
            semantics=Semantics(entities=("Zorblaxian Codex of Quuxville",)),
            k=K,
        )
        assert stated.abstained and stated.empty is not None
        assert stated.empty.kind == "unknown_entity"
        assert counting.calls == calls  # abstained before embedding: no vector search either
        off = rag.retrieve(sample_bundle().questions[0].question, k=K, link=False)
        assert off.linked == [] and off.tier_sizes == {}


def test_link_setting_turns_linking_off(
    sample_db: Driver, settings: Settings, embedder: Embedder
) -> None:
    question = sample_bundle().questions[0].question
    quiet = settings.model_copy(update={"link": False})
    with GuidedRAG(quiet, driver=sample_db, embedder=embedder) as rag:
        assert rag.retrieve(question, k=K).linked == []
        assert rag.retrieve(question, k=K, link=True).linked


def test_tool_parameters_are_typed_and_described(
    sample_db: Driver, settings: Settings, embedder: Embedder
) -> None:
    with GuidedRAG(settings, driver=sample_db, embedder=embedder) as rag:
        tool = GuidedRetriever(sample_db, settings, rag=rag).convert_to_tool(
            "kb_search", "Search the knowledge base"
        )
        schema = tool.get_parameters()
        props = schema["properties"]
        assert props["top_k"]["type"] == "integer" and props["top_k"]["minimum"] == 1
        assert props["entities"]["type"] == "array"
        assert all(not p["description"].startswith("Parameter ") for p in props.values())
        assert schema["required"] == ["query_text"]
        question = sample_bundle().questions[0].question
        out = tool.execute(query_text=question, top_k=K)
        assert [i.metadata["id"] for i in out.items] == [
            c.id for c in rag.retrieve(question, k=K).chunks
        ]


@pytest.mark.parametrize(
    ("entities", "relations"), [(["Euro"], []), (["Euro", "France"], []), (["Euro"], ["USES"])]
)
def test_every_door_reads_shorthands_as_the_cli_states_them(
    entities: list[str], relations: list[str]
) -> None:
    """GuidedRetriever, LangChain, LlamaIndex and MCP all turn ``entities``/``relations`` into
    semantics through ``merge_stated``: the same question type, complexity and relational flag as
    the CLI's ``--entity``/``--relation`` (so a calibrated policy steers every door alike)."""
    cli_side = stated_semantics(entities, relations, None)
    assert merge_stated(None, entities, relations) == cli_side
    assert merge_stated({"entities": entities}, None, relations) == cli_side
    # A field the caller set is kept, not inferred over.
    assert merge_stated({"entities": entities, "complexity": 1}).complexity == 1
    assert merge_stated(None) is None
