"""A request's chunk filters decided from facts alone (issue 37): ``fields_known`` and
``nothing_passes`` (``pipeline/filter_checks.py``) take the database's property keys and whether
a chunk passes as literals — no graph or driver — and name the fact they lack. On Neo4j, the
edge (``pipeline/filter_reads.py``) sends the two reads as ``GuidedRAG`` sent them: the keys
before linking, the passing chunk after, and nothing past an unknown field."""

from __future__ import annotations

import logging
from operator import attrgetter

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.pipeline.filter_checks import (
    FilterFacts,
    MissingFilterFact,
    fields_known,
    nothing_passes,
)
from guidedrag_graph.retrieval.filters import FilterError, compile_filter
from guidedrag_graph.schema.presets import SchemaMapping
from guidedrag_graph.selection.fact_rounds import decided
from tests.read_log import READS_LOGGER, read_names, settled

FILTER = compile_filter({"position": {"$gte": 0}, "$or": [{"lang": "en"}, {"id": "x"}]})


def _facts() -> FilterFacts:
    return FilterFacts(FILTER, SchemaMapping())


def test_the_fields_are_checked_against_the_keys_read() -> None:
    facts = _facts()
    with pytest.raises(MissingFilterFact) as err:
        fields_known(facts)
    assert err.value.kind == "keys"
    facts.keys = {"position", "lang", "id", "text"}
    assert fields_known(facts) is facts
    facts.keys = {"position", "id"}  # a field no node has is a typo, not an empty result
    with pytest.raises(FilterError, match="'lang'") as refused:
        fields_known(facts)
    assert "'position'" not in str(refused.value).split(", which")[0]
    facts.keys = set()
    with pytest.raises(FilterError, match="'position', 'lang', 'id'"):
        fields_known(facts)


def test_the_request_abstains_only_when_no_chunk_passes() -> None:
    facts = _facts()
    with pytest.raises(MissingFilterFact) as err:
        nothing_passes(facts)
    assert err.value.kind == "passes"
    facts.passes = True
    assert nothing_passes(facts) is False
    facts.passes = False
    assert nothing_passes(facts) is True


def test_each_fact_is_read_once_in_the_loop() -> None:
    read: list[str] = []

    def reader(facts: FilterFacts, missing: MissingFilterFact) -> FilterFacts:
        read.append(missing.kind)
        if missing.kind == "keys":
            facts.keys = set(FILTER.fields)
        else:
            facts.passes = False
        return facts

    facts = decided(fields_known, _facts(), reader, MissingFilterFact, attrgetter("kind"), rounds=1)
    assert decided(nothing_passes, facts, reader, MissingFilterFact, attrgetter("kind"), rounds=1)
    assert read == ["keys", "passes"]
    # facts already read are not read again
    assert decided(nothing_passes, facts, reader, MissingFilterFact, attrgetter("kind"), rounds=1)
    assert read == ["keys", "passes"]


@pytest.mark.neo4j
def test_the_edge_reads_the_keys_before_linking_and_the_passing_chunk_after(
    sample_db: Driver, settings: Settings, embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    question = "Which countries use the euro?"
    caplog.set_level(logging.DEBUG, logger=READS_LOGGER)
    with GuidedRAG(settings, driver=sample_db, embedder=embedder) as rag:
        settled(rag.graph)  # no earlier test's background refresh logs a read in here
        rag.retrieve(question)  # warm: what is kept is not read again below
        caplog.clear()
        result = rag.retrieve(question, filters={"position": {"$lt": -1}})
        names = read_names(caplog)
        assert names.count("property_keys") == names.count("retrieve_filter") == 1, names
        assert names.index("property_keys") < names.index("retrieve_filter"), names
        assert names[-1] == "retrieve_filter", names  # abstained: nothing ranked after it
        assert not result.chunks
        caplog.clear()
        with pytest.raises(FilterError, match="'no_such_field'"):  # names not yet resolved
            rag.retrieve("What did Monaco use before the euro?", filters={"no_such_field": 1})
        assert read_names(caplog) == ["property_keys"]  # refused before linking or ranking
        caplog.clear()
        assert rag.retrieve(question, filters={"position": {"$gte": 0}}).chunks
        names = read_names(caplog)
        assert names[0] == "property_keys" and names.count("retrieve_filter") == 1, names
