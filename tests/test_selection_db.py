"""The Selector against a real Neo4j: resolution, compiled results, sizes, empty explanations."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.migration.run import migrate
from guidedrag_graph.schema.presets import PRESETS, SchemaMapping
from guidedrag_graph.selection import Selector, entity, hop, khop, parse
from guidedrag_graph.selection.evaluator import evaluate
from guidedrag_graph.testing.examples import HOSTILE, roman_graph
from guidedrag_graph.testing.memory_graph import load_graph
from tests.conftest import wipe

SCHEMAS = {
    "guidedrag-types": PRESETS["guidedrag"],
    "guidedrag-property": PRESETS["guidedrag"].model_copy(update={"relation_mode": "property"}),
    "graphrag-types": PRESETS["neo4j-graphrag"],
}


@pytest.fixture(scope="module", params=sorted(SCHEMAS))
def roman(
    request: pytest.FixtureRequest, driver: Driver, main_settings: Settings
) -> Iterator[tuple[Selector, SchemaMapping]]:
    schema = SCHEMAS[request.param]
    wipe(driver)
    migrate(driver, main_settings, schema)
    load_graph(roman_graph(), driver, schema)
    yield Selector(GraphContext.open(main_settings, driver, schema)), schema
    wipe(driver)


EXPRESSIONS = [
    "entity('Rome')",
    "entity('rome')",
    "entity('  ROME ')",
    "entity('Roma')",
    "entity('the eternal city')",
    "entity('caesar')",
    "entity('Rome') | entity('Gaul')",
    "entity('Julius Caesar') & entity('Gaul')",
    "entity('Julius Caesar') - entity('Gaul')",
    "entity('Julius Caesar') ^ entity('Rome')",
    "entity('Julius Caesar') & hop('Julius Caesar', ['FOUGHT_IN'])",
    "hop('Julius Caesar', ['fought in'])",
    "hop('Julius Caesar', ['FOUGHT_IN', 'BORN_IN'], direction='out')",
    "hop('Gaul', ['FOUGHT_IN'], direction='out')",
    "hop('Gaul', ['FOUGHT_IN'], direction='in')",
    "hop('Julius Caesar', ['BORN_IN', 'CAPITAL_OF'], depth=2)",
    "khop('Julius Caesar', 1)",
    "khop('Julius Caesar', 2)",
    "khop('Paris', 3)",
    "near('Gaul')",
    "near('Paris', 2)",
    "type('CITY')",
    "category('city')",
    "document('d1')",
    "document('Paris')",
    "source('wiki')",
    "date(2002, 2026)",
    "date(null, '1999-01-01')",
    "chunks('c1', 'c4', 'nope')",
    "all()",
    "all() - entity('Rome')",
    "(entity('Rome') | entity('Gaul')) & source('wiki') - chunks('c5')",
    f"entity({HOSTILE!r})",
    "entity('`') | entity('{x}')",
    "entity('Atlantis') | entity('Rome')",
    "type('NOPE') | entity('Rome')",
    "entity('Rome') | date(1000, 1001) | source('none') | chunks()",
]


# Expressions whose Cypher depends on the schema mapping (labels, MENTIONS direction, PART_OF,
# relation mode); the default schema runs the whole list.
SCHEMA_SENSITIVE = {
    "entity('Rome')",
    "entity('Roma')",
    "entity('Julius Caesar') & hop('Julius Caesar', ['FOUGHT_IN'])",
    "hop('Julius Caesar', ['fought in'])",
    "hop('Gaul', ['FOUGHT_IN'], direction='in')",
    "hop('Julius Caesar', ['BORN_IN', 'CAPITAL_OF'], depth=2)",
    "khop('Julius Caesar', 2)",
    "near('Paris', 2)",
    "category('city')",
    "document('Paris')",
    "source('wiki')",
    "date(2002, 2026)",
    "all() - entity('Rome')",
}


def test_cypher_equals_reference(roman: tuple[Selector, SchemaMapping]) -> None:
    selector, schema = roman
    texts = EXPRESSIONS if schema == SCHEMAS["guidedrag-types"] else sorted(SCHEMA_SENSITIVE)
    for text in texts:
        expr = parse(text)
        expected = evaluate(expr, roman_graph())
        assert set(selector.chunk_ids(expr)) == expected, text
        tree = selector.sizes(expr)
        assert tree.size == len(expected), text
        assert not tree.truncated, text


def test_expected_sets_are_meaningful(roman: tuple[Selector, SchemaMapping]) -> None:
    """Spot values, so the differential comparison cannot pass on two equal wrong answers."""
    selector, _ = roman
    assert selector.chunk_ids("entity('roma')") == ["c1", "c5"]
    assert selector.chunk_ids("entity('Julius Caesar') & hop('Julius Caesar', ['FOUGHT_IN'])") == [
        "c2"
    ]
    assert selector.chunk_ids("khop('Julius Caesar', 2)") == ["c1", "c2", "c3", "c4", "c5"]
    assert selector.chunk_ids("date(2002, 2026)") == ["c1", "c2", "c3"]


def test_unknown_entity_is_reported_with_suggestions(
    roman: tuple[Selector, SchemaMapping],
) -> None:
    selector, _ = roman
    prep = selector.prepare(entity("Rme") & entity("Gaul"))
    assert prep.empty is not None
    assert prep.empty.kind == "unknown_entity"
    assert prep.empty.term == "entity('Rme')"
    assert "Rome" in prep.empty.suggestions or "Rome" in prep.empty.message
    # one unknown side of a union does not empty the selection, but it is reported
    prep = selector.prepare("entity('Rme') | entity('Gaul')")
    assert prep.empty is None
    assert [w.kind for w in prep.warnings] == ["unknown_entity"]


def test_unknown_relation_type_is_rejected(roman: tuple[Selector, SchemaMapping]) -> None:
    selector, _ = roman
    for bad in ["FOUGHT_ON", HOSTILE, "`]-() DETACH DELETE n //", "", "MENTIONS", "PART_OF"]:
        prep = selector.prepare(hop("Julius Caesar", ["FOUGHT_IN", bad]))
        assert prep.empty is not None, bad
        assert prep.empty.kind == "unknown_relation_type"
        assert selector.chunk_ids(prep) == []
    prep = selector.prepare(hop("Julius Caesar", ["FOUGHT_ON"]))
    assert prep.empty is not None and "FOUGHT_IN" in prep.empty.suggestions


def test_empty_results_explain_themselves(roman: tuple[Selector, SchemaMapping]) -> None:
    selector, _ = roman
    why = selector.explain_empty("entity('Paris') & entity('Rome')")
    assert why is not None and why.kind == "empty_intersection"
    assert why.term == "entity('Paris') & entity('Rome')"
    why = selector.explain_empty("entity('Rome') - source('wiki')")
    assert why is not None and why.kind == "empty_difference"
    why = selector.explain_empty("(type('NOPE') | entity('Atlantis')) & entity('Rome')")
    assert why is not None and why.kind == "empty_term" and why.term == "type('NOPE')"
    assert selector.explain_empty("entity('Rome')") is None


def test_hop_cap_is_reported_not_silent(
    roman: tuple[Selector, SchemaMapping], settings: Settings
) -> None:
    selector, schema = roman
    capped_settings = settings.model_copy(update={"hop_cap": 1})
    capped = Selector(GraphContext.open(capped_settings, selector.driver, schema))
    tree = capped.sizes("entity('Rome') | khop('Julius Caesar', 1)")
    assert tree.truncated
    assert tree.children[1].truncated and not tree.children[0].truncated
    assert tree.children[1].size == 2  # one of the two neighbours, each in two chunks


def test_sizes_tree_mirrors_the_expression(roman: tuple[Selector, SchemaMapping]) -> None:
    selector, _ = roman
    tree = selector.sizes("entity('Rome') | entity('Gaul') & source('wiki')")
    assert tree.text == "entity('Rome') | entity('Gaul') & source('wiki')"
    assert [c.text for c in tree.children] == ["entity('Rome')", "entity('Gaul') & source('wiki')"]
    assert [c.size for c in tree.children] == [2, 1]
    assert [c.size for c in tree.children[1].children] == [2, 5]
    assert tree.size == 3


def test_hostile_names_leave_the_database_unchanged(
    roman: tuple[Selector, SchemaMapping], driver: Driver
) -> None:
    selector, _ = roman

    def counts() -> tuple[int, int]:
        record = driver.execute_query(
            "MATCH (n) WITH count(n) AS n MATCH ()-[r]->() RETURN n, count(r) AS r"
        ).records[0]
        return int(record["n"]), int(record["r"])

    before = counts()
    for name in [HOSTILE, "'", '"', "`", "``", "{}", "})", "\\", "", " ", "Röme ☃", "$sel_0_ids"]:
        for expr in [entity(name), hop(name, ["FOUGHT_IN"]), khop(name, 2), hop("Rome", [name])]:
            selector.chunk_ids(expr)
            selector.sizes(expr)
        parse(str(entity(name)))
    assert counts() == before
    assert selector.chunk_ids(entity(HOSTILE)) == ["c6"]
