"""Which names a trusted scope may show, decided from facts alone (issue 37): ``kept``
(``selection/scope_kept.py``) takes the names asked, the held set or none, and the check's answer
as literals — no graph, scope or driver — and asks for the check (``MissingScopeFact``) only for
a scope too large to hold and only when something is asked. The reads themselves are
``ScopeNames``'s, checked on Neo4j by ``tests/test_scope_leaks.py`` and
``scripts/read_digest.py``. No Neo4j."""

from __future__ import annotations

from operator import attrgetter

import pytest

from guidedrag_graph.selection.fact_rounds import FactsNotConverging, decided
from guidedrag_graph.selection.scope_kept import MissingScopeFact, ScopeAsk, asked, kept


def test_names_asked_are_text_each_once_in_order_and_never_null() -> None:
    assert asked(["b", None, "a", "b", 3]) == ["b", "a", "3"]
    assert asked(iter(())) == []


def test_a_held_scope_answers_from_memory_in_the_order_asked() -> None:
    ask = ScopeAsk("names", ["Rome", "Paris", "Oslo"], frozenset({"Oslo", "Rome", "Lima"}))
    assert kept(ask) == ["Rome", "Oslo"]  # the order asked, not the held set's
    assert kept(ScopeAsk("ids", ["e1"], frozenset())) == []  # a scope holding nothing


def test_a_scope_not_held_asks_for_the_check_of_exactly_the_names_asked() -> None:
    ask = ScopeAsk("types", ["A", "B", "C"], None)
    with pytest.raises(MissingScopeFact) as err:
        kept(ask)
    assert err.value.kind == "types" and err.value.ask == ("A", "B", "C")
    # the names are not shown: a message must not carry an out-of-scope name
    assert "A" not in str(err.value).replace("asked", "") and "3 types" in str(err.value)
    ask.checked = frozenset({"C", "A", "Z"})  # the check's answer, in any order
    assert kept(ask) == ["A", "C"]
    ask.checked = frozenset()
    assert kept(ask) == []  # nothing is let through unchecked


def test_nothing_asked_needs_no_check() -> None:
    assert kept(ScopeAsk("documents", [], None)) == []


def test_the_edge_loop_reads_the_check_once_and_ends_one_never_handed_in() -> None:
    checks: list[tuple[str, tuple[str, ...]]] = []

    def check(ask: ScopeAsk, missing: MissingScopeFact) -> ScopeAsk:
        checks.append((missing.kind, missing.ask))
        ask.checked = frozenset({"d2"})
        return ask

    ask = ScopeAsk("documents", asked(["d1", "d2", "d1"]), None)
    key = attrgetter("kind")
    assert decided(kept, ask, check, MissingScopeFact, key, rounds=1) == ["d2"]
    assert checks == [("documents", ("d1", "d2"))]
    held = ScopeAsk("documents", ["d1"], frozenset({"d1"}))
    assert decided(kept, held, check, MissingScopeFact, key, rounds=1) == ["d1"]
    assert len(checks) == 1  # a held scope reads nothing

    def forgets(ask: ScopeAsk, missing: MissingScopeFact) -> ScopeAsk:
        return ask

    with pytest.raises(FactsNotConverging, match="asked for again"):
        decided(kept, ScopeAsk("ids", ["e"], None), forgets, MissingScopeFact, key, rounds=1)
