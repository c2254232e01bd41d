"""The algebra's three forms (builders, DSL, JSON) round-trip, with Python's precedence."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guidedrag_graph.errors import SelectionError, SelectionSyntaxError
from guidedrag_graph.selection import (
    Difference,
    Expr,
    Intersect,
    SymDiff,
    Union,
    all_,
    category,
    chunks,
    date,
    document,
    entity,
    from_json,
    hop,
    khop,
    near,
    parse,
    source,
    type_,
)

a, b, c, d = entity("a"), entity("b"), entity("c"), entity("d")


def test_python_precedence_is_kept() -> None:
    assert a | b & c == Union(a, Intersect(b, c))
    assert a ^ b | c == Union(SymDiff(a, b), c)
    assert a & b - c == Intersect(a, Difference(b, c))
    assert a - b - c == Difference(Difference(a, b), c)
    assert parse("entity('a') | entity('b') & entity('c')") == a | b & c
    assert parse("entity('a') - entity('b') - entity('c')") == a - b - c
    assert parse("entity('a') - (entity('b') - entity('c'))") == a - (b - c)
    assert parse("entity('a') ^ entity('b') | entity('c') & entity('d')") == (a ^ b) | (c & d)


def test_text_form_uses_minimal_parentheses() -> None:
    assert str(a - (b - c)) == "entity('a') - (entity('b') - entity('c'))"
    assert str((a | b) & c) == "(entity('a') | entity('b')) & entity('c')"
    assert str(a | b & c) == "entity('a') | entity('b') & entity('c')"
    assert str(entity("Rome") & hop("Rome", ["FOUGHT_IN"])) == (
        "entity('Rome') & hop('Rome', ['FOUGHT_IN'])"
    )


def test_primitives_and_arguments() -> None:
    assert parse("hop('x', 'R')") == hop("x", ["R"])
    assert parse("hop('x', ['R', 'S'], depth=2, direction='out')") == hop("x", ["R", "S"], 2, "out")
    assert parse('hop("x", types=[\'R\'], direction="in")') == hop("x", ["R"], direction="in")
    assert parse("khop('x')") == khop("x", 1)
    assert parse("near('x', 2)") == near("x", 2)
    assert parse("type('PERSON') | category('person')") == type_("PERSON") | category("person")
    assert parse("document('d1') - source('wiki')") == document("d1") - source("wiki")
    assert parse("date(2002, 2026)") == date(2002, 2026)
    assert date(2002, 2026).bounds() == ("2002-01-01", "2026-12-31")  # type: ignore[attr-defined]
    assert date("2024-02", None).bounds() == ("2024-02-01", "9999-12-31")  # type: ignore[attr-defined]
    assert parse("date(null, '2024-02')").bounds() == ("0001-01-01", "2024-02-29")  # type: ignore[attr-defined]
    assert parse("chunks('c1', 'c2',)") == chunks("c1", "c2")
    assert parse("all()") == all_()
    assert parse("# a comment\n entity('a')  # trailing\n") == a


@pytest.mark.parametrize(
    ("text", "line", "column", "fragment"),
    [
        ("entity('a') & & entity('b')", 1, 15, "expected a selection"),
        ("entity('a') &\n  enity('b')", 2, 3, "unknown selection 'enity'"),
        ("entity('a'", 1, 11, "expected ',' or ')'"),
        ("entity('a) | entity('b')", 1, 23, "unterminated string"),
        ("entity('a') ; entity('b')", 1, 13, "unexpected character ';'"),
        ("entity('abc", 1, 8, "unterminated string"),
        ("hop('x', ['R'], depth=9)", 1, 1, "depth must be an integer from 1 to 5"),
        ("hop('x', ['R'], direction='up')", 1, 1, "direction must be one of"),
        ("date('last week', null)", 1, 1, "bad date bound"),
        ("entity('a') entity('b')", 1, 13, "expected an operator"),
        ("", 1, 1, "empty selection"),
        ("entity(depth=1)", 1, 8, "has no parameter 'depth'"),
        ("hop('x')", 1, 1, "needs name, types"),
    ],
)
def test_syntax_errors_point_at_the_problem(
    text: str, line: int, column: int, fragment: str
) -> None:
    with pytest.raises(SelectionSyntaxError) as info:
        parse(text)
    err = info.value
    assert (err.line, err.column) == (line, column), str(err)
    assert fragment in str(err)
    caret_line = str(err).splitlines()[-1]
    assert caret_line.index("^") - 2 == column - 1


def test_json_form_round_trips_and_rejects_garbage() -> None:
    expr = (entity("Rome") | khop("Rome", 2)) - date(None, "2000") ^ chunks("c1")
    data = expr.to_json()
    assert data["op"] == "symdiff"
    assert from_json(json.dumps(data)) == expr
    assert from_json(data) == expr
    with pytest.raises(SelectionError, match="unknown selection op"):
        from_json({"op": "drop_database"})
    with pytest.raises(SelectionError):
        from_json("{not json")
    with pytest.raises(SelectionError):
        from_json({"op": "entity"})


def test_operators_only_combine_selections() -> None:
    with pytest.raises(TypeError):
        _ = a | "entity('b')"  # type: ignore[operator]


# --- property: every expression survives text and JSON --------------------------------------

names = st.text(min_size=0, max_size=12)
leaves: st.SearchStrategy[Expr] = st.one_of(
    st.builds(all_),
    st.builds(entity, names),
    st.builds(
        hop,
        names,
        st.lists(names, min_size=1, max_size=3),
        st.integers(1, 5),
        st.sampled_from(["both", "out", "in"]),
    ),
    st.builds(khop, names, st.integers(1, 5)),
    st.builds(near, names, st.integers(1, 5)),
    st.builds(type_, names),
    st.builds(category, names),
    st.builds(document, names),
    st.builds(source, names),
    st.builds(
        date,
        st.one_of(st.none(), st.integers(1, 9999)),
        st.one_of(st.none(), st.dates().map(lambda x: x.isoformat())),
    ),
    st.lists(names, max_size=3).map(lambda ids: chunks(*ids)),
)
expressions = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.builds(Union, inner, inner),
        st.builds(Intersect, inner, inner),
        st.builds(Difference, inner, inner),
        st.builds(SymDiff, inner, inner),
    ),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(expressions)
def test_text_and_json_round_trip(expr: Expr) -> None:
    assert parse(expr.to_text()) == expr
    assert from_json(json.loads(json.dumps(expr.to_json()))) == expr
    assert parse(expr.to_text()).to_text() == expr.to_text()
