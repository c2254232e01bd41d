"""The one "ask, read the missing fact, ask again" loop (``selection/fact_rounds.py``, issue 37):
a decision gets its facts read in the order it asks for them, and one that does not converge
ends with ``FactsNotConverging`` instead of spinning — a fact asked for again after it was
read, or more reads than the caller's bound — at each of the three edges that run it
(``Planner.planned``, ``NameResolution.decided``, ``Resolver._fetch_entity_ids``). No Neo4j."""

from __future__ import annotations

from typing import Any

import pytest

from guidedrag_graph.retrieval.facts import MissingFact
from guidedrag_graph.retrieval.planner import GATHERED, Planner
from guidedrag_graph.selection import nodes as A
from guidedrag_graph.selection.entity_matches import EntityFacts, MissingEntityFact
from guidedrag_graph.selection.fact_rounds import FactsNotConverging, decided
from guidedrag_graph.selection.name_reads import NameResolution
from guidedrag_graph.selection.resolution import MissingNameFact, Resolution
from guidedrag_graph.selection.resolver import Resolver


def _needs(*wanted: str) -> Any:
    def decide(facts: dict[str, int]) -> int:
        for name in wanted:
            if name not in facts:
                raise KeyError(name)
        return sum(facts[n] for n in wanted)

    return decide


def _key(missing: KeyError) -> str:
    return str(missing.args[0])


def test_each_missing_fact_is_read_once_in_the_order_asked() -> None:
    read: list[str] = []

    def reader(facts: dict[str, int], missing: KeyError) -> dict[str, int]:
        read.append(_key(missing))
        return facts | {_key(missing): len(read)}

    assert decided(_needs("a", "b", "c"), {"b": 10}, reader, KeyError, _key, rounds=2) == 13
    assert read == ["a", "c"]
    # another exception passes through untouched
    with pytest.raises(ValueError):
        decided(lambda f: int("x"), {}, reader, KeyError, _key, rounds=2)


def test_a_fact_asked_again_after_it_was_read_ends_the_loop() -> None:
    read: list[str] = []

    def forgets(facts: dict[str, int], missing: KeyError) -> dict[str, int]:
        read.append(_key(missing))
        return facts  # the fact never handed in

    with pytest.raises(FactsNotConverging, match="asked for again after it was read") as err:
        decided(_needs("a"), {}, forgets, KeyError, _key, rounds=100)
    assert read == ["a"] and err.value.repeated and err.value.reads == 1
    assert isinstance(err.value.__cause__, KeyError)


def test_a_decision_asking_without_end_stops_at_its_bound() -> None:
    read: list[str] = []

    def endless(facts: dict[str, int]) -> int:
        raise KeyError(f"fact {len(facts)}")  # always a new one

    def reader(facts: dict[str, int], missing: KeyError) -> dict[str, int]:
        read.append(_key(missing))
        return facts | {_key(missing): 1}

    with pytest.raises(FactsNotConverging, match="still missing after 3 reads") as err:
        decided(endless, {}, reader, KeyError, _key, rounds=3)
    assert read == ["fact 0", "fact 1", "fact 2"] and not err.value.repeated
    # exactly the bound's reads still decide
    assert decided(_needs("a", "b", "c"), {}, reader, KeyError, _key, rounds=3) == 3


class _StuckPlanner(Planner):
    """A planner whose reads hand nothing in."""

    def gather(self, facts: Any, name: str) -> Any:
        return facts


def test_the_planner_ends_a_plan_that_does_not_converge() -> None:
    def plan(facts: Any) -> int:
        raise MissingFact("rank_plugin")

    with pytest.raises(FactsNotConverging, match="rank_plugin") as err:
        _StuckPlanner(None).planned(plan, facts=object())  # type: ignore[arg-type]
    assert err.value.repeated
    assert "rank_plugin" in GATHERED


class _StuckNames(NameResolution):
    """A name resolution whose reads hand nothing in."""

    def gather(self, missing: MissingNameFact) -> None:
        return None


def test_a_name_resolution_ends_an_answer_that_does_not_converge() -> None:
    res = _StuckNames(Resolution(), reader=None)  # type: ignore[arg-type]
    with pytest.raises(FactsNotConverging, match="entity_ids"):
        res.resolve(A.Entity("Rome"))


class _Graph:
    def __init__(self) -> None:
        from guidedrag_graph.schema.presets import SchemaMapping

        self.schema = SchemaMapping()
        self.reads = 0

    def read(self, query: str, params: dict[str, Any], *, name: str) -> list[dict[str, Any]]:
        self.reads += 1
        return []


class _ForgetfulFacts(EntityFacts):
    """Entity facts that drop the rows handed in."""

    @property
    def rows(self) -> dict[str, Any]:  # type: ignore[override]
        return {}

    @rows.setter
    def rows(self, value: Any) -> None:
        pass


def test_the_resolver_ends_an_entity_batch_that_does_not_converge() -> None:
    graph = _Graph()
    resolver = Resolver(graph)  # type: ignore[arg-type]
    with pytest.raises(FactsNotConverging, match="'query' read") as err:
        resolver._fetch_entity_ids(_ForgetfulFacts(["Rome"]))
    assert graph.reads == 1 and isinstance(err.value.__cause__, MissingEntityFact)
