"""A question's entity links by query, decided from facts alone (issue 37): ``linked_by_query``
(``linking/entity_links.py``) takes the ``link_entities`` rows and a scope's answer as literals —
no graph, scope or driver — and names each fact it lacks in the order the edge
(``EntityLinker.link_by_query``) reads them: the query's rows (for the spans' grams and the
full-text text), then, for a scope too large to hold, which linked names it keeps. The reads
themselves are checked on Neo4j by ``tests/test_link_index.py`` and ``scripts/read_digest.py``.
No Neo4j."""

from __future__ import annotations

from operator import attrgetter
from typing import Any

import pytest

from guidedrag_graph.linking.entity_links import (
    MissingLinkFact,
    QueryLinks,
    choose,
    fulltext_query,
    linked_by_query,
)
from guidedrag_graph.linking.text import candidate, question_spans
from guidedrag_graph.schema.presets import name_key
from guidedrag_graph.selection.fact_rounds import FactsNotConverging, decided

QUESTION = "Did Ada Lovelace work with Charles Babbage in London?"


def _row(name: str, mentions: int = 3) -> dict[str, Any]:
    return {
        "name": name,
        "name_key": name_key(name),
        "alias_keys": [],
        "mentions": mentions,
        "document_subject": False,
    }


ROWS = [_row("Charles Babbage"), _row("London", 50), _row("Ada Lovelace"), _row("Paris")]


def test_the_rows_are_asked_for_the_spans_grams_and_full_text() -> None:
    facts = QueryLinks(QUESTION, 12)
    with pytest.raises(MissingLinkFact) as err:
        linked_by_query(facts)
    spans = question_spans(QUESTION, 12)
    assert err.value.kind == "rows" and err.value.ask == ()
    assert err.value.grams == sorted({k for s in spans for k in s.keys})
    assert "ada lovelace" in err.value.grams and err.value.text == fulltext_query(QUESTION, spans)
    facts.rows = ROWS
    links = linked_by_query(facts)
    assert links == choose(spans, [candidate(r) for r in ROWS], QUESTION)
    assert [lk.name for lk in links] == ["Ada Lovelace", "Charles Babbage", "London"]


def test_a_question_without_spans_reads_nothing() -> None:
    assert linked_by_query(QueryLinks("", 12)) == []
    assert linked_by_query(QueryLinks("", 12, scoped=True)) == []


def test_a_scope_not_held_is_asked_about_the_names_linked_once_chosen() -> None:
    facts = QueryLinks(QUESTION, 12, scoped=True, rows=ROWS)
    with pytest.raises(MissingLinkFact) as err:
        linked_by_query(facts)
    assert err.value.kind == "in_scope"
    assert err.value.ask == ("Ada Lovelace", "Charles Babbage", "London")
    assert "Ada" not in str(err.value)  # a message never carries a name out of scope
    chosen = facts.found
    facts.in_scope = ["London", "Ada Lovelace", "Rome"]
    assert [lk.name for lk in linked_by_query(facts)] == ["Ada Lovelace", "London"]
    assert facts.found is chosen  # chosen once, not again on the scope's round
    # nothing linked: the scope is not asked
    assert linked_by_query(QueryLinks(QUESTION, 12, scoped=True, rows=[_row("Paris")])) == []


def test_the_edge_loop_reads_each_fact_once_in_order() -> None:
    read: list[str] = []

    def reader(facts: QueryLinks, missing: MissingLinkFact) -> QueryLinks:
        read.append(missing.kind)
        if missing.kind == "rows":
            facts.rows = ROWS
        else:
            facts.in_scope = list(missing.ask[:1])
        return facts

    key = attrgetter("kind")
    scoped = QueryLinks(QUESTION, 12, scoped=True)
    links = decided(linked_by_query, scoped, reader, MissingLinkFact, key, rounds=2)
    assert [lk.name for lk in links] == ["Ada Lovelace"] and read == ["rows", "in_scope"]

    def forgets(facts: QueryLinks, missing: MissingLinkFact) -> QueryLinks:
        return facts

    with pytest.raises(FactsNotConverging, match="fact rows"):
        decided(linked_by_query, QueryLinks(QUESTION, 12), forgets, MissingLinkFact, key, rounds=2)
