"""The cost bound: a selection's work is estimated from cheap counts (count store totals and
the degrees of its entities) before it runs, and a costlier one than GUIDEDRAG_MAX_SELECTION_COST
is refused in one line before its query is sent. Normal selections are never refused."""

from __future__ import annotations

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.db.connection import read_query
from guidedrag_graph.errors import SelectionCostError
from guidedrag_graph.retrieval import Retriever
from guidedrag_graph.schema.presets import PRESETS, relation_type_name
from guidedrag_graph.selection import Selector, entity, khop, near
from guidedrag_graph.selection import nodes as A
from guidedrag_graph.selection.cost import CostStats, GraphCounts, estimate, needs_estimate
from guidedrag_graph.selection.primitives import Resolved
from guidedrag_graph.steering.mapping import _CELLS
from guidedrag_graph.steering.tier_prep import prepare_tiers
from guidedrag_graph.steering.tiers import TierWeights, plan_auto
from guidedrag_graph.templates.queries import query
from tests.conftest import sample_bundle
from tests.probes import CountingDriver

HUB = "United States"  # the sample KB's entity with the most edges (31 relations, 55 mentions)


def _selector(settings: Settings, driver: object, **update: object) -> Selector:
    return Selector(GraphContext.open(settings.model_copy(update=update), driver))  # type: ignore[arg-type]


def _intersection(term: A.Expr, n: int) -> A.Expr:
    expr = term
    for _ in range(n - 1):
        expr = expr & term
    return expr


def test_every_sample_question_selection_and_tier_plan_passes(
    sample_db: Driver, settings: Settings
) -> None:
    """Every Table 2 cell and auto's tier plan for every sample (MuSiQue) question, at the
    default limits: none is refused, and each estimate is far below the limit."""
    selector = _selector(settings, sample_db)
    limit = settings.max_selection_cost
    checked = 0
    for question in sample_bundle().questions:
        names = tuple(question.semantics.entities)
        if not names:
            continue
        names = (names * 2)[:2] if len(names) < 2 else names
        relations = [relation_type_name(r) for r in question.semantics.relations] or ["LOCATED_IN"]
        for cell in _CELLS.values():
            expr = cell.build(names, relations) | near(names[0], 2) | khop(names[0], 2)
            selector.prepare(expr)  # raises SelectionCostError if refused
            checked += 1
        plan = plan_auto(question.semantics, TierWeights())
        prepared = prepare_tiers(selector, plan, Retriever(selector.graph).paths.variant)
        assert prepared.empty is None or prepared.empty.kind == "unknown_entity"
    assert checked >= 100
    # The worst of the single terms a user may write at the default depth limit still passes.
    for worst in (near(HUB, 5), khop(HUB, 5)):
        selector.prepare(worst)
    assert limit == 300_000_000


def test_deep_hops_from_a_hub_are_refused_before_the_selection_runs(
    sample_db: Driver, settings: Settings
) -> None:
    """The issue's runaway: 1,000 near(hub, 5) intersected (GUIDEDRAG_MAX_TERMS raised within
    its range). Refused in one line; the only queries sent are name resolution and the count."""
    counting = CountingDriver(sample_db)
    selector = _selector(settings, counting, max_terms=1_000)
    counting.queries.clear()  # what opening the context read (the adoption record)
    with pytest.raises(SelectionCostError) as caught:
        selector.prepare(_intersection(near(HUB, 5), 1_000))
    message = str(caught.value)
    assert "GUIDEDRAG_MAX_SELECTION_COST" in message and "300,000,000" in message
    assert f"near('{HUB}', 5)" in message and "\n" not in message
    sent = counting.queries
    assert len(sent) == 2, sent
    assert sent[0].lstrip().startswith("UNWIND range(0, size($sel_names)")  # resolution
    assert "count(r) AS relationships" in sent[1]  # the cheap count, nothing else
    assert not any("collect(DISTINCT c)" in q for q in sent)


def test_the_limit_follows_the_setting_and_a_shallow_term_passes(
    sample_db: Driver, settings: Settings
) -> None:
    selector = _selector(settings, sample_db, max_selection_cost=50_000)
    with pytest.raises(SelectionCostError, match=r"khop\('United States', 5\).*limit is 50,000"):
        selector.prepare(khop(HUB, 5))
    assert selector.chunk_ids(khop(HUB, 1))  # a shallow hop from the hub is far below it
    assert selector.chunk_ids(entity(HUB) & near(HUB))


def test_counts_are_cached_and_entity_only_selections_cost_no_query(
    sample_db: Driver, settings: Settings
) -> None:
    counting = CountingDriver(sample_db)
    selector = _selector(settings, counting)
    selector.prepare(entity(HUB) | entity("Euro"))
    assert not any("AS relationships" in q for q in counting.queries)
    selector.prepare(khop(HUB, 2))
    selector.prepare(khop(HUB, 3) | near(HUB))
    assert sum("AS relationships" in q for q in counting.queries) == 1


def _hubs(driver: Driver, n: int) -> list[str]:
    rows = read_query(
        driver, query("hub_entities", PRESETS["guidedrag"]), {"limit": n}, database="neo4j"
    )
    return [str(r["name"]) for r in rows]


def test_a_plan_of_many_binary_steps_is_refused_for_its_planning(
    sample_db: Driver, settings: Settings
) -> None:
    """Issue 34: ``a - (b ^ c) - (d ^ e) - ...`` over 199 different entities has no expanding
    term, but its 99 ``^`` steps cannot be one clause, and planning them (each ``WITH *`` carries
    every earlier list) ran 94 s on the server past a 30 s timeout: the planning counts in the
    bound, so it is refused in one line before its query is sent. Cut to 31 terms it passes."""
    hubs = _hubs(sample_db, 199)

    def nested(n: int) -> A.Expr:
        expr: A.Expr = entity(hubs[0])
        for k in range(1, n - 1, 2):
            expr = expr - (entity(hubs[k]) ^ entity(hubs[k + 1]))
        return expr

    counting = CountingDriver(sample_db)
    selector = _selector(settings, counting)
    counting.queries.clear()
    with pytest.raises(SelectionCostError) as caught:
        selector.prepare(nested(199))
    message = str(caught.value)
    assert "planning its 100 set-operation steps" in message, message
    assert "GUIDEDRAG_MAX_SELECTION_COST" in message and "\n" not in message
    assert not any("collect(DISTINCT c)" in q for q in counting.queries)
    selector.chunk_ids(nested(31))


def _stats(degree: int, mentions: int) -> CostStats:
    graph = GraphCounts(entities=10_000, chunks=5_000, mentions=50_000, relationships=90_000)
    return CostStats(graph, {"x": (degree, mentions)})


@pytest.mark.parametrize("term", [khop("x", 1), near("x", 1)])
def test_the_estimate_grows_with_depth_and_degree_and_is_bounded_by_the_graph(
    term: A.Expr,
) -> None:
    resolved = {term: Resolved(ids=("x",))}
    leaf_cost = estimate(term, resolved, _stats(10, 10), hop_cap=10_000).rows
    hub_cost = estimate(term, resolved, _stats(5_000, 5_000), hop_cap=10_000).rows
    assert 0 < leaf_cost < hub_cost
    costs = []
    for depth in range(1, 6):
        deep = khop("x", depth) if isinstance(term, A.KHop) else near("x", depth)
        costs.append(estimate(deep, {deep: Resolved(ids=("x",))}, _stats(5_000, 5_000), 10_000))
    assert [c.rows for c in costs] == sorted(c.rows for c in costs)
    # No step expands more than the whole graph: the fifth costs what the fourth does.
    assert costs[4].rows - costs[3].rows <= costs[3].rows - costs[2].rows + 1
    assert estimate(term, {term: Resolved(empty=True)}, _stats(5_000, 5_000), 10_000).rows == 0
    assert needs_estimate(term) and not needs_estimate(entity("x") & entity("y"))


def test_sizes_mode_prices_its_own_steps_and_an_unexplained_empty_stands(
    sample_db: Driver, settings: Settings
) -> None:
    """The 200-term ``-`` chain of the exhaustion run (near/khop(hub, 5) alternating over 4
    hubs) runs as one clause and is empty on the sample KB; the sizes query (``guidedrag
    select``, ``explain_empty``) writes its 199 steps one by one, which is refused in one line
    before it is sent, and ``explain_empty`` then leaves the empty result unexplained."""
    hubs = _hubs(sample_db, 4)
    expr: A.Expr = near(hubs[0], 5)
    for i in range(1, settings.max_terms):
        expr = expr - (near(hubs[i % 4], 5) if i % 2 == 0 else khop(hubs[i % 4], 5))
    selector = _selector(settings, sample_db, query_timeout=5.0)
    assert selector.chunk_ids(expr) == []
    with pytest.raises(SelectionCostError, match=r"planning its 199 set-operation steps"):
        selector.sizes(expr)
    assert selector.explain_empty(expr) is None
