"""One conformance suite for retrieval, run on every graph layout (Haystack's document-store test
mixin is the model, as for ``selection_conformance``).

``CASES`` pairs a selection or stated semantics with a steering mode, over the entities of the
KG-builder corpus (``builders_corpus``). For every case, physical path and query vector, the
chunks ``GuidedRAG.retrieve`` ranks inside Neo4j must equal a reference computed without the
library's queries: the graph is read back as plain rows (``cypher/conformance_snapshot.cypher``),
the selection is evaluated by the pure-Python evaluator and ranked by numpy cosine, with the
same scores each steering adds ((1+cos)/2, plus β for soft members, plus the best tier's weight
under ``auto``) and the same tie-break (score, then chunk id).

A layout subclasses ``RetrievalConformance`` and provides a ``conformance_graph`` fixture: the
driver and the settings (with the layout's preset) of a graph holding that corpus, written
however the layout's own writer writes it. ``tests/test_retrieval_conformance.py`` runs it on
our loader's layouts, ``tests/test_builders_*.py`` on what neo4j-graphrag, LangChain and
LlamaIndex write.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.db.connection import procedure_available, read_query, server_info
from guidedrag_graph.pipeline import GuidedRAG, RetrievalResult
from guidedrag_graph.pipeline.question import RetrieveOptions
from guidedrag_graph.retrieval import RANK_PROCEDURE
from guidedrag_graph.schema.presets import SchemaMapping, schema_from_settings
from guidedrag_graph.selection import parse
from guidedrag_graph.selection.evaluator import (
    DocumentRec,
    EntityRec,
    InMemoryGraph,
    evaluate,
    evaluate_tiers,
)
from guidedrag_graph.semantics import Semantics
from guidedrag_graph.steering.tiers import plan_auto
from guidedrag_graph.templates import queries as templates


@dataclass(frozen=True)
class RetrievalCase:
    """A selection (DSL text; ``None``: every chunk) or semantics, ranked under ``steering``."""

    name: str
    steering: str
    selection: str | None = None
    semantics: Semantics | None = None


CASES: tuple[RetrievalCase, ...] = (
    RetrievalCase("U", "hard"),
    RetrievalCase("entity", "hard", "entity('Mars')"),
    RetrievalCase("union", "hard", "entity('Euro') | entity('Phobos')"),
    RetrievalCase("intersect", "hard", "entity('Germany') & entity('Euro')"),
    RetrievalCase("difference", "hard", "entity('Euro') - entity('Deutsche Mark')"),
    RetrievalCase("symdiff", "hard", "entity('Mars') ^ entity('Phobos')"),
    RetrievalCase("hop in", "hard", "hop('Mars', ['ORBITS'], 1, 'in')"),
    RetrievalCase("hop out", "hard", "hop('Euro', ['CURRENCY_OF'])"),
    RetrievalCase("khop", "hard", "khop('European Central Bank', 2)"),
    RetrievalCase("near", "hard", "near('Germany')"),
    RetrievalCase("soft entity", "soft", "entity('Deimos')"),
    RetrievalCase("soft hop", "soft", "hop('Euro', ['CURRENCY_OF'])"),
    RetrievalCase("auto one", "auto", semantics=Semantics(entities=("Mars",))),
    RetrievalCase(
        "auto relation",
        "auto",
        semantics=Semantics(
            entities=("Phobos",), relations=("ORBITS",), relational=True, complexity=1
        ),
    ),
    RetrievalCase(
        "auto two",
        "auto",
        semantics=Semantics(
            entities=("Euro", "Germany"),
            relations=("CURRENCY_OF",),
            relational=True,
            complexity=2,
        ),
    ),
)

QUERY_SEEDS = (0, 1)
K = 3


def snapshot(driver: Driver, database: str, schema: SchemaMapping) -> Snapshot:
    """The graph as the reference sees it: chunks with vectors, entities, mentions, relations.
    A chunk is its own document (no case here selects by document)."""

    def rows(part: str) -> list[dict[str, object]]:
        query = templates.fragment("conformance_snapshot", part, schema)
        return read_query(driver, query, {}, database=database)

    graph = InMemoryGraph()
    vectors = {str(r["id"]): np.asarray(r["embedding"], dtype=np.float64) for r in rows("chunks")}
    graph.chunks = {c: c for c in vectors}
    graph.documents = {c: DocumentRec(c) for c in vectors}
    graph.entities = {
        str(r["id"]): EntityRec(str(r["id"]), str(r["name"])) for r in rows("entities")
    }
    graph.mentions = {
        (str(r["chunk"]), str(r["entity"])) for r in rows("mentions") if str(r["chunk"]) in vectors
    }
    part = "relations" if schema.relation_mode == "types" else "relations_property"
    graph.relations = {(str(r["head"]), str(r["type"]), str(r["tail"])) for r in rows(part)}
    return Snapshot(graph, vectors)


@dataclass(frozen=True)
class Snapshot:
    graph: InMemoryGraph
    vectors: dict[str, np.ndarray]

    def ranked(
        self, query: np.ndarray, boosts: dict[str, float], among: set[str], k: int = K
    ) -> list[str]:
        """Top ``k`` of ``among`` by (1+cos)/2 plus each chunk's boost, ties by chunk id."""
        unit = query / np.linalg.norm(query)
        rows = []
        for chunk in among:
            vector = self.vectors[chunk]
            cos = float(vector @ unit / np.linalg.norm(vector))
            rows.append((-((1 + cos) / 2 + boosts.get(chunk, 0.0)), chunk))
        return [chunk for _, chunk in sorted(rows)[:k]]


def reference(
    case: RetrievalCase, snap: Snapshot, query: np.ndarray, settings: Settings, rag: GuidedRAG
) -> list[str]:
    """What ``case`` must return, from the snapshot alone."""
    every = set(snap.vectors)
    if case.steering == "auto":
        assert case.semantics is not None
        expr = plan_auto(case.semantics, rag.policy.tier_weights(case.semantics)).boost()
        tiers = {} if expr is None else evaluate_tiers(expr, snap.graph, hop_cap=settings.hop_cap)
        return snap.ranked(query, {c: w for c, (w, _) in tiers.items()}, every)
    if case.selection is None:
        return snap.ranked(query, {}, every)
    members = evaluate(parse(case.selection), snap.graph, hop_cap=settings.hop_cap)
    if case.steering == "soft":
        return snap.ranked(query, dict.fromkeys(members, settings.soft_boost), every)
    return snap.ranked(query, {}, members)


def paths_for(case: RetrievalCase, driver: Driver, settings: Settings) -> list[str | None]:
    """The physical paths that can rank ``case`` on this server (``None``: the planner's)."""
    if case.steering == "auto" or case.selection is None:
        return [None]
    paths: list[str | None] = [None, "exact", "index"]
    if procedure_available(driver, RANK_PROCEDURE, settings.neo4j_database):
        paths.append("plugin")
    if (
        server_info(driver, settings.neo4j_database).supports_search_in_filter
        and case.steering == "hard"
    ):
        paths.append("search_in")
    return paths


class RetrievalConformance:
    """Subclass and provide ``conformance_graph`` -> (driver, settings) of a graph that holds
    the builders' corpus, with ``settings`` naming its preset (or mapping file)."""

    cases: ClassVar[tuple[RetrievalCase, ...]] = CASES

    @pytest.fixture
    def conformance_graph(self) -> tuple[Driver, Settings]:  # pragma: no cover - overridden
        raise NotImplementedError

    @pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
    def test_retrieval_equals_the_reference(
        self, conformance_graph: tuple[Driver, Settings], case: RetrievalCase
    ) -> None:
        driver, settings = conformance_graph
        snap = snapshot(driver, settings.neo4j_database, schema_from_settings(settings))
        assert len(snap.vectors) >= K and snap.graph.mentions, "the corpus is not in this graph"
        dims = len(next(iter(snap.vectors.values())))
        checked = 0
        with GuidedRAG(settings, driver=driver) as rag:
            for path in paths_for(case, driver, settings):
                for seed in QUERY_SEEDS:
                    query = np.random.default_rng(seed).normal(size=dims)
                    want = reference(case, snap, query, settings, rag)
                    result = rag.retrieve(
                        f"conformance {case.name}",
                        case.selection,
                        semantics=case.semantics,
                        steering=case.steering,
                        path=path,
                        k=K,
                        query_vector=[float(x) for x in query],
                        link=False,
                    )
                    got = [c.id for c in result.chunks]
                    assert got == want, (case.name, path, seed, result.steering, result.notes)
                    checked += 1
        assert checked >= len(QUERY_SEEDS)

    @pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
    def test_async_retrieval_equals_sync(
        self, conformance_graph: tuple[Driver, Settings], case: RetrievalCase
    ) -> None:
        """``aretrieve`` (an AsyncDriver, the same planning code) ranks what ``retrieve`` ranks:
        the same ids, scores, selection sizes and abstentions, on every path."""
        driver, settings = conformance_graph
        dims = settings.embedding_dimensions
        asked = [
            (path, [float(x) for x in np.random.default_rng(seed).normal(size=dims)])
            for path in paths_for(case, driver, settings)
            for seed in QUERY_SEEDS
        ]
        calls: list[RetrieveOptions] = [
            {
                "semantics": case.semantics,
                "steering": case.steering,
                "k": K,
                "link": False,
                "path": path,
                "query_vector": vector,
            }
            for path, vector in asked
        ]
        with GuidedRAG(settings, driver=driver) as rag:
            want = [rag.retrieve(case.name, case.selection, **options) for options in calls]

        async def run() -> list[RetrievalResult]:
            async with await GuidedRAG.aopen(settings) as arag:
                return [
                    await arag.aretrieve(case.name, case.selection, **options) for options in calls
                ]

        for (path, _), sync, other in zip(asked, want, asyncio.run(run()), strict=True):
            assert [c.id for c in other.chunks] == [c.id for c in sync.chunks], (case.name, path)
            scores = [c.score for c in sync.chunks]
            assert [c.score for c in other.chunks] == pytest.approx(scores), (case.name, path)
            assert other.selection_size == sync.selection_size, (case.name, path)
            assert other.abstained == sync.abstained, (case.name, path)
            assert (other.path, other.tier_sizes) == (sync.path, sync.tier_sizes), (case.name, path)
