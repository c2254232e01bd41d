"""docs/serving.md's FastAPI app, run as written: a lifespan opens one ``AsyncDriver`` and one
``GuidedRAG`` (``aopen``), ``/retrieve`` awaits ``aretrieve`` on it and ``/retrieve/own`` on a
``GuidedRAG`` opened per request on the same driver.

FastAPI's ``TestClient`` (the lifespan runs, the routes run on its event loop) against the real
server and the sample KB: both routes return the ids and abstentions ``GuidedRAG.retrieve``
returns for stated, bare and abstaining questions; a blank question is a 422 with the core's
one line.
"""

from __future__ import annotations

import re
import sys
import types
from collections.abc import Iterator
from typing import Any

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.retrieve_args import QUESTION_EMPTY
from guidedrag_graph.semantics import Semantics
from tests.conftest import REPO_ROOT, sample_bundle

pytest.importorskip("fastapi")
pytestmark = pytest.mark.neo4j

UNKNOWN = "No Such Entity Anywhere"


def example() -> types.ModuleType:
    """The python block of the FastAPI section of docs/serving.md, as a module."""
    text = (REPO_ROOT / "docs" / "serving.md").read_text("utf-8").split("## FastAPI", 1)[1]
    match = re.search(r"^```python\n(.*?)^```", text, re.M | re.S)
    assert match, "docs/serving.md has no python block under ## FastAPI"
    module = types.ModuleType("serving_example")
    sys.modules[module.__name__] = module  # pydantic resolves the body model's annotations here
    code = compile(match.group(1), "docs/serving.md", "exec", dont_inherit=True)  # as a file
    exec(code, module.__dict__)
    return module


@pytest.fixture
def rag(settings: Settings, embedder: Embedder, sample_db: Driver) -> Iterator[GuidedRAG]:
    # Per test, opened after the sample KB is in place: cheap (the KB's state is shared per
    # driver), and it observes the database's version after any reload (context.KBState).
    with GuidedRAG(settings, driver=sample_db, embedder=embedder) as pipeline:
        yield pipeline


def cases() -> list[dict[str, Any]]:
    questions = sample_bundle().questions[:2]
    out: list[dict[str, Any]] = []
    for q in questions:
        assert q.semantics is not None
        out.append({"question": q.question, "entities": list(q.semantics.entities), "k": 3})
        out.append({"question": q.question})  # bare: linked
    out.append({"question": questions[0].question, "entities": [UNKNOWN]})
    return out


def test_the_fastapi_example_serves_what_retrieve_returns(
    sample_db: Driver, rag: GuidedRAG, settings: Settings
) -> None:
    from fastapi.testclient import TestClient

    want = []
    for body in cases():
        entities = body.get("entities")
        semantics = Semantics(entities=tuple(entities)) if entities else None
        result = rag.retrieve(body["question"], semantics=semantics, k=body.get("k"))
        want.append(([c.id for c in result.chunks], result.abstained))
    assert [abstained for _, abstained in want] == [False] * 4 + [True]

    app = example().create_app(settings)
    with TestClient(app) as client:
        for route in ("/retrieve/own", "/retrieve"):  # the shared driver outlives a request's
            got = []
            for body in cases():
                response = client.post(route, json=body)
                assert response.status_code == 200, response.text
                data = response.json()
                got.append(([c["id"] for c in data["chunks"]], data["abstained"]))
            assert got == want, route
            gone = client.post(route, json=cases()[-1]).json()
            assert UNKNOWN in gone["reason"] and gone["chunks"] == []
        refused = client.post("/retrieve", json={"question": "  "})
        assert refused.status_code == 422 and refused.json() == {"detail": QUESTION_EMPTY}
