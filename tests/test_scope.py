"""Scopes that hold (issue 35), the query side: a trusted scope is intersected into every
ranking and selection query, and nothing a request passes can widen it.

Against the real server and the sample KB. Each ranking case picks the scope "every document
but the one holding the unscoped top chunk", so the chunk that would rank first without the
scope must be absent with it, and every returned chunk must be in scope.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.pipeline.request import RetrieveRequest
from guidedrag_graph.selection import Intersect, all_, document, entity, parse
from guidedrag_graph.selection.scope import Scope
from guidedrag_graph.semantics import Semantics
from tests.conftest import sample_bundle
from tests.template_scripts import as_written, browser_params

# Its first entity is mentioned in three documents: with the top chunk's document out of scope
# it is still mentioned in scope, so stated calls rank (an entity only outside the scope is
# unknown there, docs/security.md "What a scope hides"; questions[0]'s has one document).
QUESTION = sample_bundle().questions[12]
ENTITY = QUESTION.semantics.entities[0] if QUESTION.semantics else ""
STATED = Semantics(entities=(ENTITY,))


@pytest.fixture
def rag(settings: Settings, embedder: Embedder, sample_db: Driver) -> Iterator[GuidedRAG]:
    with GuidedRAG(settings, driver=sample_db, embedder=embedder) as pipeline:
        yield pipeline


def in_scope(rag: GuidedRAG, scope: Any) -> set[str]:
    """The chunks a scope holds, by the (unscoped) selector."""
    parsed = Scope.parse(scope, where="test")
    assert parsed is not None
    return set(rag.selector.chunk_ids(parsed.expr))


def without_top(rag: GuidedRAG, call: dict[str, Any]) -> tuple[str, str]:
    """The unscoped top chunk of ``call`` and the scope that excludes its document."""
    unscoped = rag.retrieve(QUESTION.question, **call)
    assert unscoped.chunks, call
    top = unscoped.chunks[0]
    scope = (all_() - document(top.document_id)).to_text()
    return top.id, scope


# --------------------------------------------------------------------------- the Scope itself
def test_a_scope_parses_every_form_and_refuses_walks_in_one_line() -> None:
    dsl = Scope.parse("document('A') | source('wiki')", where="GUIDEDRAG_SCOPE")
    assert dsl is not None and dsl.text == "document('A') | source('wiki')" and dsl.key == dsl.text
    as_json = Scope.parse({"op": "document", "name": "A"}, where="x")
    assert as_json is not None and as_json.expr == document("A")
    assert Scope.parse('{"op": "document", "name": "A"}', where="x") == as_json
    assert Scope.parse(document("A"), where="x") == as_json
    assert Scope.parse(as_json, where="x") is as_json
    assert Scope.parse(None, where="x") is None and Scope.parse("all()", where="x") is None
    narrowed = dsl.narrowed("date(2000, 2010)")
    assert narrowed.expr == Intersect(dsl.expr, parse("date(2000, 2010)"))
    assert dsl.narrowed(None) is dsl and dsl.narrowed("all()") is dsl
    for bad, named in [
        ("hop('Rome', ['X'])", "hop()"),
        ("near('Rome')", "near()"),
        ("document('A') | khop('Rome', 2)", "khop()"),
        ("boost(entity('A'): 0.1)", "boost()"),
        ("document('A'", "not a valid selection"),
        ("  ", "empty text"),
        ("x" * 1_000_001, "the limit is"),
    ]:
        with pytest.raises(ConfigurationError) as err:
            Scope.parse(bad, where="--scope")
        message = str(err.value)
        assert message.startswith("--scope: ") and named in message and "\n" not in message
    with pytest.raises(ConfigurationError, match="not int"):
        Scope.parse(3, where="scope=")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- every steering
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("auto, stated", {"semantics": STATED}),
    ("auto, linked", {}),
    ("auto, no entity", {"link": False}),
    ("auto, filters", {"semantics": STATED, "filters": {"position": {"$gte": 0}}}),
    ("hard", {"selection": f"entity({ENTITY!r}) | all()", "steering": "hard"}),
    ("hard, all()", {"selection": "all()", "steering": "hard"}),
    ("hard, filters", {"selection": "all()", "filters": {"position": {"$gte": 0}}}),
    ("hard, index", {"selection": f"entity({ENTITY!r}) | all()", "path": "index"}),
    (
        "hard, walks and set operations",
        {
            "selection": f"(near({ENTITY!r}, 2) | hop({ENTITY!r}, ['PUBLISHED_BY'])) ^ "
            f"(all() - khop({ENTITY!r}, 1)) & all()",
            "steering": "hard",
        },
    ),
    ("soft", {"selection": f"entity({ENTITY!r})", "steering": "soft"}),
    ("soft, all()", {"selection": "all()", "steering": "soft"}),
]


@pytest.mark.parametrize("call", [c for _, c in CALLS], ids=[n for n, _ in CALLS])
def test_every_steering_ranks_only_inside_the_scope(rag: GuidedRAG, call: dict[str, Any]) -> None:
    top, scope = without_top(rag, call)
    allowed = in_scope(rag, scope)
    assert top not in allowed
    scoped = rag.scoped(scope).retrieve(QUESTION.question, k=5, **call)
    ids = [c.id for c in scoped.chunks]
    assert ids and set(ids) <= allowed and top not in ids
    ran = [scoped.cypher, *scoped.queries]  # the index path's members query carries it
    assert any("scope_u" in q for q in ran)


def test_request_inputs_cannot_widen_the_scope(rag: GuidedRAG) -> None:
    top, scope = without_top(rag, {"semantics": STATED})
    outside = rag.retrieve(QUESTION.question, semantics=STATED).chunks[0].document_id
    allowed = in_scope(rag, scope)
    view = rag.scoped(scope)
    hostile: list[dict[str, Any]] = [
        {"selection": "all()"},
        {"selection": f"document({outside!r}) | entity({ENTITY!r})"},
        {"selection": f"document({outside!r})", "steering": "soft"},
        {"filters": {"id": top}},
        {"filters": {"$or": [{"id": top}, {"position": {"$gte": 0}}]}, "semantics": STATED},
        {"semantics": Semantics(entities=(ENTITY,), relations=("PUBLISHED_BY",))},
    ]
    for call in hostile:
        result = view.retrieve(QUESTION.question, **call)
        assert {c.id for c in result.chunks} <= allowed and top not in [
            c.id for c in result.chunks
        ], call
    # a request built without the scope, run by the scoped view: the view's scope still holds
    request = RetrieveRequest.build(QUESTION.question, settings=rag.settings, semantics=STATED)
    assert request.scope is None
    result = view.retrieve_request(request)
    assert result.chunks and {c.id for c in result.chunks} <= allowed


def test_narrowing_never_widens(rag: GuidedRAG, settings: Settings, sample_db: Driver) -> None:
    first, second = (c.document_id for c in rag.retrieve(QUESTION.question).chunks[:2])
    x = f"document({first!r}) | document({second!r})"
    y = f"all() - document({first!r})"
    both = rag.scoped(x).scoped(y)
    assert both.scope is not None and both.scope.expr == Intersect(parse(x), parse(y))
    assert rag.scope is None  # the view is a view
    ids = {c.id for c in both.retrieve(QUESTION.question).chunks}
    assert ids and ids <= in_scope(rag, x) & in_scope(rag, y)
    assert both.scoped("all()").scope == both.scope
    # GUIDEDRAG_SCOPE, narrowed by the constructor's scope
    deployment = settings.model_copy(update={"scope": x})
    with GuidedRAG(deployment, driver=sample_db, scope=y) as narrowed:
        assert narrowed.scope == both.scope
        assert {c.id for c in narrowed.retrieve(QUESTION.question).chunks} == ids
        # a view's close leaves its parent's driver open
        narrowed.scoped(x).close()
        assert narrowed.retrieve(QUESTION.question).chunks


class _Counting:
    """The real embedder, counting the questions it embeds."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.queries = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        self.queries += 1
        return self.inner.embed_queries(texts)


class _NoLLM:
    """An LLM client any use of which fails the test."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the LLM client was used ({name})")


@pytest.mark.parametrize(
    "scope",
    ["document('No Such Document Anywhere')", "FIRST & SECOND"],
    ids=["unknown document", "resolves, holds nothing"],
)
def test_an_empty_scope_abstains_before_embedding_or_the_llm(
    settings: Settings, embedder: Embedder, sample_db: Driver, scope: str
) -> None:
    counting = _Counting(embedder)
    with GuidedRAG(
        settings,
        driver=sample_db,
        embedder=counting,  # type: ignore[arg-type]
        llm_client=_NoLLM(),  # type: ignore[arg-type]
    ) as rag:
        docs = [c.document_id for c in rag.retrieve(QUESTION.question, link=False).chunks]
        counting.queries = 0
        scope = scope.replace("FIRST", f"document({docs[0]!r})")
        scope = scope.replace("SECOND", f"document({docs[1]!r})")
        view = rag.scoped(scope)
        for call in ({}, {"semantics": STATED}, {"selection": "all()", "steering": "soft"}):
            result = view.retrieve(QUESTION.question, **call)
            assert result.chunks == [] and result.empty is not None
            assert result.empty.kind == "empty_scope" and "scope" in result.empty.message
            assert "No Such Document" not in result.empty.message  # the scope's terms stay put
        answer = view.ask(QUESTION.question, semantics=STATED)
        assert answer.abstained and "scope" in (answer.reason or "")
        assert counting.queries == 0


def test_a_scope_holding_the_whole_kb_ranks_exactly_as_none(rag: GuidedRAG) -> None:
    whole = rag.scoped("source('wikipedia')")
    compiled = rag.selector.scope(whole.scope)
    assert compiled is not None and compiled.whole and not compiled.empty
    for q in sample_bundle().questions[:5]:
        for call in ({"semantics": q.semantics}, {}, {"selection": "all()", "steering": "soft"}):
            plain = rag.retrieve(q.question, **call)
            scoped = whole.retrieve(q.question, **call)
            assert [(c.id, c.score) for c in scoped.chunks] == [
                (c.id, c.score) for c in plain.chunks
            ]
            assert scoped.cypher == plain.cypher


# --------------------------------------------------------------------------- select and cypher
def test_select_sizes_ids_and_the_browser_script_stay_in_scope(
    rag: GuidedRAG, sample_db: Driver
) -> None:
    from guidedrag_graph.cli.scoped_selection import prepare_in_scope, selected
    from guidedrag_graph.cli.select_cmd import browser_script

    _, scope = without_top(rag, {"semantics": STATED})
    ranked = rag.retrieve(QUESTION.question, semantics=STATED).chunks
    outside = ranked[0].document_id
    inside = next(c.document_id for c in ranked if c.document_id != outside)
    allowed = in_scope(rag, scope)
    expr = document(outside) | entity(ENTITY) | document(inside)
    unscoped_ids = set(rag.selector.chunk_ids(expr))
    assert unscoped_ids - allowed  # the selection reaches outside the scope
    found = prepare_in_scope(rag.selector, expr, Scope.parse(scope, where="t"))
    tree, ids, empty = selected(rag.selector, found)
    assert set(ids) == unscoped_ids & allowed and empty is None
    assert tree.size == len(ids) and tree.children[0].children[0].size == 0  # document(outside)
    script = browser_script(found.prepared, rag.schema)
    assert "scope_u" in script and ":param scp_" in script
    rows = [
        r
        for statement in as_written(script)
        for r in sample_db.execute_query(statement, browser_params(sample_db, script)).records
    ]
    assert rows and {r["chunk_id"] for r in rows} == set(ids)
    # the selection only outside: empty, and never explained from outside the scope
    alone = prepare_in_scope(rag.selector, document(outside), Scope.parse(scope, where="t"))
    _, none, why = selected(rag.selector, alone)
    # a document outside the scope is unknown there, as one the KB lacks ("What a scope hides")
    assert none == [] and why is not None and why.kind == "empty_term"


@pytest.mark.parametrize(
    "update",
    [{"planner_tier_list_max": 1}, {"planner_exact_max": 1}, {"rank_plugin": "off"}],
    ids=["tiers unlisted", "tiers and U from the index", "no plugin"],
)
def test_auto_stays_in_scope_on_every_way_it_ranks_tiers(
    settings: Settings, embedder: Embedder, sample_db: Driver, update: dict[str, Any]
) -> None:
    """An unlisted tier (select_mentioned: tested by its entities) and tiers or U taken from
    the index's over-fetched top stay inside the scope: their candidates are U's, and U is."""
    with GuidedRAG(settings.model_copy(update=update), driver=sample_db, embedder=embedder) as rag:
        for call in ({"semantics": STATED}, {}):
            top, scope = without_top(rag, call)
            allowed = in_scope(rag, scope)
            scoped = rag.scoped(scope).retrieve(QUESTION.question, **call)
            ids = [c.id for c in scoped.chunks]
            assert ids and set(ids) <= allowed and top not in ids, (update, call)
            if "planner_tier_list_max" in update and call:  # its tier E went unlisted
                assert -1 in scoped.tier_sizes.values(), scoped.tier_sizes


def test_a_scope_listing_hundreds_of_documents_is_one_subquery(rag: GuidedRAG) -> None:
    """Past a request's term limit (200), as the trusted side writes a half-KB scope; its
    union of document() terms is one select_document over every id, not one CALL each."""
    every = sorted({d.id for d in sample_bundle().documents})
    documents = every[: len(every) * 2 // 3]
    assert len(documents) > 200
    text = " | ".join(f"document({d!r})" for d in documents) + " | document('No Such Doc')"
    compiled = rag.selector.scope(Scope.parse(text, where="GUIDEDRAG_SCOPE"))
    assert compiled is not None and not compiled.empty and not compiled.whole
    assert compiled.prelude.count("MATCH (d:") == 1
    assert sorted(compiled.params["scp_0_ids"]) == documents
    wanted = set(documents)
    chunks = {c.id for c in sample_bundle().chunks if c.document_id in wanted}
    assert compiled.size == len(chunks)
    ids = {c.id for c in rag.scoped(text).retrieve(QUESTION.question, k=20).chunks}
    assert ids and ids <= chunks
