"""Chains of one set operation (``|``, ``&``, ``-``, ``^``) compile to one clause (``set_many``),
exactly: the same chunk list, order included, as the binary chain the sizes mode still compiles,
on the sample KB; an operand met again is compiled once where that is exact; and the chain's
query text stays small however long the chain (what makes a 200-term chain plan in seconds, not
minutes: planning is not stopped by the transaction timeout, issue 34)."""

from __future__ import annotations

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.db.connection import read_query
from guidedrag_graph.schema.presets import PRESETS
from guidedrag_graph.selection import Expr, Selector, category, khop, near, type_
from guidedrag_graph.selection.compiler import compile_plan
from guidedrag_graph.templates.queries import query

pytestmark = pytest.mark.neo4j


def _hubs(driver: Driver, n: int) -> list[str]:
    rows = read_query(
        driver, query("hub_entities", PRESETS["guidedrag"]), {"limit": n}, database="neo4j"
    )
    return [str(r["name"]) for r in rows]


def _ids(driver: Driver, settings: Settings, expr: Expr, *, chain: bool) -> list[str]:
    selector = Selector(GraphContext.open(settings, driver))
    prep = selector.prepare(expr)
    plan = compile_plan(
        prep.expr, prep.resolved, PRESETS["guidedrag"], hop_cap=settings.hop_cap,
        force_sets=not chain,
    )  # fmt: skip
    text = plan.body + f"RETURN [c IN s{plan.result} | c.id] AS ids"
    return [str(i) for i in read_query(driver, text, plan.params, database="neo4j")[0]["ids"]]


def _chains(hubs: list[str]) -> list[Expr]:
    a, b, c, d = (near(h, 2) for h in hubs[:4])
    k = khop(hubs[0], 2)
    person = category("Person") | type_("PERSON")
    return [
        a | b | c | d,
        a | b | a | c | b | d | a,
        (a | b) | (c | (d | a)),
        a & k & b,
        k & a & k & (b | c) & a,
        (a | b | c) & (k | d | a),
        (a | b | c | person) - (d & k & a),
        a - b - c - d,
        a - b - a - k,
        (a | b | c | d) - k - b - k,
        a ^ b ^ c ^ d,
        a ^ k ^ a ^ b ^ k,
        (a | b) ^ (c | d) ^ k,
        (a ^ b ^ c) - (k ^ d ^ a),
    ]


def test_chains_give_the_binary_chains_list_order_included(
    sample_db: Driver, settings: Settings
) -> None:
    hubs = _hubs(sample_db, 4)
    for expr in _chains(hubs):
        flat = _ids(sample_db, settings, expr, chain=True)
        binary = _ids(sample_db, settings, expr, chain=False)
        assert flat == binary, expr.to_text()
    assert any(_ids(sample_db, settings, e, chain=True) for e in _chains(hubs))


def test_a_repeated_operand_is_compiled_once_and_the_text_stays_small(
    sample_db: Driver, settings: Settings
) -> None:
    hubs = _hubs(sample_db, 4)
    selector = Selector(GraphContext.open(settings, sample_db))

    def text(n: int) -> str:
        expr: Expr = near(hubs[0], 5)
        for i in range(1, n):
            expr = expr | near(hubs[i % 4], 5)
        return selector.prepare(expr).compiled.cypher

    ten, two_hundred = text(10), text(200)
    assert ten == two_hundred  # four distinct operands either way
    assert ten.count("CALL () {") == 4
    assert "reduce(acc" in ten and "WITH *, s" not in ten


@pytest.mark.parametrize("op", ["-", "^"])
def test_a_long_difference_or_symdiff_chain_is_one_clause(
    sample_db: Driver, settings: Settings, op: str
) -> None:
    """The exhaustion run's 200-term chains alternating near(hub, 5) and khop(hub, 5): one
    subquery per distinct term and ONE set clause, not 199 binary ``WITH *`` steps (each of
    which the planner works through with every earlier list in scope: 39 s on the server for
    such a chain under a 30 s timeout)."""
    hubs = _hubs(sample_db, 4)
    selector = Selector(GraphContext.open(settings, sample_db))
    expr: Expr = near(hubs[0], 5)
    for i in range(1, settings.max_terms):
        term = near(hubs[i % 4], 5) if i % 2 == 0 else khop(hubs[i % 4], 5)
        expr = expr - term if op == "-" else expr ^ term
    text = selector.prepare(expr).compiled.cypher
    assert text.count("CALL () {") == 4
    assert text.count("reduce(acc") == 1
    assert "WITH *, [x IN" not in text  # no binary step
