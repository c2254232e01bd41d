"""A scope on chunk properties (``{"filters": ...}``, neo4j-graphrag's filter syntax): the
common way a shared graph marks its tenants, alone or beside a selection, intersected into
every query like any scope, and never widened by a request's own filters.

Against the real server and the sample KB, whose chunks carry ``position`` 0, 1 or 2.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.selection.scope import Scope
from tests.conftest import sample_bundle

QUESTION = sample_bundle().questions[12]
FIRST = '{"filters": {"position": 0}}'  # the first chunk of every document


@pytest.fixture
def rag(settings: Settings, embedder: Embedder, sample_db: Driver) -> Iterator[GuidedRAG]:
    with GuidedRAG(settings, driver=sample_db, embedder=embedder) as pipeline:
        yield pipeline


def test_a_property_scope_parses_alone_beside_a_selection_and_narrows() -> None:
    alone = Scope.parse(FIRST, where="GUIDEDRAG_SCOPE")
    assert alone is not None and alone.filters == {"position": 0}
    both = Scope.parse(
        {"selection": "source('wikipedia')", "filters": {"position": {"$lte": 1}}}, where="t"
    )
    assert both is not None and "source('wikipedia')" in both.text
    narrowed = both.narrowed(alone)
    assert narrowed.filters == {"$and": [{"position": {"$lte": 1}}, {"position": 0}]}
    assert narrowed.expr == both.expr
    # a selection's own JSON form (it has "op") is still a selection
    assert Scope.parse({"op": "source", "name": "wikipedia"}, where="t") is not None
    for bad, words in (
        ({"filter": {"position": 0}}, 'takes "selection" and/or "filters"'),
        ({"filters": [1]}, "is an object"),
        ({"filters": {"position": {"$near": 1}}}, "unknown operator"),
    ):
        with pytest.raises(ConfigurationError) as caught:
            Scope.parse(bad, where="GUIDEDRAG_SCOPE")
        message = str(caught.value)
        assert message.startswith("GUIDEDRAG_SCOPE: ") and words in message
        assert "\n" not in message


@pytest.mark.parametrize(
    "call",
    [
        {"semantics": QUESTION.semantics},  # auto, stated
        {},  # auto, bare
        {"selection": "all()", "steering": "soft"},
        {"selection": "all()", "steering": "hard"},
        {"filters": {"position": {"$gte": 0}}},  # a request filter cannot widen it
    ],
)
def test_every_call_ranks_only_chunks_that_pass_the_scope(
    rag: GuidedRAG, call: dict[str, object]
) -> None:
    unscoped = rag.retrieve(QUESTION.question, k=10, **call)
    top = [c.id for c in unscoped.chunks[:3]]
    assert top
    scope = {"filters": {"id": {"$nin": top}}}  # the unscoped top three are out of scope
    scoped = rag.scoped(scope).retrieve(QUESTION.question, k=10, **call)
    assert scoped.chunks and not {c.id for c in scoped.chunks} & set(top)
    beside = rag.scoped({"selection": "source('wikipedia')", **scope})
    ids = {c.id for c in beside.retrieve(QUESTION.question, k=10, **call).chunks}
    assert ids and not ids & set(top)


def test_a_property_no_chunk_has_is_one_line_naming_it(rag: GuidedRAG) -> None:
    with pytest.raises(ConfigurationError) as caught:
        rag.scoped('{"filters": {"tenantt": "acme"}}').retrieve(QUESTION.question)
    assert "'tenantt'" in str(caught.value) and "\n" not in str(caught.value)


def test_a_property_scope_that_passes_nothing_abstains(rag: GuidedRAG) -> None:
    result = rag.scoped('{"filters": {"position": 99}}').retrieve(QUESTION.question)
    assert not result.chunks and result.empty is not None
    assert result.empty.kind == "empty_scope"
