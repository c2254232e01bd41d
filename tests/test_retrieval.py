"""Retrieval inside Neo4j: the planner's paths agree, MMR diversifies, soft steering boosts.

Every test here runs twice: with the ``guidedrag.rank`` plugin (the session server has it) and
with it switched off, so the planner takes the pure-Cypher paths a server without it would.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.db.connection import procedure_available, server_info
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.retrieval import RANK_PROCEDURE, AllChunks, ChunkIdSelection, Retriever, mmr
from tests.vectors import DIM, numpy_top, unit, write_chunks

pytestmark = pytest.mark.neo4j


@pytest.fixture(autouse=True, params=["plugin", "cypher"])
def rank_mode(
    request: pytest.FixtureRequest,
    settings: Settings,
    driver: Driver,
    monkeypatch: pytest.MonkeyPatch,
) -> str:
    """Plugin present (it must be: the test server is started with it) or treated as absent."""
    mode = str(request.param)
    if mode == "plugin":
        assert procedure_available(driver, RANK_PROCEDURE, settings.neo4j_database), (
            "the test server lacks the guidedrag.rank plugin: start it after "
            "`guidedrag neo4j install --home <its home>` (conftest and .ci/run do)"
        )
    monkeypatch.setattr(settings, "rank_plugin", "auto" if mode == "plugin" else "off")
    return mode


def exact_path(mode: str) -> str:
    return "plugin" if mode == "plugin" else "exact"


@pytest.fixture
def random_kb(migrated_db: Driver) -> tuple[Driver, dict[str, np.ndarray], np.ndarray]:
    rng = np.random.default_rng(7)
    vectors = {f"c{i:02d}": unit(rng.normal(size=DIM)) for i in range(60)}
    write_chunks(migrated_db, vectors)
    query = unit(vectors["c03"] + vectors["c11"] + 0.5 * rng.normal(size=DIM) / np.sqrt(DIM))
    return migrated_db, vectors, query


def test_three_paths_return_the_same_exact_top_k(
    random_kb: tuple[Driver, dict[str, np.ndarray], np.ndarray], settings: Settings, rank_mode: str
) -> None:
    """Quantization is off (migration V0003 on 2026.06+), so on a small graph every path is exact.

    On 5.26 there is no filtered SEARCH: that path must refuse with a clear error instead.
    """
    driver, vectors, query = random_kb
    retriever = Retriever(GraphContext.open(settings, driver))
    ids = sorted(vectors)[::2]  # 30 of 60 chunks; c03 is outside, c11 inside
    selection = ChunkIdSelection(tuple(ids))
    expected = numpy_top(vectors, ids, query, 5)
    paths = ["exact", "index"]
    if retriever.graph.rank_plugin:
        paths.append("plugin")
    else:
        with pytest.raises(ConfigurationError, match=r"guidedrag\.rank"):
            retriever.rank(query, selection, k=5, path="plugin")
    if retriever.graph.server.supports_search_in_filter:
        paths.append("search_in")
    else:
        with pytest.raises(ConfigurationError, match=r"2026\.06"):
            retriever.rank(query, selection, k=5, path="search_in")
    results = {path: retriever.rank(query, selection, k=5, path=path) for path in paths}
    for path, ranking in results.items():
        assert [c.id for c in ranking.chunks] == expected, path
        assert ranking.path == path
        assert ranking.selection_size == 30
        assert all(c.in_selection for c in ranking.chunks)
    # Both scores are reported and consistent: score = (1 + cos) / 2, cos matches numpy.
    for chunk in results[exact_path(rank_mode)].chunks:
        assert chunk.score == pytest.approx((1 + chunk.cosine) / 2, abs=1e-6)
        assert chunk.cosine == pytest.approx(float(vectors[chunk.id] @ query), abs=1e-5)
        assert chunk.document_title == "Test document"


def test_planner_follows_size_and_server(
    random_kb: tuple[Driver, dict[str, np.ndarray], np.ndarray], settings: Settings, rank_mode: str
) -> None:
    driver, _vectors, query = random_kb
    small = ChunkIdSelection(("c01", "c02", "c03"))
    assert Retriever(GraphContext.open(settings, driver)).rank(
        query, small, k=2
    ).path == exact_path(rank_mode)
    assert (
        Retriever(GraphContext.open(settings, driver)).rank(query, AllChunks(), k=2).path == "index"
    )
    tight = settings.model_copy(update={"planner_exact_max": 2})
    retriever = Retriever(GraphContext.open(tight, driver))
    expected = "search_in" if retriever.graph.server.supports_search_in_filter else "index"
    ranking = retriever.rank(query, small, k=2)
    assert ranking.path == expected
    assert ranking.chunks[0].id == "c03"


def test_base_rag_over_u_matches_numpy(
    random_kb: tuple[Driver, dict[str, np.ndarray], np.ndarray], settings: Settings
) -> None:
    driver, vectors, query = random_kb
    ranking = Retriever(GraphContext.open(settings, driver)).rank(query, None, k=5)
    assert [c.id for c in ranking.chunks] == numpy_top(vectors, sorted(vectors), query, 5)
    assert ranking.selection_size is None
    assert all(c.in_selection is None for c in ranking.chunks)


def test_threshold_is_on_raw_cosine(
    random_kb: tuple[Driver, dict[str, np.ndarray], np.ndarray], settings: Settings
) -> None:
    driver, vectors, query = random_kb
    cut = float(vectors["c11"] @ query) - 1e-4
    ranking = Retriever(GraphContext.open(settings, driver)).rank(query, None, k=5, threshold=cut)
    assert {c.id for c in ranking.chunks} == {
        cid for cid, v in vectors.items() if float(v @ query) >= cut
    }
    assert all(c.cosine >= cut for c in ranking.chunks)


def test_soft_steering_boosts_members_and_fills_from_u(
    random_kb: tuple[Driver, dict[str, np.ndarray], np.ndarray], settings: Settings
) -> None:
    driver, vectors, query = random_kb
    weak = sorted(vectors, key=lambda cid: float(vectors[cid] @ query))[:2]  # least similar
    selection = ChunkIdSelection(tuple(weak))
    fill = settings.model_copy(update={"soft_boost": 2.0})  # β > 1: members first, then U
    ranking = Retriever(GraphContext.open(fill, driver)).rank(
        query, selection, k=5, steering="soft"
    )
    ids = [c.id for c in ranking.chunks]
    assert set(ids[:2]) == set(weak)
    assert ids[2:] == numpy_top(vectors, sorted(vectors), query, 3)
    assert [c.in_selection for c in ranking.chunks] == [True, True, False, False, False]
    # A small β cannot lift the weakest chunks over strong non-members.
    mild = settings.model_copy(update={"soft_boost": 0.01})
    ids = [
        c.id
        for c in Retriever(GraphContext.open(mild, driver))
        .rank(query, selection, k=5, steering="soft")
        .chunks
    ]
    assert not set(ids) & set(weak)
    # Hard steering returns only the 2 members.
    hard = Retriever(GraphContext.open(settings, driver)).rank(query, selection, k=5)
    assert {c.id for c in hard.chunks} == set(weak)


def diversity(vectors: dict[str, np.ndarray], ids: list[str]) -> float:
    """Mean pairwise cosine among the chosen chunks (lower = more diverse)."""
    sims = [float(vectors[a] @ vectors[b]) for i, a in enumerate(ids) for b in ids[i + 1 :]]
    return float(np.mean(sims))


def test_mmr_is_more_diverse_than_cosine(migrated_db: Driver, settings: Settings) -> None:
    rng = np.random.default_rng(3)
    query = unit(rng.normal(size=DIM))
    topic = unit(query + 0.3 * unit(rng.normal(size=DIM)))
    vectors: dict[str, np.ndarray] = {}
    for i in range(4):  # near-duplicates of one passage, all very close to the query
        vectors[f"dup{i}"] = unit(topic + 0.05 * unit(rng.normal(size=DIM)))
    for i in range(4):  # distinct passages, each fairly relevant on its own
        vectors[f"other{i}"] = unit(query + 0.9 * unit(rng.normal(size=DIM)))
    for i in range(10):
        vectors[f"noise{i}"] = unit(rng.normal(size=DIM))
    write_chunks(migrated_db, vectors)
    retriever = Retriever(GraphContext.open(settings, migrated_db))
    cosine = retriever.rank(query, None, k=4, ranker="cosine")
    diverse = retriever.rank(query, None, k=4, ranker="mmr", mmr_lambda=0.5, fetch_k=12)
    cos_ids = [c.id for c in cosine.chunks]
    mmr_ids = [c.id for c in diverse.chunks]
    assert all(cid.startswith("dup") for cid in cos_ids)
    assert sum(cid.startswith("dup") for cid in mmr_ids) == 1
    assert diversity(vectors, mmr_ids) < diversity(vectors, cos_ids) - 0.3
    assert "mmr" in diverse.timings


def test_mmr_lambda_one_is_plain_ranking() -> None:
    rng = np.random.default_rng(0)
    cands = rng.normal(size=(6, 8))
    rel = [0.1, 0.9, 0.5, 0.7, 0.3, 0.2]
    assert mmr(np.zeros(8), cands, rel, 3, 1.0) == [1, 3, 2]


def test_ranking_runs_in_read_transactions(
    random_kb: tuple[Driver, dict[str, np.ndarray], np.ndarray], settings: Settings
) -> None:
    """Routing READ: a retrieval query that tries to write is refused by the server."""
    from neo4j.exceptions import ClientError

    from guidedrag_graph.db.connection import read_query

    driver, _, _ = random_kb
    with pytest.raises(ClientError):
        read_query(driver, "CREATE (:Probe)", {}, database=settings.neo4j_database)
    info: Any = server_info(driver)
    assert info.version


def test_soft_steering_with_mmr_keeps_members_and_diversifies(
    random_kb: tuple[Driver, dict[str, np.ndarray], np.ndarray], settings: Settings
) -> None:
    driver, vectors, query = random_kb
    members = tuple(sorted(vectors)[:10])
    fill = settings.model_copy(update={"soft_boost": 2.0})
    ranking = Retriever(GraphContext.open(fill, driver)).rank(
        query, ChunkIdSelection(members), k=5, ranker="mmr", steering="soft", fetch_k=12
    )
    assert ranking.ranker == "mmr" and ranking.steering == "soft"
    assert len({c.id for c in ranking.chunks}) == 5
    assert all(c.in_selection and c.id in members for c in ranking.chunks)  # β > 1: members


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"k": 0}, "k=0"),
        ({"k": -3}, "k=-3"),
        ({"ranker": "bm25"}, "ranker='bm25'"),
        ({"threshold": 1.5}, "threshold=1.5"),
        ({"fetch_k": 0}, "fetch_k=0"),
        ({"mmr_lambda": 2.0}, "mmr_lambda=2.0"),
        ({"path": "sideways"}, "path='sideways'"),
    ],
)
def test_rank_checks_its_arguments_as_retrieve_does(
    random_kb: tuple[Driver, dict[str, np.ndarray], np.ndarray],
    settings: Settings,
    arguments: dict[str, Any],
    named: str,
) -> None:
    """``Retriever.rank`` (public, the module's example) validates through ``RetrieveArgs``:
    ``k=0`` was silently the settings' top_k here while ``GuidedRAG.retrieve`` refused it."""
    driver, _, query = random_kb
    with pytest.raises(ConfigurationError, match="invalid retrieve\\(\\) argument") as info:
        Retriever(GraphContext.open(settings, driver)).rank(query, None, **arguments)
    assert named in str(info.value) and "\n" not in str(info.value)


def test_k_none_means_the_settings_top_k(
    random_kb: tuple[Driver, dict[str, np.ndarray], np.ndarray], settings: Settings
) -> None:
    driver, vectors, query = random_kb
    ranking = Retriever(GraphContext.open(settings, driver)).rank(query, None, k=None)
    assert [c.id for c in ranking.chunks] == numpy_top(
        vectors, sorted(vectors), query, settings.top_k
    )


def test_every_ranker_word_is_a_registered_ranker() -> None:
    """The vocabulary the settings and the CLI accept and the registry that ranks are one set."""
    from guidedrag_graph.retrieval.ordering import RANKER_REGISTRY
    from guidedrag_graph.vocabulary import RANKERS

    assert tuple(RANKER_REGISTRY) == RANKERS
    assert [r.needs_vectors for r in RANKER_REGISTRY.values()] == [False, True]
