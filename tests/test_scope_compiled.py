"""A trusted scope compiled from facts alone (issue 37): ``compiled_scope``
(``selection/scope_compiled.py``) takes the scope, the schema, the settings and the facts read
— the database's property keys, what the scope's names resolve to, its size and the KB's chunk
count — as literals, with no graph or driver, and names each fact it lacks
(``MissingCompileFact``) in the order ``Selector`` read them. On Neo4j, the edge
(``selection/scope_reads.py``) sends those reads: the keys first, the size last, nothing past an
unknown field."""

from __future__ import annotations

import logging
from operator import attrgetter

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.errors import SelectionCostError
from guidedrag_graph.schema.presets import SchemaMapping
from guidedrag_graph.selection import Selector
from guidedrag_graph.selection.chunk_filters import FilterError
from guidedrag_graph.selection.fact_rounds import decided
from guidedrag_graph.selection.parser import parse
from guidedrag_graph.selection.primitives import Resolved
from guidedrag_graph.selection.resolution import EmptySelection
from guidedrag_graph.selection.scope import SCOPE_VARIABLE, CompiledScope, Scope, scope_prelude
from guidedrag_graph.selection.scope_compiled import (
    SELECTS_NOTHING,
    MissingCompileFact,
    ScopeFacts,
    compiled_scope,
)
from tests.read_log import READS_LOGGER, read_names, settled

SCHEMA = SchemaMapping()
KEYS = {"id", "text", "lang", "position", "document_id"}
VERSION = frozenset({"FB:kcwQ-version"})
DOCUMENT = "document('Journal of Mathematical Physics')"
DOCUMENT_IDS = ("wiki:Journal of Mathematical Physics",)


def _settings(**update: object) -> Settings:
    return Settings(_env_file=None, **update)  # type: ignore[arg-type]


def _facts(value: object, **update: object) -> ScopeFacts:
    scope = Scope.parse(value, where="scope=")  # type: ignore[arg-type]
    assert scope is not None
    return ScopeFacts(scope, SCHEMA, _settings(**update))


def _missing(facts: ScopeFacts) -> MissingCompileFact:
    with pytest.raises(MissingCompileFact) as err:
        compiled_scope(facts)
    return err.value


def test_an_unknown_filter_field_is_refused_in_one_line_before_anything_else_is_read() -> None:
    facts = _facts({"selection": DOCUMENT, "filters": {"lang": "en", "no_such_field": 1}})
    assert _missing(facts).kind == "keys"  # the keys first, before any name
    facts.keys = set(KEYS)
    with pytest.raises(FilterError) as refused:
        compiled_scope(facts)
    message = str(refused.value)
    assert message == (
        "filters name 'no_such_field', which no node in the database has; filter on chunk "
        f"properties such as {SCHEMA.chunk_id!r} or {SCHEMA.chunk_text!r}"
    )
    assert "\n" not in message
    facts.keys = set()  # no node has any key: every field named, in the filter's order
    with pytest.raises(FilterError, match=r"^filters name 'lang', 'no_such_field', which"):
        compiled_scope(facts)


def test_a_filter_alone_is_the_chunks_that_pass_and_resolves_no_name() -> None:
    facts = _facts({"filters": {"lang": "en"}})
    assert _missing(facts).kind == "keys"
    facts.keys = set(KEYS)
    missing = _missing(facts)
    chunk_filter = facts.scope.chunk_filter()
    assert chunk_filter is not None
    assert missing.kind == "size"  # no names fact: an all() scope has none
    assert missing.prelude == chunk_filter.universe(SCHEMA, SCOPE_VARIABLE)
    assert missing.params == chunk_filter.params == {"scpf_0": "en"}
    facts.size, facts.total, facts.version = 7, 397, VERSION
    assert compiled_scope(facts) == CompiledScope(
        facts.scope, missing.prelude, {"scpf_0": "en"}, size=7, version=VERSION
    )
    assert facts.resolved is None


def test_names_resolving_to_nothing_empty_the_scope_with_the_reason_and_read_no_size() -> None:
    facts = _facts(DOCUMENT)
    missing = _missing(facts)  # no filter: no keys read
    leaf = parse(DOCUMENT)
    assert missing.kind == "names" and missing.leaves == (leaf,) and missing.names == ()
    why = EmptySelection("unknown_document", DOCUMENT, "no document named 'Journal ...'")
    facts.resolved, facts.reasons = {leaf: Resolved()}, {leaf: why}
    assert compiled_scope(facts) == CompiledScope(facts.scope, "", empty=True, reason=why.message)
    # the entity names of every leaf, each leaf once, fetched in one batch
    names = _missing(_facts("entity(['Euro', 'Monaco']) | entity('Euro') | entity('Euro')"))
    assert names.names == ("Euro", "Monaco", "Euro") and len(names.leaves) == 2


def _resolved_document() -> ScopeFacts:
    facts = _facts(DOCUMENT)
    facts.resolved = {parse(DOCUMENT): Resolved(ids=DOCUMENT_IDS)}
    return facts


def test_the_prelude_is_the_scope_rendered_from_its_names_and_read_with_its_size() -> None:
    facts = _resolved_document()
    missing = _missing(facts)
    assert missing.kind == "size"
    _, prelude, params = scope_prelude(
        parse(DOCUMENT), dict(facts.resolved or {}), SCHEMA, hop_cap=10_000
    )
    assert (missing.prelude, missing.params) == (prelude, params)
    facts.size, facts.total = 1, 397
    found = compiled_scope(facts)
    assert found.params is missing.params  # rendered once: read with what it is compiled with
    assert (found.prelude, found.size, found.empty, found.whole, found.reason) == (
        prelude,
        1,
        False,
        False,
        "",
    )


def test_a_scope_selecting_no_chunk_is_empty_with_its_reason() -> None:
    facts = _resolved_document()
    _missing(facts)
    facts.size, facts.total, facts.version = 0, 397, VERSION
    found = compiled_scope(facts)
    assert found.empty and found.size == 0 and not found.whole and found.version == VERSION
    assert found.reason == SELECTS_NOTHING == "its terms resolve but select no chunk"


def test_a_scope_holding_every_chunk_is_the_whole_kb_at_the_version_read() -> None:
    facts = _resolved_document()
    facts.size, facts.total, facts.version = 397, 397, VERSION
    found = compiled_scope(facts)
    assert found.whole and not found.empty and found.size == 397 and found.reason == ""
    assert found.version == VERSION
    facts = _facts({"filters": {"lang": "en"}})
    facts.keys, facts.size, facts.total = set(KEYS), 397, 397
    assert compiled_scope(facts).whole  # a filter every chunk passes holds the whole KB too


def test_the_cost_is_checked_on_the_prelude_before_the_size_is_read() -> None:
    text = "document('a') - (document('b') & document('c'))"  # two set-operation steps
    facts = _facts(text, max_selection_cost=1)
    facts.resolved = {leaf: Resolved(ids=("d",)) for leaf in parse(text).leaves()}
    with pytest.raises(SelectionCostError, match="planning its 2 set-operation steps"):
        compiled_scope(facts)  # the planning alone is over a bound of 1: no size asked
    facts.settings = _settings()
    assert _missing(facts).kind == "size"  # no expanding term: no cost counts asked


def test_the_edge_loop_reads_each_fact_once_in_the_order_asked() -> None:
    read: list[str] = []

    def reader(facts: ScopeFacts, missing: MissingCompileFact) -> ScopeFacts:
        read.append(missing.kind)
        if missing.kind == "keys":
            facts.keys = set(KEYS)
        elif missing.kind == "names":
            facts.resolved = {leaf: Resolved(ids=DOCUMENT_IDS) for leaf in missing.leaves}
        elif missing.kind == "size":
            facts.size, facts.total = 2, 397
        return facts

    facts = _facts({"selection": DOCUMENT, "filters": {"lang": "en"}})
    found = decided(compiled_scope, facts, reader, MissingCompileFact, attrgetter("kind"), rounds=4)
    assert read == ["keys", "names", "size"]  # no expanding term: no cost counts read
    assert found.size == 2 and "scpf_0" in found.params and not found.empty


@pytest.mark.neo4j
def test_the_edge_reads_the_keys_first_the_size_last_and_nothing_past_an_unknown_field(
    sample_db: Driver, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger=READS_LOGGER)
    selector = Selector(GraphContext.open(settings, sample_db))
    settled(selector.graph)  # no earlier test's background refresh logs a read in here
    caplog.clear()  # the context's own reads on opening
    scope = Scope.parse(
        {"selection": DOCUMENT, "filters": {"id": {"$like": "mq-"}}}, where="scope="
    )
    found = selector.scope(scope)
    names = read_names(caplog)
    assert names[0] == "property_keys" and names[-1] == "scope", names
    assert names.count("property_keys") == names.count("scope") == 1, names
    assert found is not None and found.size >= 1 and not found.whole
    caplog.clear()
    assert selector.scope(scope) is found and read_names(caplog) == []  # kept per KB version
    with pytest.raises(FilterError, match="'no_such_field'"):
        selector.scope(Scope.parse({"filters": {"no_such_field": 1}}, where="scope="))
    assert read_names(caplog) == ["property_keys"]
