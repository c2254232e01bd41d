"""Hostile selections (issue 10, D2-D6, D8 and the limits): every one is a ``SelectionError``
with a clear message, never a RecursionError, TypeError, ValueError or a driver error, and nothing
recurses on the shape of user input."""

from __future__ import annotations

import time

import pytest

from guidedrag_graph.config import Settings
from guidedrag_graph.errors import SelectionError, SelectionSyntaxError
from guidedrag_graph.schema.presets import PRESETS
from guidedrag_graph.selection import (
    Entities,
    Expr,
    all_,
    category,
    chunks,
    entity,
    from_json,
    hop,
    khop,
    near,
    parse,
)
from guidedrag_graph.selection.compiler import compile_plan
from guidedrag_graph.selection.limits import CEILING, Limits, check
from guidedrag_graph.selection.selector import as_expr
from tests.test_selection_compile import identity_resolution


def union_text(n: int) -> str:
    return " | ".join(f"entity('e{i}')" for i in range(n))


# --- D2: no recursion on user input ------------------------------------------------------------


def test_deep_parentheses_are_an_error_not_a_recursion_error() -> None:
    text = "(" * 200 + "all()" + ")" * 200
    with pytest.raises(SelectionSyntaxError, match=r"nested 33 deep.*GUIDEDRAG_MAX_DEPTH"):
        parse(text)
    assert parse(text, CEILING) == all_()  # within the ceiling it is simply all()
    with pytest.raises(SelectionSyntaxError, match="nested"):
        parse("(" * 1_000_000)


def test_many_terms_are_an_error_and_work_when_allowed() -> None:
    with pytest.raises(SelectionSyntaxError, match=r"more than 200 terms.*GUIDEDRAG_MAX_TERMS"):
        parse(union_text(500))
    big = parse(union_text(2_000), CEILING)  # a chain 2,000 deep: nothing recurses on it
    assert parse(big.to_text(), CEILING) == big
    assert hash(big) == hash(parse(big.to_text(), CEILING))
    assert from_json(big.to_json(), CEILING) == big  # (json.dumps itself would recurse)
    assert sum(1 for _ in big.walk()) == 3_999
    assert len(list(big.leaves())) == 2_000
    plan = compile_plan(big, identity_resolution(big), PRESETS["guidedrag"], hop_cap=10)
    assert plan.body.count("CALL ()") == 1  # one union of entities: one subquery, one list
    assert len(plan.params["sel_0_ids"]) == 2_000
    sizes = compile_plan(
        big, identity_resolution(big), PRESETS["guidedrag"], hop_cap=10, force_sets=True
    )
    assert sizes.body.count("CALL ()") == 2_000  # sizes keep every node


def test_json_nested_deeply_is_an_error() -> None:
    node: dict[str, object] = {"op": "all"}
    for _ in range(1_000):
        node = {"op": "union", "left": node, "right": {"op": "all"}}
    with pytest.raises(SelectionError, match="GUIDEDRAG_MAX_TERMS"):
        from_json(node)
    text = (
        '{"op": "union", "left": ' * 1_000 + '{"op": "all"}' + ', "right": {"op": "all"}}' * 1_000
    )
    with pytest.raises(SelectionError):
        from_json(text)
    text = '{"op": "union", "left": ' * 100_000
    with pytest.raises(SelectionError):
        from_json(text)


def test_shared_subtrees_are_counted_not_enumerated() -> None:
    expr: Expr = entity("a")
    for _ in range(80):
        expr = expr | expr  # 2**80 leaves if walked
    started = time.perf_counter()
    with pytest.raises(SelectionError, match="more than 200 terms"):
        as_expr(expr)
    assert time.perf_counter() - started < 1.0


# --- D3: the JSON schema -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ({"op": "source", "name": True}, "source.name: Input should be a valid string"),
        ({"op": "khop", "name": True}, "khop.name: Input should be a valid string"),
        ({"op": "khop", "name": "x", "k": "2"}, "khop.k: Input should be a valid integer"),
        ({"op": "khop", "name": "x", "k": True}, "khop.k: Input should be a valid integer"),
        ({"op": "type", "name": [{"a": 1}]}, "type.name: Input should be a valid string"),
        ({"op": "chunks", "ids": [{}]}, "chunks.ids.0: Input should be a valid string"),
        ({"op": "entity", "nmae": "x"}, "entity.name: Field required"),
        ({"op": "entity", "name": "x", "extra": 1}, "entity.extra: Extra inputs"),
        ({"op": "hop", "name": "x", "types": ["R"], "direction": "up"}, "hop.direction"),
        ({"op": "union", "left": {"op": "all"}}, "union.right: Field required"),
        (
            {"op": "union", "left": {"op": "all"}, "right": {"op": "near", "name": 1}},
            "at right: near.name",
        ),
        ({"op": {"x": 1}}, "unknown selection op"),
        ([1, 2], 'an object with an "op" key'),
        ({"op": "boost", "tiers": [{"expr": {"op": "all"}, "weight": "1"}]}, "tiers.0.weight"),
        ({"op": "khop", "name": "x", "k": 99}, "depth must be an integer from 1 to 5"),
    ],
)
def test_json_schema_names_the_field(data: object, fragment: str) -> None:
    with pytest.raises(SelectionError) as info:
        from_json(data)  # type: ignore[arg-type]
    assert fragment in str(info.value), str(info.value)
    assert "\n" not in str(info.value)


# --- D4: invalid text, D6: huge integers -------------------------------------------------------


def test_lone_surrogates_are_rejected_before_the_driver() -> None:
    with pytest.raises(SelectionError, match="lone surrogate"):
        as_expr(entity("\ud800"))
    with pytest.raises(SelectionError, match="lone surrogate"):
        as_expr(hop("x", ["R\udcff"]))
    with pytest.raises(SelectionSyntaxError, match="lone surrogate") as info:
        parse("entity('\udcff')")  # what a shell passes for $'entity(\'\\xff\')'
    assert info.value.column == 9
    str(info.value).encode("utf-8")  # the message itself can be printed
    with pytest.raises(SelectionError, match="lone surrogate"):
        from_json({"op": "entity", "name": "\ud800"})


def test_huge_integers_are_an_error_with_a_position() -> None:
    with pytest.raises(SelectionSyntaxError, match="integer too large") as info:
        parse("khop('x', " + "9" * 5000 + ")")
    assert info.value.column == 11
    assert len(str(info.value)) < 400  # the message shows a window of the line, not all of it
    with pytest.raises(SelectionSyntaxError, match="depth must be an integer from 1 to 5"):
        parse("khop('x', 999999)")
    with pytest.raises(SelectionError, match="finite"):
        parse("boost(all(): 1e999)")


# --- limits ----------------------------------------------------------------------------------


def test_string_and_list_limits() -> None:
    with pytest.raises(SelectionSyntaxError, match="GUIDEDRAG_MAX_STRING"):
        parse("category('" + "A" * 1_000_000 + "')")
    with pytest.raises(SelectionError, match=r"1,000,000 characters.*GUIDEDRAG_MAX_STRING"):
        as_expr(category("A" * 1_000_000))
    assert parse("entity('" + "a" * 1000 + "')") == entity("a" * 1000)
    with pytest.raises(SelectionSyntaxError, match="GUIDEDRAG_MAX_LIST"):
        parse("chunks(" + ", ".join(f"'c{i}'" for i in range(1001)) + ")")
    with pytest.raises(SelectionSyntaxError, match="GUIDEDRAG_MAX_LIST"):
        parse("entity([" + ", ".join(f"'c{i}'" for i in range(1001)) + "])")
    with pytest.raises(SelectionError, match="GUIDEDRAG_MAX_LIST"):
        as_expr(chunks(*[f"c{i}" for i in range(1001)]))
    with pytest.raises(SelectionError, match="GUIDEDRAG_MAX_LIST"):
        from_json({"op": "entities", "names": [f"e{i}" for i in range(1001)]})


def test_hop_depth_limit_follows_the_setting() -> None:
    with pytest.raises(SelectionError, match=r"from 1 to 5.*GUIDEDRAG_MAX_HOP_DEPTH"):
        as_expr(khop("x", 6))
    with pytest.raises(SelectionError, match="from 1 to 5"):
        as_expr(near("x", 7))
    roomy = Limits(max_hop_depth=8)
    assert as_expr(khop("x", 6), roomy) == khop("x", 6)
    assert parse("near('x', 8)", roomy) == near("x", 8)
    with pytest.raises(SelectionError, match="from 1 to 10"):
        khop("x", 11)  # beyond the ceiling the node itself refuses


def test_settings_carry_the_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GUIDEDRAG_MAX_TERMS", "3")
    monkeypatch.setenv("GUIDEDRAG_MAX_DEPTH", "2")
    monkeypatch.setenv("GUIDEDRAG_MAX_STRING", "10")
    monkeypatch.setenv("GUIDEDRAG_MAX_LIST", "2")
    monkeypatch.setenv("GUIDEDRAG_MAX_HOP_DEPTH", "2")
    monkeypatch.setenv("GUIDEDRAG_QUERY_TIMEOUT", "1.5")
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    limits = Limits.from_settings(settings)
    assert limits == Limits(3, 2, 10, 2, 2) and settings.query_timeout == 1.5
    with pytest.raises(SelectionError, match="GUIDEDRAG_MAX_TERMS"):
        check(parse(union_text(4)), limits)
    with pytest.raises(SelectionError, match="GUIDEDRAG_MAX_STRING"):
        check(entity("x" * 11), limits)
    with pytest.raises(SelectionError, match="GUIDEDRAG_MAX_DEPTH"):
        check(parse("entity('a') & (entity('b') - entity('c'))"), limits)
    check(parse("entity('a') | entity('b') | entity('c')"), limits)  # a chain is one level
    monkeypatch.setenv("GUIDEDRAG_MAX_TERMS", "100000")
    with pytest.raises(ValueError, match="max_terms"):
        Settings(_env_file=None)  # type: ignore[call-arg]


def test_entity_lists_round_trip() -> None:
    expr = entity(["Rome", "Gaul"])
    assert isinstance(expr, Entities)
    assert expr.to_text() == "entity(['Rome', 'Gaul'])"
    assert parse(expr.to_text()) == expr
    assert from_json(expr.to_json()) == expr
    assert expr.to_json() == {"op": "entities", "names": ["Rome", "Gaul"]}
    with pytest.raises(SelectionSyntaxError, match="at least one name"):
        parse("entity([])")


def test_category_value_is_lower_cased_once_in_python() -> None:
    expr = parse("category('PERSON')")
    plan = compile_plan(expr, identity_resolution(expr), PRESETS["guidedrag"], hop_cap=10)
    assert plan.params["sel_0_category"] == "person"
    assert "toLower($sel" not in plan.selection(PRESETS["guidedrag"]).cypher
