"""Server variants are chosen in one place (issue 37): ``RankFacts.variant``, from plain facts.

The walk of auto's entity tiers (``select_near``/``select_mentioned``: the plugin's functions or
Cypher) was chosen by ``GraphContext`` beside the ranking queries' variants; now the context
only supplies the fact (``tier_walk_plugin``) and the one chooser decides, asking a fact only
for an axis the template has (``MissingFact``, read at the edge by ``Planner.planned``).
"""

from __future__ import annotations

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.retrieval.facts import MissingFact, RankFacts
from guidedrag_graph.retrieval.planner import Planner
from guidedrag_graph.schema.presets import schema_for, schema_from_settings


def _facts(**known: object) -> RankFacts:
    return RankFacts(schema=schema_for("guidedrag"), vector_index_name="chunk_embedding", **known)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("tiers", "walk", "expected"),
    [(True, True, "plugin"), (True, False, "cypher"), (False, True, "cypher")],
)
def test_the_tier_walk_takes_the_plugin_only_where_it_ranks_the_tiers_and_lists_the_walk(
    tiers: bool, walk: bool, expected: str
) -> None:
    facts = _facts(rank_plugin=tiers, rank_tiers_plugin=tiers, tier_walk_plugin=walk)
    assert facts.variant("select_mentioned") == {"walk": expected}
    assert facts.variant("select_near") == {"walk": expected}
    assert facts.variant("select_mentioned", walk="cypher") == {"walk": "cypher"}  # a caller's


def test_the_walk_fact_is_asked_only_of_a_plugin_that_ranks_the_tiers() -> None:
    # without rankTiers the walk is Cypher: the functions' listing is not needed (no round trip)
    assert _facts(rank_tiers_plugin=False).variant("select_mentioned") == {"walk": "cypher"}
    with pytest.raises(MissingFact) as missing:
        _facts(rank_tiers_plugin=True).variant("select_mentioned")
    assert missing.value.name == "tier_walk_plugin"
    # a ranking template does not declare the walk axis, so it needs none of its facts
    assert _facts(rank_plugin=False).variant("retrieve_exact") == {"rank": "cypher"}


def test_with_the_plugin_off_the_walk_is_planned_without_a_server() -> None:
    settings = Settings(_env_file=None, openai_api_key=None, rank_plugin="off")  # type: ignore[call-arg]
    graph = GraphContext(None, settings, schema_from_settings(settings))  # type: ignore[arg-type]
    assert Planner(graph).facts().variant("select_mentioned") == {"walk": "cypher"}


@pytest.mark.neo4j
def test_the_walk_fact_is_read_once_per_driver_then_known_to_every_planner(
    settings: Settings, driver: Driver
) -> None:
    """The test server runs the plugin built from ``plugin/``: its walk functions are listed."""
    planner = Planner(GraphContext.open(settings, driver))
    walk = planner.planned(lambda facts: facts.variant("select_mentioned"))
    assert walk == {"walk": "plugin"}
    # a second context on the same driver starts from what the first read: no MissingFact
    known = Planner(GraphContext.open(settings, driver)).facts()
    assert known.tier_walk_plugin is True
    assert known.variant("select_near") == {"walk": "plugin"}


def _tiers(**scope: object) -> object:
    """Compiled tiers as ``plans.tiers_query`` reads them: one tier given by its entities."""
    from types import SimpleNamespace

    tier = SimpleNamespace(list_variable="s1", member_variable="m1", weight=0.1, name="N")
    prelude = "CALL () { RETURN [] AS s1, [] AS m1 }\nWITH *, null AS m_none"
    return SimpleNamespace(tiers=[tier], params={}, prelude=prelude, universe=-1, **scope)


PLUGIN = {"u_search": "search", "rank_plugin": True, "rank_tiers_plugin": True}
PLANNED = {"exact_max": 500, "tier_list_max": 3000}
NO_PLUGIN = {"u_search": "search", "rank_plugin": False, "rank_tiers_plugin": False}


@pytest.mark.parametrize(
    ("known", "scope", "expected"),
    [
        ({**PLUGIN, "rank_auto_plugin": True}, {}, "retrieve_auto"),
        ({**PLUGIN, "rank_auto_plugin": False}, {}, "retrieve_boost"),  # a jar before rankAuto
        ({**PLUGIN, "rank_auto_plugin": True}, {"in_scope": True}, "retrieve_boost"),
        ({**PLUGIN, "rank_auto_plugin": True}, {"filtered": True}, "retrieve_boost"),
        (NO_PLUGIN, {}, "retrieve_boost"),
    ],
)
def test_auto_ranks_in_one_plugin_call_only_unscoped_and_where_the_plugin_lists_it(
    known: dict[str, object], scope: dict[str, object], expected: str
) -> None:
    from guidedrag_graph.retrieval import plans

    facts = _facts(**known, **PLANNED, search_in_filter=False, search_in_unready="nope",
                   scope_exact_max=10, vector_filter_properties=frozenset())  # fmt: skip
    query = plans.tiers_query(facts, _tiers(**scope), [0.5] * 4, 5, False, None)  # type: ignore[arg-type]
    assert query.name == expected
    if expected == "retrieve_auto":
        assert "guidedrag.rankAuto(" in query.cypher and "SEARCH" not in query.cypher
        assert query.params["index_name"] == "chunk_embedding"
        assert query.params["chunk_id_property"] == "id"
        assert query.params["tier_mentions"] == "MENTIONS"


def test_the_one_call_fact_is_asked_only_of_a_plugin_that_ranks_the_tiers() -> None:
    from guidedrag_graph.retrieval import plans

    facts = _facts(**PLUGIN, **PLANNED)
    with pytest.raises(MissingFact) as missing:
        plans.tiers_query(facts, _tiers(), [0.5] * 4, 5, False, None)  # type: ignore[arg-type]
    assert missing.value.name == "rank_auto_plugin"
    plain = _facts(**NO_PLUGIN, **PLANNED)
    assert plans.tiers_query(plain, _tiers(), [0.5] * 4, 5, False, None).name == "retrieve_boost"  # type: ignore[arg-type]
