"""Tiers of entity terms given by their entities (``cypher/select_mentioned.cypher``) rank what
the listed tiers ranked: a differential test on the sample KB, both ranking variants.

``auto`` compiles a tier made of entity/hop/khop/near terms as its entity set and lists its
chunks only when listing pays off; an unlisted tier is ranked from U's over-fetched top and a
candidate is in it when it mentions one of its entities. Two claims, each checked against the
same tiers compiled the old way (every tier listed, ``by_entities=False``):

- The lower-bound rule changes nothing: a tier left unlisted because one of its entities is in
  more than ``exact_max`` chunks holds more than ``exact_max`` chunks, so it was ranked from U's
  top already. Same rows at every ``exact_max``.
- With both bounds at 0 every non-empty tier of entity terms is unlisted, and the rows equal the
  listed tiers' with ``exact_max`` 0 (every tier ranked from U's top): membership by entities is
  membership by list.
"""

from __future__ import annotations

from typing import Any

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.embeddings import embedder_for
from guidedrag_graph.kb import read_questions, sample_kb_dir
from guidedrag_graph.retrieval import Retriever
from guidedrag_graph.selection import Expr, Selector
from guidedrag_graph.selection.compiler import compile_plan
from guidedrag_graph.selection.primitives import Resolved
from guidedrag_graph.steering.tier_prep import prepare_tiers
from guidedrag_graph.steering.tiers import TierWeights, plan_auto

WEIGHTS = TierWeights.from_tuple((0.3, 0.1, 0.08, 0.06, 0.05))
QUESTIONS = [q for q in read_questions(sample_kb_dir()) if q.semantics.entities]


def _rows(
    settings: Settings, db: Driver, vectors: dict[str, Any], by_entities: bool
) -> tuple[list[list[tuple[Any, ...]]], list[dict[str, int]]]:
    graph = GraphContext.open(settings, db)
    selector, retriever = Selector(graph), Retriever(graph)
    ranked, sizes = [], []
    for q in QUESTIONS:
        plan = plan_auto(q.semantics, WEIGHTS)
        prepared = prepare_tiers(selector, plan, retriever.paths.variant)
        if prepared.compiled is None:
            continue
        compiled = prepared.compiled
        if not by_entities:
            assert prepared.expr is not None
            res = selector.resolution(plan.entities, diagnose=False)
            resolved: dict[Expr, Resolved] = {
                leaf: leaf.resolve(res) for leaf in prepared.expr.leaves()
            }
            plain = compile_plan(prepared.expr, resolved, graph.schema, hop_cap=settings.hop_cap)
            compiled = plain.selection(graph.schema)
        ranking = retriever.rank_tiers(vectors[q.id], compiled, k=5, limit=40)
        ranked.append([(c.id, round(c.score, 6), c.boost, c.tier, c.tiers) for c in ranking.chunks])
        sizes.append(ranking.tier_sizes)
    return ranked, sizes


@pytest.mark.parametrize("rank_plugin", ["auto", "off"])
def test_unlisted_tiers_rank_what_listed_tiers_ranked(
    settings: Settings, sample_db: Driver, rank_plugin: str
) -> None:
    vectors = dict(
        zip(
            (q.id for q in QUESTIONS),
            embedder_for(settings).embed_queries([q.question for q in QUESTIONS]),
            strict=True,
        )
    )
    unlisted_seen = 0
    for exact_max in (1, 2, 3, 5, 10, 20, 500):
        base = settings.model_copy(
            update={"rank_plugin": rank_plugin, "planner_exact_max": exact_max}
        )
        lower_bound_only = base.model_copy(update={"planner_tier_list_max": 10**9})
        listed, listed_sizes = _rows(base, sample_db, vectors, by_entities=False)
        got, got_sizes = _rows(lower_bound_only, sample_db, vectors, by_entities=True)
        assert got == listed, exact_max
        for want, have in zip(listed_sizes, got_sizes, strict=True):
            assert want.keys() == have.keys()
            for tier, n in have.items():
                if n == -1:  # unlisted: only ever a tier over exact_max
                    assert want[tier] > exact_max, (tier, want, have)
                    unlisted_seen += 1
                else:
                    assert n == want[tier], (tier, want, have)
    assert unlisted_seen > 0, "the lower-bound rule never left a tier unlisted"

    base = settings.model_copy(update={"rank_plugin": rank_plugin, "planner_exact_max": 0})
    listed, listed_sizes = _rows(base, sample_db, vectors, by_entities=False)
    none_listed = base.model_copy(update={"planner_tier_list_max": 0})
    got, got_sizes = _rows(none_listed, sample_db, vectors, by_entities=True)
    assert got == listed
    for want, have in zip(listed_sizes, got_sizes, strict=True):
        for tier, n in have.items():
            if tier != "∩":  # the intersection is listed (it is not one entity set)
                assert n == (-1 if want[tier] > 0 else 0), (tier, want, have)


@pytest.mark.parametrize("bounds", [(500, 3000), (3, 10**9), (10**6, 5), (0, 0)])
def test_the_plugin_walk_ranks_what_the_cypher_walk_ranked(
    settings: Settings, sample_db: Driver, bounds: tuple[int, int]
) -> None:
    """``walk=plugin`` (``guidedrag.nearStep``/``guidedrag.mentioned``) against the Cypher walk
    it replaces: the same rows, tiers and tier sizes for every sample question, whether the
    tiers are listed, unlisted by the lower bound, or unlisted by the mentions bound."""
    exact_max, list_max = bounds
    base = settings.model_copy(
        update={"planner_exact_max": exact_max, "planner_tier_list_max": list_max}
    )
    graph = GraphContext.open(base, sample_db)
    selector, retriever = Selector(graph), Retriever(graph)
    walk = retriever.paths.variant("select_mentioned")["walk"]
    assert walk == "plugin", "the test server runs the plugin built from plugin/"
    vectors = embedder_for(settings).embed_queries([q.question for q in QUESTIONS])
    got: dict[str, list[Any]] = {"cypher": [], "plugin": []}
    for q, vector in zip(QUESTIONS, vectors, strict=True):
        plan = plan_auto(q.semantics, WEIGHTS)
        expr = plan.boost()
        assert expr is not None
        res = selector.resolution(plan.entities, diagnose=False)
        resolved: dict[Expr, Resolved] = {leaf: leaf.resolve(res) for leaf in expr.leaves()}
        for walk, rows in got.items():
            compiled = compile_plan(
                expr, resolved, graph.schema, hop_cap=base.hop_cap, by_entities=True, walk=walk
            ).selection(graph.schema)
            ranking = retriever.rank_tiers(vector, compiled, k=5, limit=40)
            assert ("guidedrag.mentioned(" in ranking.cypher) == (walk == "plugin")
            assert ("guidedrag.nearStep(" in ranking.cypher) == (walk == "plugin")
            rows.append(
                (
                    [(c.id, round(c.score, 6), c.boost, c.tier, c.tiers) for c in ranking.chunks],
                    ranking.tier_sizes,
                )
            )
    assert got["plugin"] == got["cypher"]
    if list_max >= 3000:
        assert any(sizes.get("N", 0) > 0 for _, sizes in got["plugin"]), "no near tier listed"
    if list_max == 0:
        assert all(sizes.get("N") in (-1, 0) for _, sizes in got["plugin"])
