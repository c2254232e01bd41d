"""A batch of names' entity ids decided from facts alone (issue 37): ``decide_entity_ids``
takes the rows of each tier read and the scope's answer for their ids, with no reader, graph or
driver, and gives each name's ids and what the warm state keeps; a fact it lacks is named, in
the order the ``Resolver`` reads them. A scoped answer holds no out-of-scope id, and a name the
KB has only outside the scope reads as unknown (kept as [] under the scope's key). The import
side (no driver, database layer or context) is the "Planning is pure" contract, run by
``tests/test_architecture.py``. No Neo4j needed."""

from __future__ import annotations

from typing import Any

import pytest

from guidedrag_graph.expiring import ExpiringCache
from guidedrag_graph.schema.presets import SchemaMapping
from guidedrag_graph.selection.entity_matches import (
    EntityFacts,
    EntityIds,
    MissingEntityFact,
    decide_entity_ids,
    lowest_tier,
    narrowed,
    scope_asks,
)
from guidedrag_graph.selection.resolver import Resolver

NAMES = ["Rome", "Roma", "Gaul", "Nowhere", "Atlantis"]
# First tiers: Rome an exact name in scope; Roma a name_key match outside the scope (its alias
# is an in-scope entity); Gaul an exact name outside the scope, with no alias.
FIRST = [
    {"n": 0, "tier": 1, "id": "rome"},
    {"n": 1, "tier": 3, "id": "roma-out"},
    {"n": 2, "tier": 1, "id": "gaul-out"},
]
# The alias tier: Roma is an alias of rome; Atlantis an alias of an out-of-scope entity.
ALIAS = [{"n": 1, "tier": 4, "id": "rome"}, {"n": 4, "tier": 4, "id": "atl-out"}]
OUTSIDE = {"roma-out", "gaul-out", "atl-out"}


def scoped_facts(**kw: Any) -> EntityFacts:
    return EntityFacts(list(NAMES), scoped=True, version=7, **kw)


def test_a_scoped_batch_is_decided_from_rows_and_the_scope_answer_alone() -> None:
    facts = scoped_facts(
        rows={"query": FIRST, "alias": ALIAS},
        in_scope={"query": frozenset({"rome"}), "alias": frozenset({"rome"})},
    )
    decided = decide_entity_ids(facts)
    assert decided == EntityIds(
        ids={"Rome": ["rome"], "Roma": ["rome"], "Gaul": [], "Nowhere": [], "Atlantis": []},
        cache=(
            ("entity", "Rome", ["rome"]),
            ("entity", "Roma", ["rome"]),  # the in-scope alias, not the out-of-scope key match
            ("entity", "Gaul", []),  # the KB has it, outside the scope: unknown here, kept
            ("unknown", "Nowhere", 7),  # the KB lacks it: kept with the version it was read at
            ("entity", "Atlantis", []),
        ),
    )
    # nothing of the scope's outside reaches the answer or the warm state
    assert not OUTSIDE & {i for kind, _, ids in decided.cache if kind == "entity" for i in ids}
    assert not OUTSIDE & {i for ids in decided.ids.values() for i in ids}


def test_unscoped_the_lowest_tier_wins_and_only_unknown_names_are_kept_with_the_version() -> None:
    facts = EntityFacts(list(NAMES), version=7, rows={"query": FIRST, "alias": ALIAS})
    assert decide_entity_ids(facts) == EntityIds(
        ids={
            "Rome": ["rome"],
            "Roma": ["roma-out"],  # first tiers matched: the alias row is not taken
            "Gaul": ["gaul-out"],
            "Nowhere": [],
            "Atlantis": ["atl-out"],
        },
        cache=(
            ("entity", "Rome", ["rome"]),
            ("entity", "Roma", ["roma-out"]),
            ("entity", "Gaul", ["gaul-out"]),
            ("unknown", "Nowhere", 7),
            ("entity", "Atlantis", ["atl-out"]),
        ),
    )
    unversioned = EntityFacts(["Nowhere"], rows={"query": [], "alias": []})
    assert decide_entity_ids(unversioned) == EntityIds({"Nowhere": []}, ())


def asks(facts: EntityFacts, rows: dict[str, list[dict[str, Any]]], in_scope: set[str]) -> list:
    """Decide ``facts``, handing in each fact it names (as the edge does); the facts named."""
    named: list[tuple[str, str, tuple[str, ...]]] = []
    while True:
        try:
            decide_entity_ids(facts)
            return named
        except MissingEntityFact as missing:
            named.append((missing.kind, missing.read, missing.ask))
            if missing.kind == "rows":
                facts.rows[missing.read] = rows[missing.read]
            else:
                facts.in_scope[missing.read] = frozenset(a for a in missing.ask if a in in_scope)
            assert len(named) < 10


def test_each_fact_lacking_is_named_in_the_order_the_resolver_reads_them() -> None:
    both = {"query": FIRST, "alias": ALIAS}
    assert asks(scoped_facts(), both, {"rome"}) == [
        ("rows", "query", ()),
        ("in_scope", "query", ("rome", "roma-out", "gaul-out")),
        ("rows", "alias", ()),
        ("in_scope", "alias", ("rome", "atl-out")),
    ]
    # unscoped: the scope is never asked
    assert asks(EntityFacts(list(NAMES)), both, set()) == [
        ("rows", "query", ()),
        ("rows", "alias", ()),
    ]
    # every name kept a first-tier row: no alias read
    found = EntityFacts(["Rome"], scoped=True)
    assert asks(found, {"query": FIRST[:1]}, {"rome"}) == [
        ("rows", "query", ()),
        ("in_scope", "query", ("rome",)),
    ]
    # a name matched a first tier only outside the scope: the alias tier is read for it
    outside = EntityFacts(["Rome", "Roma"], scoped=True)
    assert asks(outside, {"query": FIRST[:2], "alias": ALIAS[:1]}, {"rome"})[2] == (
        "rows",
        "alias",
        (),
    )
    assert decide_entity_ids(outside).ids == {"Rome": ["rome"], "Roma": ["rome"]}


def test_rows_without_ids_ask_the_scope_nothing_and_keep_nothing() -> None:
    facts = EntityFacts(["X"], scoped=True, rows={"query": [{"n": 0, "tier": 1, "id": None}]})
    with pytest.raises(MissingEntityFact) as missing:
        decide_entity_ids(facts)
    assert (missing.value.kind, missing.value.read) == ("rows", "alias")
    facts.rows["alias"] = []
    assert decide_entity_ids(facts) == EntityIds({"X": []}, (("entity", "X", []),))


def test_the_helpers() -> None:
    rows = [
        {"tier": 3, "id": "b"},
        {"tier": 1, "id": "c"},
        {"tier": 1, "id": "a"},
        {"tier": 1, "id": None},
        {"tier": 1, "id": "a"},
    ]
    assert lowest_tier(rows) == ["a", "c"] and lowest_tier([]) == []
    assert scope_asks(rows) == ("b", "c", "a")
    assert narrowed(rows, {"b", "a"}) == [rows[0], rows[2], rows[4]]


class _Graph:
    """What the Resolver's entity batch touches of a ``GraphContext``: reads are recorded."""

    def __init__(self, rows: dict[str, list[dict[str, Any]]]) -> None:
        self.schema = SchemaMapping()
        self.data = ExpiringCache(60)
        self.state = None
        self.rows = rows
        self.sent: list[tuple[str, Any]] = []

    def read(self, query: str, params: dict[str, Any], *, name: str) -> list[dict[str, Any]]:
        part = "alias" if "alias_keys" in query else "query"
        self.sent.append((f"{name}:{part}", params["sel_names"]))
        return self.rows[part]


class _UnheldScope:
    """A scope too large to hold: each ``keep_ids`` is a check read (recorded)."""

    key = "entity('Rome')"

    def __init__(self, graph: _Graph, in_scope: set[str]) -> None:
        self.graph, self.in_scope = graph, in_scope

    def keep_ids(self, ids: Any) -> list[str]:
        wanted = [str(i) for i in dict.fromkeys(ids) if i is not None]
        self.graph.sent.append(("scope_names_check", wanted))
        return [i for i in wanted if i in self.in_scope]


def test_the_resolver_reads_each_fact_in_order_and_writes_what_was_decided() -> None:
    graph = _Graph({"query": FIRST, "alias": ALIAS})
    scope = _UnheldScope(graph, {"rome"})
    resolver = Resolver(graph, scope=scope)  # type: ignore[arg-type]
    assert resolver.entity_ids_many(NAMES) == {
        "Rome": ["rome"],
        "Roma": ["rome"],
        "Gaul": [],
        "Nowhere": [],
        "Atlantis": [],
    }
    assert graph.sent == [
        ("resolve_entities:query", NAMES),
        ("scope_names_check", ["rome", "roma-out", "gaul-out"]),
        ("resolve_entities:alias", NAMES),
        ("scope_names_check", ["rome", "atl-out"]),
    ]
    kept = {n: graph.data.get(("entity", ("scope", scope.key), n)) for n in NAMES}
    # no state: no version, so the unknown name is not kept; the rest under the scope's key
    assert kept == {"Rome": ["rome"], "Roma": ["rome"], "Gaul": [], "Nowhere": None, "Atlantis": []}
    graph.sent.clear()
    assert resolver.entity_ids_many(["Rome", "Gaul"]) == {"Rome": ["rome"], "Gaul": []}
    assert graph.sent == []  # both kept
