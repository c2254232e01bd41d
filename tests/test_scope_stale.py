"""A scope that held the whole KB when it was read is never trusted past a write.

A scope that holds every chunk runs the unscoped plan (identical rankings), and that fact is
kept per KB version for ``GUIDEDRAG_RESOLUTION_CACHE_S``. A reused instance must still never
rank, nor put in a prompt, a chunk written outside the scope after it was read: another
tenant's documents loaded while a deployment that held the whole KB keeps serving.
``pipeline/scoping.py: on_one_version`` and ``db/read_versions.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.pipeline import GuidedRAG
from tests.conftest import sample_bundle

QUESTION = sample_bundle().questions[12]
WHOLE = "source('wikipedia')"  # every document of the sample KB
INTRUDER = "0-tenant-b:stale-scope-probe"  # sorts first among equal scores


@pytest.fixture
def rag(settings: Settings, embedder: Embedder, own_sample_db: Driver) -> Iterator[GuidedRAG]:
    with GuidedRAG(settings, driver=own_sample_db, embedder=embedder) as pipeline:
        yield pipeline


@pytest.fixture
def intruder(own_sample_db: Driver) -> Iterator[Driver]:
    """After the test, the chunk and document it wrote are gone (the sample KB as it was)."""
    yield own_sample_db
    own_sample_db.execute_query(
        "MATCH (n) WHERE n.id IN [$id, $id + '#0'] DETACH DELETE n", id=INTRUDER
    )


def _write_intruder(driver: Driver, twin: str) -> None:
    """A document of another source with one chunk: ``twin``'s embedding and mentions, so it
    ranks first wherever ``twin`` ranks (cosine 1 to the query vector, the same tiers)."""
    driver.execute_query(
        "MATCH (t:Chunk {id: $twin}) "
        "CREATE (d:Document {id: $id, title: 'Stale scope probe', source: 'tenant-b'}) "
        "CREATE (c:Chunk {id: $id + '#0', text: 'TENANT-B-SECRET', position: 0, "
        "  embedding: t.embedding})-[:PART_OF]->(d) "
        "WITH t, c MATCH (t)-[:MENTIONS]->(e) CREATE (c)-[:MENTIONS]->(e)",
        twin=twin,
        id=INTRUDER,
    )


@pytest.mark.parametrize("call", ["stated", "soft", "ask"])
def test_a_whole_kb_scope_read_before_a_write_never_ranks_the_write(
    rag: GuidedRAG, intruder: Driver, call: str
) -> None:
    whole = rag.scoped(WHOLE)
    compiled = rag.selector.scope(whole.scope)
    assert compiled is not None and compiled.whole  # kept: the unscoped plan
    options = (
        {"selection": "all()", "steering": "soft"}
        if call == "soft"
        else {"semantics": QUESTION.semantics}
    )
    top = whole.retrieve(QUESTION.question, **options).chunks[0]
    vector = [float(x) for x in sample_bundle().embeddings[top.id]]
    _write_intruder(intruder, top.id)
    # The unscoped instance ranks the new chunk first: the probe is where the scope matters.
    unscoped = rag.retrieve(QUESTION.question, query_vector=vector, **options)
    assert unscoped.chunks[0].id == INTRUDER + "#0"
    if call == "ask":
        answer = whole.ask(QUESTION.question, query_vector=vector, **options)
        assert "TENANT-B-SECRET" not in answer.prompt.text
        chunks = answer.retrieval.chunks
    else:
        chunks = whole.retrieve(QUESTION.question, query_vector=vector, **options).chunks
    assert chunks and all(c.document_id != INTRUDER for c in chunks)
    again = rag.selector.scope(whole.scope)
    assert again is not None and not again.whole  # read again after the write


def test_the_async_door_reads_the_versions_too(
    rag: GuidedRAG, intruder: Driver, settings: Settings, embedder: Embedder
) -> None:
    """``aretrieve`` runs the same code in a greenlet: its reads' versions reach the check."""
    top = rag.scoped(WHOLE).retrieve(QUESTION.question, semantics=QUESTION.semantics).chunks[0]
    vector = [float(x) for x in sample_bundle().embeddings[top.id]]

    async def scoped_calls() -> list[str]:
        async with await GuidedRAG.aopen(settings, embedder=embedder, scope=WHOLE) as arag:
            warm = await arag.aretrieve(QUESTION.question, semantics=QUESTION.semantics)
            assert warm.chunks and arag.selector.scope(arag.scope).whole  # type: ignore[union-attr]
            _write_intruder(intruder, top.id)
            after = await arag.aretrieve(
                QUESTION.question, semantics=QUESTION.semantics, query_vector=vector
            )
            return [c.document_id for c in after.chunks]

    documents = asyncio.run(scoped_calls())
    assert documents and INTRUDER not in documents
