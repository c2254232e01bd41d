"""Name resolution without a database: one ``Resolution`` for hard selections and ``auto``'s tiers
(each name fetched once per question), the words an unknown name is reported in, emptiness known
before any chunk is read, and explanations walked down a sizes tree."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import ClassVar

import pytest

from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.retrieval import Retriever
from guidedrag_graph.schema.presets import schema_from_settings
from guidedrag_graph.selection import EmptySelection, Selector, parse
from guidedrag_graph.selection.cost import CostStats, GraphCounts
from guidedrag_graph.selection.explain import SizeNode, explain
from guidedrag_graph.selection.resolution import SUGGESTED_NAMES
from guidedrag_graph.semantics import Semantics
from guidedrag_graph.steering.tier_prep import prepare_tiers
from guidedrag_graph.steering.tiers import TierWeights, plan_auto

NO_SUCH = "(by name, id, case-insensitive name or alias)"


class FakeResolver:
    """Entities by exact name; relation types FOUGHT_IN and BORN_IN; one document, d1. Records
    every batch of names asked for, and every name a suggestion was asked for."""

    ENTITIES: ClassVar[dict[str, list[str]]] = {"Rome": ["rome"], "Gaul": ["gaul"]}
    TYPES: ClassVar[set[str]] = {"FOUGHT_IN", "BORN_IN"}

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.suggested: list[str] = []

    def entity_ids_many(self, names: list[str]) -> dict[str, list[str]]:
        self.batches.append(list(names))
        return {n: self.ENTITIES.get(n, []) for n in names}

    def suggestions(self, name: str) -> list[str]:
        self.suggested.append(name)
        return ["Rome"] if name.startswith("R") else []

    def resolve_types(self, types: tuple[str, ...]) -> tuple[list[str], list[str]]:
        return sorted({t for t in types if t in self.TYPES}), [
            t for t in types if t not in self.TYPES
        ]

    def close_types(self, name: str) -> list[str]:
        return ["FOUGHT_IN"] if "FOUGHT" in name else []

    def document_ids(self, name: str) -> list[str]:
        return ["d1"] if name == "d1" else []

    def cost_stats(self, ids: list[str]) -> CostStats:
        """A small graph: every selection here is far below the cost bound."""
        return CostStats(GraphCounts(100, 50, 200, 400), {i: (3, 2) for i in ids})


@pytest.fixture
def selector(monkeypatch: pytest.MonkeyPatch) -> Selector:
    # No server here: rank_plugin off, so compiling auto's tiers asks for no server fact (which
    # walk their entity tiers take: the plugin's functions, when a server lists them).
    settings = Settings(_env_file=None, openai_api_key=None, rank_plugin="off")  # type: ignore[call-arg]
    graph = GraphContext(None, settings, schema_from_settings(settings))  # type: ignore[arg-type]
    selector = Selector(graph)
    selector.resolver = FakeResolver()  # type: ignore[assignment]
    monkeypatch.setattr(selector, "schema_mismatch", lambda: None)
    monkeypatch.setattr(selector, "fulltext_missing", lambda: None)
    return selector


def _variants(selector: Selector) -> Callable[[str], Mapping[str, str]]:
    """The edge's variant chooser (``RankFacts.variant``): with the plugin off it needs no read."""
    return Retriever(selector.graph).paths.variant


def fake(selector: Selector) -> FakeResolver:
    assert isinstance(selector.resolver, FakeResolver)
    return selector.resolver


def test_every_name_of_a_selection_is_fetched_in_one_batch(selector: Selector) -> None:
    prep = selector.prepare(
        "entity('Rome') & khop('Rome', 2) | near('Gaul') | hop('Gaul', ['BORN_IN'])"
        " | entity(['Gaul', 'Rome']) | document('d1')"
    )
    assert prep.empty is None and prep.warnings == ()
    assert len(fake(selector).batches) == 1
    assert set(fake(selector).batches[0]) == {"Rome", "Gaul"}
    assert prep.resolved[parse("hop('Gaul', ['BORN_IN'])")].types == ("BORN_IN",)
    assert prep.resolved[parse("document('d1')")].ids == ("d1",)


def test_a_prepared_selection_is_not_resolved_again(
    selector: Selector, monkeypatch: pytest.MonkeyPatch
) -> None:
    """sizes() and explain_empty() take the prepared selection the pipeline ran."""
    queries: list[str] = []

    def read(query: str, params: dict[str, object], *_: str) -> list[dict[str, object]]:
        queries.append(query)  # sizes of: the intersection, entity('Rome'), entity('Gaul')
        return [{"sizes": [0, 2, 2], "truncated": [False, False, False]}]

    monkeypatch.setattr(selector, "_read", read)
    prep = selector.prepare("entity('Rome') & entity('Gaul')")
    assert [c.size for c in selector.sizes(prep).children] == [2, 2]
    why = selector.explain_empty(prep)
    assert why is not None and why.kind == "empty_intersection"
    assert len(fake(selector).batches) == 1 and len(queries) == 2
    selector.explain_empty("entity('Rome') & entity('Gaul')")  # text is still prepared first
    assert len(fake(selector).batches) == 2


def test_an_unknown_entity_is_explained_with_suggestions(
    selector: Selector, monkeypatch: pytest.MonkeyPatch
) -> None:
    prep = selector.prepare("entity('Rme') & entity('Gaul')")
    assert prep.empty == EmptySelection(
        "unknown_entity",
        "entity('Rme')",
        f"no entity named 'Rme' {NO_SUCH}; did you mean 'Rome'?",
        ("Rome",),
    )
    monkeypatch.setattr(selector, "schema_mismatch", lambda: "preset 'x' expects :Entity")
    why = selector.prepare("entity('Rme')").empty
    assert why is not None
    assert (
        why.message
        == f"no entity named 'Rme' {NO_SUCH}; preset 'x' expects :Entity; did you mean 'Rome'?"
    )


def test_a_missing_fulltext_index_is_named_when_nothing_is_suggested(
    selector: Selector, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(selector, "fulltext_missing", lambda: "no full-text index")
    assert selector.prepare("entity('Atlantis')").empty == EmptySelection(
        "unknown_entity",
        "entity('Atlantis')",
        f"no entity named 'Atlantis' {NO_SUCH}; no full-text index",
    )
    why = selector.prepare("entity('Rme')").empty
    assert why is not None and why.message.endswith("did you mean 'Rome'?")  # suggestions win


def test_only_the_first_unknown_names_cost_a_suggestion(selector: Selector) -> None:
    names = [f"X{i}" for i in range(SUGGESTED_NAMES + 3)]
    prep = selector.prepare(" | ".join(f"entity('{n}')" for n in names) + " | entity('Rome')")
    assert prep.empty is None
    assert [w.term for w in prep.warnings] == [f"entity('{n}')" for n in names]
    assert fake(selector).suggested == names[:SUGGESTED_NAMES]


def test_entities_warn_about_unknown_names_unless_all_are(selector: Selector) -> None:
    prep = selector.prepare("entity(['Atlantis', 'Rome', 'Nowhere'])")
    assert prep.empty is None
    assert [(w.kind, w.term) for w in prep.warnings] == [
        ("unknown_entity", "entity('Atlantis')"),
        ("unknown_entity", "entity('Nowhere')"),
    ]
    prep = selector.prepare("entity(['Atlantis', 'Nowhere'])")
    assert prep.empty is not None and prep.empty.term == "entity(['Atlantis', 'Nowhere'])"
    assert "'Atlantis'" in prep.empty.message and prep.warnings == ()


def test_unknown_relation_types_and_documents(selector: Selector) -> None:
    assert selector.prepare("hop('Rome', ['FOUGHT_ON', 'BORN_IN'])").empty == EmptySelection(
        "unknown_relation_type",
        "hop('Rome', ['FOUGHT_ON', 'BORN_IN'])",
        "unknown relation type(s) 'FOUGHT_ON': the graph has no such relationships; "
        "did you mean 'FOUGHT_IN'?",
        ("FOUGHT_IN",),
    )
    # an unknown start entity is what is reported, before its relation types are asked
    why = selector.prepare("hop('Atlantis', ['NOPE'])").empty
    assert why is not None and why.kind == "unknown_entity"
    assert selector.prepare("document('d9')").empty == EmptySelection(
        "empty_term", "document('d9')", "no document with id or title 'd9'"
    )


@pytest.mark.parametrize(
    ("text", "empty"),
    [
        ("entity('Atlantis') | entity('Rome')", None),
        ("entity('Atlantis') | entity('Nowhere')", "entity('Atlantis')"),
        ("entity('Rome') & entity('Atlantis')", "entity('Atlantis')"),
        ("entity('Rome') - entity('Atlantis')", None),
        ("entity('Atlantis') - entity('Rome')", "entity('Atlantis')"),
        ("entity('Atlantis') ^ entity('Rome')", None),
        ("entity('Atlantis') ^ entity('Nowhere')", "entity('Atlantis')"),
        ("boost(entity('Atlantis'): 0.5)", None),  # a boost is U: the tier only warns
    ],
)
def test_emptiness_known_from_resolution(selector: Selector, text: str, empty: str | None) -> None:
    prep = selector.prepare(text)
    assert (prep.empty.term if prep.empty else None) == empty
    assert bool(prep.warnings) == (empty is None)


def test_auto_resolves_each_name_once_and_abstains_in_the_plain_words(
    selector: Selector, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(selector, "schema_mismatch", lambda: "WRONG PRESET")
    weights = TierWeights(entity=0.3, relation=0.2, hop=0.1, near=0.05)
    semantics = Semantics(entities=("Gaul", "Atlantis", "Rme"), complexity=2)
    prepared = prepare_tiers(selector, plan_auto(semantics, weights), _variants(selector))
    assert prepared.compiled is None and fake(selector).batches == [["Gaul", "Atlantis", "Rme"]]
    assert prepared.empty == EmptySelection(
        "unknown_entity", "entity('Atlantis')", f"no entity named 'Atlantis' {NO_SUCH}"
    )
    semantics = Semantics(entities=("Rome",), relations=("fought on",), relational=True)
    prepared = prepare_tiers(selector, plan_auto(semantics, weights), _variants(selector))
    assert prepared.empty is not None and prepared.empty.kind == "unknown_relation_type"
    assert prepared.empty.term == "hop('Rome', ['FOUGHT_ON'])"
    assert prepared.empty.suggestions == ("FOUGHT_IN",)
    semantics = Semantics(entities=("Rome", "Gaul"), relations=("fought in",), relational=True)
    prepared = prepare_tiers(selector, plan_auto(semantics, weights), _variants(selector))
    assert prepared.empty is None and prepared.compiled is not None
    assert [t.name for t in prepared.compiled.tiers] == ["E", "A_rel", "A_hop", "N"]
    assert fake(selector).batches[-1] == ["Rome", "Gaul"]


def test_a_plan_without_tiers_still_abstains_on_an_unknown_name(selector: Selector) -> None:
    plan = plan_auto(Semantics(entities=("Atlantis",)), TierWeights())
    assert not plan.tiers
    assert prepare_tiers(selector, plan, _variants(selector)).empty is not None
    assert (
        prepare_tiers(
            selector, plan_auto(Semantics(entities=("Rome",)), TierWeights()), _variants(selector)
        ).empty
        is None
    )


# --- explaining an empty result from its sizes ---------------------------------------------


def tree(size: int, *children: SizeNode) -> SizeNode:
    return SizeNode("", size, children=list(children))


@pytest.mark.parametrize(
    ("text", "sizes", "kind", "term"),
    [
        (
            "entity('a') & entity('b')",
            tree(0, tree(2), tree(3)),
            "empty_intersection",
            "entity('a') & entity('b')",
        ),
        ("entity('a') & entity('b')", tree(0, tree(2), tree(0)), "empty_term", "entity('b')"),
        (
            "entity('a') - entity('b')",
            tree(0, tree(2), tree(4)),
            "empty_difference",
            "entity('a') - entity('b')",
        ),
        ("entity('a') - entity('b')", tree(0, tree(0), tree(4)), "empty_term", "entity('a')"),
        (
            "entity('a') ^ entity('b')",
            tree(0, tree(2), tree(2)),
            "empty_difference",
            "entity('a') ^ entity('b')",
        ),
        ("entity('a') | entity('b')", tree(0, tree(0), tree(0)), "empty_term", "entity('a')"),
        (
            "(entity('a') | entity('b')) & entity('c')",
            tree(0, tree(0, tree(0), tree(0)), tree(1)),
            "empty_term",
            "entity('a')",
        ),
    ],
)
def test_explain_walks_down_to_the_term_that_emptied_it(
    text: str, sizes: SizeNode, kind: str, term: str
) -> None:
    why = explain(parse(text), sizes, ())
    assert why is not None and (why.kind, why.term) == (kind, term)


def test_explain_messages_and_known_reasons() -> None:
    why = explain(parse("entity('a') & entity('b')"), tree(0, tree(2), tree(3)), ())
    assert why is not None and why.message == (
        "entity('a') (2 chunks) and entity('b') (3 chunks) share no chunk; "
        "try | or a soft selection"
    )
    why = explain(parse("entity('a') - entity('b')"), tree(0, tree(2), tree(4)), ())
    assert (
        why is not None and why.message == "every chunk of entity('a') (2) is also in entity('b')"
    )
    why = explain(parse("entity('a') ^ entity('b')"), tree(0, tree(2), tree(2)), ())
    assert why is not None and why.message == "entity('a') and entity('b') select the same chunks"
    known = EmptySelection("unknown_entity", "entity('a')", "no entity named 'a'")
    assert explain(parse("entity('a') | entity('b')"), tree(0, tree(0), tree(0)), [known]) == known
    assert explain(parse("entity('a')"), tree(3), ()) is None


def test_suggestions_are_ranked_by_similarity() -> None:
    from guidedrag_graph.selection.resolver import rank_similar, type_key

    types = ["IS_ALBUM_OF", "IS_AN_ALTERNATE_CAPTAIN_OF", "IS_CURRENCY_OF", "CURRENCY"]
    assert rank_similar("IS_CURENCY_OF", types, 5, split="_")[0] == "IS_CURRENCY_OF"
    assert rank_similar("Ada Lovelac", ["Adam", "Ada Lovelace", "Lovelace Ada"], 3)[0] == (
        "Ada Lovelace"
    )
    assert type_key("orbit") == type_key("ORBITS") == type_key("Orbited") == ("ORBIT",)
    assert type_key("wroteAlgorithmFor") == type_key("WROTE_ALGORITHMS_FOR")
