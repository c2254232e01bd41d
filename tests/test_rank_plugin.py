"""The guidedrag.rank plugin (plugin/): same ranking as exact Cypher, a cache that follows writes,
clear errors, and the extra-plugin-jar mechanism of managed servers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from neo4j import Driver
from neo4j.exceptions import ClientError

from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.retrieval import (
    MEASURED_EXACT_MAX,
    MEASURED_PLUGIN_EXACT_MAX,
    ChunkIdSelection,
    Retriever,
)
from guidedrag_graph.runtime.plugins import (
    add_plugin,
    installed_plugins,
    plugin_conf_lines,
    remove_plugin,
)

DIM = 384


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


@pytest.mark.neo4j
def test_plugin_ranks_exactly_like_cypher_on_the_sample_kb(
    sample_db: Driver, settings: Settings
) -> None:
    """Every selection, every query, the whole ordering: scores equal to 1e-6 position by
    position, and the same ids in the same order except where two scores are within 1e-6 (the
    plugin's cache holds float32, so such near-ties may swap)."""
    rows = sample_db.execute_query(
        "MATCH (c:Chunk)-[:PART_OF]->(d:Document) RETURN c.id AS id, d.id AS doc, "
        "c.embedding AS embedding ORDER BY id"
    ).records
    ids = [r["id"] for r in rows]
    by_doc: dict[str, list[str]] = {}
    for r in rows:
        by_doc.setdefault(r["doc"], []).append(r["id"])
    rng = np.random.default_rng(11)
    vectors = np.array([r["embedding"] for r in rows])
    queries = [unit(vectors[i] + rng.normal(scale=0.3 / np.sqrt(DIM), size=DIM)) for i in (0, 7)]
    queries.append(unit(rng.normal(size=DIM)))
    selections = [
        tuple(ids),
        tuple(ids[::3]),
        *(tuple(members) for members in list(by_doc.values())[:3]),
    ]
    retriever = Retriever(GraphContext.open(settings, sample_db))
    assert retriever.graph.rank_plugin
    compared = 0
    for selection_ids in selections:
        selection = ChunkIdSelection(selection_ids)
        for query in queries:
            fetch = len(selection_ids)  # the whole ordering, not just the top 5
            plugin = retriever.rank(query, selection, k=fetch, path="plugin")
            cypher = retriever.rank(query, selection, k=fetch, path="exact")
            assert len(plugin.chunks) == len(cypher.chunks) == fetch
            cypher_score = {c.id: c.score for c in cypher.chunks}
            cypher_row = {c.id: c for c in cypher.chunks}
            for a, b in zip(plugin.chunks, cypher.chunks, strict=True):
                assert a.score == pytest.approx(b.score, abs=1e-6)
                assert a.cosine == pytest.approx(b.cosine, abs=2e-6)
                if a.id != b.id:  # only a near-tie may swap
                    assert cypher_score[a.id] == pytest.approx(b.score, abs=1e-6)
                same = cypher_row[a.id]
                assert (a.document_id, a.text) == (same.document_id, same.text)
                assert a.score == pytest.approx(same.score, abs=1e-6)
            swapped = sum(a.id != b.id for a, b in zip(plugin.chunks, cypher.chunks, strict=True))
            assert swapped <= 0.02 * fetch
            top = min(5, fetch)
            assert [c.id for c in plugin.chunks[:top]] == [c.id for c in cypher.chunks[:top]]
            compared += len(plugin.chunks)
    assert compared >= 3 * len(ids)


def write(driver: Driver, vectors: dict[str, list[float]]) -> None:
    driver.execute_query(
        "UNWIND $rows AS row MERGE (c:Chunk {id: row.id}) SET c.text = row.id, "
        "c.embedding = row.embedding",
        rows=[{"id": k, "embedding": v} for k, v in vectors.items()],
    )


def plugin_top(driver: Driver, settings: Settings, query: np.ndarray, ids: tuple[str, ...]) -> list:
    ranking = Retriever(GraphContext.open(settings, driver)).rank(
        query, ChunkIdSelection(ids), k=3, path="plugin"
    )
    return [(c.id, round(c.score, 6)) for c in ranking.chunks]


@pytest.mark.neo4j
def test_plugin_cache_follows_commits(migrated_db: Driver, settings: Settings) -> None:
    """Ranked once (cached), then changed, deleted, re-created: the ranking follows every commit."""
    rng = np.random.default_rng(5)
    vectors = {f"p{i}": unit(rng.normal(size=DIM)).tolist() for i in range(20)}
    write(migrated_db, vectors)
    ids = tuple(vectors)
    query = unit(rng.normal(size=DIM))
    before = plugin_top(migrated_db, settings, query, ids)
    info = migrated_db.execute_query("CALL guidedrag.cacheInfo()").records[0]
    assert info["entries"] >= len(ids) and 0 < info["bytes"] <= info["budget"]
    assert info["warning"] is None  # the cache's lifecycle extension started with the database
    assert "p7" not in [cid for cid, _ in before]
    write(migrated_db, {"p7": query.tolist()})  # p7 becomes the query itself
    after = plugin_top(migrated_db, settings, query, ids)
    assert after[0] == ("p7", 1.0)
    assert after[1:] == before[:2]
    migrated_db.execute_query("MATCH (c:Chunk {id: 'p7'}) DETACH DELETE c")
    assert plugin_top(migrated_db, settings, query, ids) == before
    # A new node (which may reuse the deleted one's internal id) is read fresh.
    write(migrated_db, {"p7": (-query).tolist()})
    assert plugin_top(migrated_db, settings, query, ids) == before
    # A rolled-back write leaves nothing behind either.
    with migrated_db.session() as session, session.begin_transaction() as tx:
        tx.run("MATCH (c:Chunk {id: 'p3'}) SET c.embedding = $q", q=query.tolist()).consume()
        rows = tx.run(
            "MATCH (c:Chunk) WITH collect(c) AS cs "
            "CALL guidedrag.rank(cs, 'embedding', $q, 1) YIELD node RETURN node.id AS id",
            q=query.tolist(),
        ).data()
        assert rows == [{"id": "p3"}]  # its own uncommitted write is seen
        tx.rollback()
    assert plugin_top(migrated_db, settings, query, ids) == before


@pytest.mark.neo4j
def test_plugin_keeps_ties_so_the_id_order_cuts_like_cypher(
    migrated_db: Driver, settings: Settings
) -> None:
    rng = np.random.default_rng(9)
    query = unit(rng.normal(size=DIM))
    near = unit(query + 0.5 * unit(rng.normal(size=DIM))).tolist()
    vectors = {f"t{i}": near for i in (5, 3, 9, 1)}  # four identical vectors tie for 1st
    vectors |= {f"u{i}": unit(rng.normal(size=DIM)).tolist() for i in range(6)}
    write(migrated_db, vectors)
    retriever = Retriever(GraphContext.open(settings, migrated_db))
    selection = ChunkIdSelection(tuple(vectors))
    plugin = [c.id for c in retriever.rank(query, selection, k=2, path="plugin").chunks]
    cypher = [c.id for c in retriever.rank(query, selection, k=2, path="exact").chunks]
    assert plugin == cypher == ["t1", "t3"]


@pytest.mark.neo4j
def test_plugin_errors_name_the_problem(migrated_db: Driver) -> None:
    migrated_db.execute_query("CREATE (:Chunk {id: 'x', embedding: 'not a vector'})")
    with pytest.raises(ClientError, match="not a list of floats"):
        migrated_db.execute_query(
            "MATCH (c:Chunk) WITH collect(c) AS cs "
            "CALL guidedrag.rank(cs, 'embedding', [1.0, 0.0], 1) YIELD node RETURN node"
        )
    migrated_db.execute_query("MATCH (c:Chunk {id: 'x'}) SET c.embedding = [1.0, 2.0, 3.0]")
    with pytest.raises(ClientError, match="3 dimensions, the query vector 2"):
        migrated_db.execute_query(
            "MATCH (c:Chunk) WITH collect(c) AS cs "
            "CALL guidedrag.rank(cs, 'embedding', [1.0, 0.0], 1) YIELD node RETURN node"
        )


def test_extra_plugin_jars_are_copied_recorded_and_configured(tmp_path: Path) -> None:
    home = tmp_path / "server"
    old = tmp_path / "tool-1.jar"
    new = tmp_path / "tool-2.jar"
    old.write_bytes(b"old")
    new.write_bytes(b"new")
    add_plugin(home, old, name="tool.jar", unrestricted=("tool.*",))
    add_plugin(home, new, name="tool.jar", unrestricted=("tool.*",))  # replaces, never beside
    add_plugin(home, new, name="other.jar")
    assert sorted(p.name for p in (home / "plugins").glob("*.jar")) == ["other.jar", "tool.jar"]
    assert (home / "plugins" / "tool.jar").read_bytes() == b"new"
    assert plugin_conf_lines(home) == ["dbms.security.procedures.unrestricted=tool.*"]
    assert remove_plugin(home, "tool.jar")
    assert [p.name for p in installed_plugins(home)] == ["other.jar"]
    assert plugin_conf_lines(home) == []
    assert "tool.jar" not in json.loads((home / "plugins" / "guidedrag-plugins.json").read_text())


@pytest.mark.neo4j
def test_planner_sends_the_plugin_what_its_cache_holds(driver: Driver, settings: Settings) -> None:
    """Exact through the plugin up to min(measured limit, cache budget); the index path beyond;
    pure-Cypher crossovers when the plugin is off."""
    retriever = Retriever(GraphContext.open(settings, driver))
    budget = driver.execute_query("CALL guidedrag.cacheInfo()").records[0]["budget"]
    limit = retriever.planner.plugin_exact_max()
    assert limit == min(MEASURED_PLUGIN_EXACT_MAX, budget // (16 + 4 * DIM + 64 + 40 + 45))
    assert limit > MEASURED_EXACT_MAX["index"]
    assert retriever.plan(limit, False) == "plugin"
    assert retriever.plan(limit + 1, False) in ("search_in", "index")
    assert retriever.plan(limit, True) == "index"  # all(): the vector index over U
    off = Retriever(GraphContext.open(settings.model_copy(update={"rank_plugin": "off"}), driver))
    assert not off.graph.rank_plugin
    assert off.plan(10, False) == "exact"
    assert off.plan(5_000, False) in ("search_in", "index")


@pytest.mark.neo4j
def test_auto_ranks_its_tiers_through_the_plugin_like_cypher(
    sample_db: Driver, settings: Settings
) -> None:
    """The default (auto) on every sample question: through the plugin (its query calls
    guidedrag.rankTiers) and through pure Cypher, the same chunks with the same scores and tiers."""
    from guidedrag_graph.embeddings import embedder_for
    from guidedrag_graph.kb import read_questions, sample_kb_dir
    from guidedrag_graph.pipeline import GuidedRAG

    embedder = embedder_for(settings)
    off = settings.model_copy(update={"rank_plugin": "off"})
    questions = [q for q in read_questions(sample_kb_dir()) if q.semantics.entities]
    assert len(questions) >= 10
    compared = 0
    with (
        GuidedRAG(settings, driver=sample_db, embedder=embedder) as plugin,
        GuidedRAG(off, driver=sample_db, embedder=embedder) as cypher,
    ):
        for q in questions:
            a = plugin.retrieve(q.question, semantics=q.semantics, k=5)
            b = cypher.retrieve(q.question, semantics=q.semantics, k=5)
            if a.abstained or not a.tier_sizes:
                assert a.abstained == b.abstained
                continue
            assert "guidedrag.rankAuto" in a.cypher and "guidedrag.rank" not in b.cypher
            assert a.tier_sizes == b.tier_sizes
            assert [(c.id, c.tier) for c in a.chunks] == [(c.id, c.tier) for c in b.chunks]
            for x, y in zip(a.chunks, b.chunks, strict=True):
                assert x.score + x.boost == pytest.approx(y.score + y.boost, abs=1e-6)
            compared += 1
    assert compared >= 5


RANK_TIERS = (
    "UNWIND $tiers AS ids "
    "CALL (ids) { MATCH (c:Chunk) WHERE c.id IN ids RETURN collect(c) AS tier } "
    "WITH collect(tier) AS tiers "
    "CALL (tiers) { MATCH (c:Chunk) WHERE c.id IN $candidates RETURN collect(c) AS candidates } "
    "CALL guidedrag.rankTiers(tiers, $weights, candidates, 'embedding', $query, $k, "
    "  {exactMax: $exact_max, uK: $k}) YIELD node, score, boost, best, memberOf "
    "RETURN node.id AS id, score, boost, best, memberOf "
    "ORDER BY score + boost DESC, id LIMIT $k"
)


def boosted_top(
    vectors: dict[str, np.ndarray],
    tiers: list[list[str]],
    weights: list[float],
    q: np.ndarray,
    k: int,
) -> list[tuple[str, float, int | None]]:
    """The reference: every chunk, (1 + cos) / 2 plus the weight of its first tier, top k."""
    rows = []
    for cid, v in vectors.items():
        best = next((i for i, tier in enumerate(tiers) if cid in tier), None)
        score = (1 + float(v @ q) / float(np.linalg.norm(v) * np.linalg.norm(q))) / 2
        rows.append((cid, score + (0.0 if best is None else weights[best]), best))
    rows.sort(key=lambda r: (-r[1], r[0]))
    return rows[:k]


@pytest.mark.neo4j
@pytest.mark.parametrize("exact_max", [1_000, 3])
def test_rank_tiers_equals_the_boosted_top_k_over_every_chunk(
    migrated_db: Driver, exact_max: int
) -> None:
    """guidedrag.rankTiers (auto's plugin path) against numpy over all 40 chunks: each tier
    scored in full, and (exactMax 3) the large tiers taken from the candidates instead, which
    here hold every chunk, so the top k must be the same."""
    rng = np.random.default_rng(21)
    vectors = {f"c{i:02d}": unit(rng.normal(size=DIM)) for i in range(40)}
    write(migrated_db, {cid: v.tolist() for cid, v in vectors.items()})
    ids = sorted(vectors)
    tiers = [ids[0:2], ids[5:25], ids[20:40]]  # the last two overlap: c20..c24 are in both
    weights = [0.3, 0.05, 0.02]
    for seed in range(5):
        q = unit(np.random.default_rng(seed).normal(size=DIM))
        for k in (1, 4, 7):
            rows, _, _ = migrated_db.execute_query(
                RANK_TIERS,
                tiers=tiers,
                weights=weights,
                candidates=ids,
                query=q.tolist(),
                k=k,
                exact_max=exact_max,
            )
            want = boosted_top(vectors, tiers, weights, q, k)
            assert [r["id"] for r in rows] == [w[0] for w in want]
            for row, (cid, total, best) in zip(rows, want, strict=True):
                assert row["score"] + row["boost"] == pytest.approx(total, abs=1e-6)
                assert row["best"] == best
                assert row["memberOf"] == [i for i, tier in enumerate(tiers) if cid in tier]


@pytest.mark.neo4j
def test_rank_tiers_errors_name_the_problem(migrated_db: Driver) -> None:
    write(migrated_db, {"a": [1.0, 0.0], "b": [0.0, 1.0]})
    call = (
        "MATCH (c:Chunk) WITH collect(c) AS cs "
        "CALL guidedrag.rankTiers($tiers, $weights, cs, 'embedding', [1.0, 0.0], 2) "
        "YIELD node RETURN node"
    )
    with pytest.raises(ClientError, match="2 tiers but 1 weights; give one weight per tier"):
        migrated_db.execute_query(call.replace("$tiers", "[cs, cs]"), weights=[0.1])
    with pytest.raises(ClientError, match="tier 0 is a String, not a list of nodes"):
        migrated_db.execute_query(call.replace("$tiers", "['x']"), weights=[0.1])
    with pytest.raises(ClientError, match="option exactMax must be an integer"):
        migrated_db.execute_query(
            call.replace("2)", "2, {exactMax: 'many'})").replace("$tiers", "[cs]"), weights=[0.1]
        )
    rows, _, _ = migrated_db.execute_query(call.replace("$tiers", "[cs]"), weights=[0.1])
    assert len(rows) == 2


@pytest.mark.neo4j
def test_rank_auto_searches_the_named_vector_index_and_its_errors_name_the_fix(
    migrated_db: Driver, settings: Settings
) -> None:
    """guidedrag.rankAuto reads U's candidates from the vector index itself (the kernel's seek):
    with no tiers its rows are the index's top uK, best first, as SEARCH gives them; a name that
    is no vector index, or options that mean nothing, are refused in one line naming the fix."""
    dims = settings.embedding_dimensions
    vectors = {f"v{i}": [1.0 if j == i else 0.1 for j in range(dims)] for i in range(3)}
    write(migrated_db, vectors)
    migrated_db.execute_query("CALL db.awaitIndexes(60)")
    query = [1.0 if j == 1 else 0.1 for j in range(dims)]
    call = (
        "CALL guidedrag.rankAuto([], [], [], $q, 2, $options) YIELD node, score "
        "RETURN node.id AS id, score"
    )
    options = {"indexName": settings.vector_index_name, "property": "embedding", "uK": 2}
    rows, _, _ = migrated_db.execute_query(call, q=query, options=options)
    search, _, _ = migrated_db.execute_query(
        "CALL db.index.vector.queryNodes($index, 2, $q) YIELD node, score "
        "RETURN node.id AS id, score ORDER BY score DESC, id",
        index=settings.vector_index_name,
        q=query,
    )
    assert [r["id"] for r in rows] == [r["id"] for r in search] and rows[0]["id"] == "v1"
    with pytest.raises(ClientError, match=r"no vector index named 'nope'; give options\.indexName"):
        migrated_db.execute_query(call, q=query, options={**options, "indexName": "nope"})
    with pytest.raises(ClientError, match="firstK and wideK must be >= 0"):
        migrated_db.execute_query(call, q=query, options={**options, "firstK": -1})
    with pytest.raises(ClientError, match="option indexName must be a string"):
        migrated_db.execute_query(call, q=query, options={"property": "embedding"})
    with pytest.raises(ClientError, match=r"queryVector holds NaN at 0; pass finite floats"):
        migrated_db.execute_query(call, q=[float("nan"), *query[1:]], options=options)


@pytest.mark.neo4j
def test_auto_ranks_in_pure_cypher_when_the_plugin_lacks_rank_tiers(
    sample_db: Driver, settings: Settings
) -> None:
    """A server with a plugin jar from before guidedrag.rankTiers: auto's tiers rank in pure
    Cypher (the fact is what SHOW PROCEDURES said; here it is set as an old jar would leave it)."""
    from guidedrag_graph.embeddings import embedder_for
    from guidedrag_graph.kb import read_questions, sample_kb_dir
    from guidedrag_graph.pipeline import GuidedRAG
    from tests.probes import CountingDriver

    question = next(q for q in read_questions(sample_kb_dir()) if q.semantics.entities)
    embedder = embedder_for(settings)
    with (
        GuidedRAG(settings, driver=sample_db, embedder=embedder) as rag,
        # Server facts are shared by every context on one driver (context.KBState): the old
        # jar's context gets a driver object of its own (the same connections, wrapped).
        GuidedRAG(settings, driver=CountingDriver(sample_db), embedder=embedder) as old_jar,  # type: ignore[arg-type]
        GuidedRAG(settings, driver=CountingDriver(sample_db), embedder=embedder) as tiers_jar,  # type: ignore[arg-type]
    ):
        assert rag.graph.rank_plugin and rag.graph.rank_tiers_plugin and rag.graph.rank_auto_plugin
        new = rag.retrieve(question.question, semantics=question.semantics, k=3)
        assert "guidedrag.rankAuto(" in new.cypher and "SEARCH" not in new.cypher
        # A jar with rankTiers but from before rankAuto: retrieve_boost, the same chunks.
        assert tiers_jar.graph.fact("rank_auto_plugin", lambda: False) is False
        assert tiers_jar.graph.rank_tiers_plugin and not tiers_jar.graph.rank_auto_plugin
        middle = tiers_jar.retrieve(question.question, semantics=question.semantics, k=3)
        assert "guidedrag.rankTiers(" in middle.cypher and "guidedrag.rankAuto" not in middle.cypher
        assert [c.id for c in middle.chunks] == [c.id for c in new.chunks]
        # The fact as SHOW PROCEDURES would have left it, settled before the context asks.
        assert old_jar.graph.fact("rank_tiers_plugin", lambda: False) is False
        assert old_jar.graph.rank_plugin and not old_jar.graph.rank_tiers_plugin
        old = old_jar.retrieve(question.question, semantics=question.semantics, k=3)
    assert "guidedrag.rank" not in old.cypher
    assert [(c.id, c.tier) for c in old.chunks] == [(c.id, c.tier) for c in new.chunks]
