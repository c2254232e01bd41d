"""Which path ranks inside a scope (issue 35, deliverable 3; docs/security.md "Which path ranks
inside it"), against numpy's exact ranking of the scope's own chunks.

On the sample KB with the planner's exact limit lowered (``planner_exact_max``), so scopes of a
few dozen to a few hundred chunks are "large": every call must return numpy's exact top k inside
the scope. Where the vector index declares the chunk id (migration V0005), ``auto``'s U is read
with a SEARCH filtered by the scope's ids and a hard selection goes through ``search_in``; where
it does not (recreated here without it, as a 5.26 server or a user's own index), the planner's
exact paths rank the scope, and past the scope's exact budget the result says that recall may be
partial. Before, auto's U came from the index's top over the whole KB, kept to the scope: a
scope that is a small fraction of the KB lost most of its top k.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.db.connection import connect
from guidedrag_graph.pipeline import GuidedRAG, RetrievalResult
from guidedrag_graph.schema.presets import PRESETS
from guidedrag_graph.selection.evaluator import evaluate_tiers
from guidedrag_graph.semantics import Semantics
from guidedrag_graph.steering.tiers import plan_auto
from guidedrag_graph.testing.retrieval_conformance import Snapshot, snapshot
from tests.conftest import sample_bundle, wipe

pytestmark = pytest.mark.neo4j

K = 5
EXACT_MAX = 20  # the planner's exact limit here: every scope below is larger
SIZES = (40, 120, 300)  # scope sizes in chunks, of the sample KB's 397
QUESTIONS = [q for q in sample_bundle().questions if q.answerable][:4]
INDEX_WITHOUT_ID = (
    "CREATE VECTOR INDEX chunk_embedding FOR (c:Chunk) ON c.embedding "
    "OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}}"
)
INDEX_WITH_ID = (
    "CREATE VECTOR INDEX chunk_embedding FOR (c:Chunk) ON c.embedding WITH [c.id] "
    "OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}}"
)


def _scope(question: int, size: int) -> tuple[dict[str, Any], set[str]]:
    """A property scope of ``size`` chunks (whole documents) holding the question's entities'
    chunks, the rest drawn with a seed; and its chunk ids, from the bundle (not the library)."""
    bundle = sample_bundle()
    named = set(QUESTIONS[question].semantics.entities)
    docs = {c.document_id for c in bundle.chunks if named & set(c.entities)}
    others = sorted({c.document_id for c in bundle.chunks} - docs)
    random.Random(question * 1000 + size).shuffle(others)
    by_doc: dict[str, int] = {}
    for c in bundle.chunks:
        by_doc[c.document_id] = by_doc.get(c.document_id, 0) + 1
    held = sum(by_doc[d] for d in docs)
    for d in others:
        if held >= size:
            break
        docs.add(d)
        held += by_doc[d]
    ids = {c.id for c in bundle.chunks if c.document_id in docs}
    return {"filters": {"document_id": {"$in": sorted(docs)}}}, ids


def _exact_top(snap: Snapshot, query: np.ndarray, boosts: dict[str, float], among: set[str]):
    """numpy's top K of ``among`` (the conformance suite's reference ranking, at this K)."""
    return snap.ranked(query, boosts, among, k=K)


def _calls(rag: GuidedRAG, question: int, size: int, snap: Snapshot) -> Iterator[tuple[str, Any]]:
    """(form, result, numpy's ids) for auto with the stated entities, bare auto and hard all()."""
    scope, among = _scope(question, size)
    view = rag.scoped(scope)
    query = np.random.default_rng(question).normal(size=384)
    vector = [float(x) for x in query]
    semantics = Semantics(entities=QUESTIONS[question].semantics.entities)
    expr = plan_auto(semantics, rag.policy.tier_weights(semantics)).boost()
    assert expr is not None
    tiers = evaluate_tiers(expr, snap.graph, hop_cap=rag.settings.hop_cap)
    boosts = {c: w for c, (w, _) in tiers.items()}
    common: dict[str, Any] = {"k": K, "query_vector": vector, "link": False}
    yield (
        "auto+entity",
        view.retrieve("q", semantics=semantics, **common),
        _exact_top(snap, query, boosts, among),
        among,
    )
    yield "auto", view.retrieve("q", **common), _exact_top(snap, query, {}, among), among
    yield (
        "hard",
        view.retrieve("q", "all()", steering="hard", **common),
        _exact_top(snap, query, {}, among),
        among,
    )


@pytest.fixture(params=["plugin", "no plugin"])
def tuned(request: pytest.FixtureRequest, settings: Settings) -> Settings:
    """The test server's settings with the exact limit lowered, with the plugin or without."""
    update: dict[str, Any] = {"planner_exact_max": EXACT_MAX}
    if request.param == "no plugin":
        update["rank_plugin"] = "off"
    return settings.model_copy(update=update)


@pytest.fixture
def rag(tuned: Settings, own_sample_db: Driver) -> Iterator[GuidedRAG]:
    with GuidedRAG(tuned, driver=own_sample_db) as pipeline:
        yield pipeline


@pytest.fixture
def index_without_id(own_sample_db: Driver, tuned: Settings) -> Iterator[GuidedRAG]:
    """The sample KB's chunk index recreated without the chunk id (as a 5.26 server's, or a
    user's own index, cannot filter by it), seen through a new driver (server facts are kept
    per driver). Afterwards the database is wiped, so the next own_sample_db reader reloads the KB
    as it was (an index recreated over loaded chunks is another HNSW graph: the filtered-SEARCH
    rows of the test above differ on it)."""
    yield from rebuilt_index(own_sample_db, tuned, INDEX_WITHOUT_ID)


def rebuilt_index(own_sample_db: Driver, tuned: Settings, create: str) -> Iterator[GuidedRAG]:
    """A ``GuidedRAG`` on a new driver (server facts are kept per driver) over the sample KB's
    chunk index dropped and made again by ``create``; the database wiped afterwards, so the next
    own_sample_db reader reloads the KB as it was (an index recreated over loaded chunks is another
    HNSW graph, on which filtered-SEARCH rows can differ)."""
    own_sample_db.execute_query("DROP INDEX chunk_embedding IF EXISTS")
    own_sample_db.execute_query(create)
    own_sample_db.execute_query("CALL db.awaitIndexes(300)")
    fresh = connect(tuned)
    try:
        with GuidedRAG(tuned, driver=fresh) as pipeline:
            yield pipeline
    finally:
        fresh.close()
        wipe(own_sample_db)


def _notes(result: RetrievalResult) -> str:
    return " | ".join(result.notes)


def test_a_large_scope_ranks_in_the_index_and_returns_numpys_exact_top_k(
    rag: GuidedRAG, own_sample_db: Driver
) -> None:
    snap = snapshot(own_sample_db, rag.settings.neo4j_database, PRESETS["guidedrag"])
    checked = 0
    for question in range(len(QUESTIONS)):
        for size in SIZES:
            for form, result, want, among in _calls(rag, question, size, snap):
                got = [c.id for c in result.chunks]
                assert set(got) <= among, (form, size, "a chunk outside the scope")
                assert got == want, (form, question, size, result.path, result.notes)
                if form == "auto+entity":  # U inside the scope, by a filtered SEARCH
                    assert "ranked in the vector index, the SEARCH filtered" in _notes(result)
                elif form == "hard":
                    assert result.path == "search_in", (form, size, result.path)
                checked += 1
    assert checked == len(QUESTIONS) * len(SIZES) * 3


def test_without_a_filterable_index_the_scope_ranks_exactly_or_says_recall_may_be_partial(
    index_without_id: GuidedRAG, own_sample_db: Driver
) -> None:
    rag = index_without_id
    snap = snapshot(own_sample_db, rag.settings.neo4j_database, PRESETS["guidedrag"])
    exact = "plugin" if rag.graph.rank_plugin else "exact"
    for question in range(len(QUESTIONS)):
        for size in SIZES:
            for form, result, want, among in _calls(rag, question, size, snap):
                got = [c.id for c in result.chunks]
                assert set(got) <= among, (form, size, "a chunk outside the scope")
                assert got == want, (form, question, size, result.path, result.notes)
                assert "ranked exactly" in _notes(result), (form, size, result.notes)
                assert "cannot filter by chunk id" in _notes(result), (form, size, result.notes)
                if form != "auto+entity":
                    assert result.path == exact, (form, size, result.path)
    # past the scope's exact budget: still inside the scope, and the result says so
    small = rag.settings.model_copy(update={"planner_scope_exact_max": 30})
    with GuidedRAG(small, driver=rag.graph.driver) as tight:
        for form, result, _, among in _calls(tight, 0, SIZES[-1], snap):
            assert {c.id for c in result.chunks} <= among, form
            assert "recall may be partial" in _notes(result), (form, result.notes)
