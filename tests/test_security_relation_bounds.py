"""Issue 34 R2: relation names are bounded, and so is the work of suggesting close ones.

Unknown relation names were compared (difflib) with every type in the database: a 16k-character
name took 16 s through Python, 200 unknown 1,000-character names in one ``hop`` a minute. Now a
relation name is bounded like an entity name (``GUIDEDRAG_MAX_STRING`` characters,
``GUIDEDRAG_MAX_LIST`` names) at every door, only the first ``SUGGESTED_NAMES`` unknown names get
suggestions, and each suggestion compares a capped number of capped-length names.
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Iterator

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.errors import GuidedRAGError, SelectionError
from guidedrag_graph.identifiers import escape_identifier
from guidedrag_graph.migration.run import migrate
from guidedrag_graph.pipeline.linked import forgive_relations
from guidedrag_graph.schema.presets import PRESETS
from guidedrag_graph.selection import Selector, hop
from guidedrag_graph.selection.resolution import SUGGESTED_NAMES
from guidedrag_graph.semantics import Semantics, merge_stated
from guidedrag_graph.testing.examples import roman_graph
from guidedrag_graph.testing.memory_graph import load_graph
from tests.conftest import wipe

SHORT_TYPES = [f"SECBOUND_{i:03d}" for i in range(50)]
# Long types that all share words with the long unknown names below: the worst case for
# difflib (every pair is compared in full on the old code).
LONG_TYPES = ["LONGWORD_" * 100 + f"T{i}" for i in range(60)]


def _create_types(driver: Driver, types: list[str]) -> None:
    pattern = ", ".join(
        f"(:SecurityBounds)-[:{escape_identifier(t)}]->(:SecurityBounds)" for t in types
    )
    driver.execute_query(f"CREATE {pattern}")


@pytest.fixture(scope="module")
def bounds_db(driver: Driver, main_settings: Settings) -> Iterator[Driver]:
    wipe(driver)
    migrate(driver, main_settings, PRESETS["guidedrag"])
    load_graph(roman_graph(), driver, PRESETS["guidedrag"])
    _create_types(driver, SHORT_TYPES)
    yield driver
    wipe(driver)


@pytest.fixture
def selector(bounds_db: Driver, settings: Settings) -> Selector:
    return Selector(GraphContext.open(settings, bounds_db, PRESETS["guidedrag"]))


def test_a_long_relation_name_is_refused_in_one_line(selector: Selector) -> None:
    """Through Python's semantics (auto's forgiving path), as the 16k-character name was."""
    with pytest.raises(SelectionError) as caught:
        forgive_relations(selector, Semantics(relations=("R" * 5_000,)))
    message = str(caught.value)
    assert "5,000 characters" in message and "GUIDEDRAG_MAX_STRING" in message
    assert "\n" not in message and len(message) < 300


def test_too_many_relation_names_are_refused(selector: Selector) -> None:
    with pytest.raises(SelectionError, match="GUIDEDRAG_MAX_LIST"):
        selector.resolver.resolve_types(tuple(f"X{i}" for i in range(1_001)))


def test_semantics_refuse_a_relation_name_longer_than_any_setting_allows() -> None:
    """The MCP door: relations=["R" * 150000] is refused when the semantics are built."""
    with pytest.raises(GuidedRAGError, match="100,000") as caught:
        merge_stated(None, None, ["R" * 150_000])
    assert len(str(caught.value)) < 300


def test_suggestions_for_many_unknown_names_compare_a_capped_number_of_names(
    selector: Selector, monkeypatch: pytest.MonkeyPatch
) -> None:
    """200 unknown 1,000-character names in one hop: only SUGGESTED_NAMES of them are compared
    with the known types (the old code compared all 200 with all of them)."""
    calls = 0
    ratio = difflib.SequenceMatcher.ratio

    def counted(self: difflib.SequenceMatcher[str]) -> float:
        nonlocal calls
        calls += 1
        return ratio(self)

    monkeypatch.setattr(difflib.SequenceMatcher, "ratio", counted)
    names = [f"UNKNOWN_{i:03d}_" + "Q" * 987 for i in range(200)]
    prep = selector.prepare(hop("Julius Caesar", names))
    assert prep.empty is not None and prep.empty.kind == "unknown_relation_type"
    known = len(selector.resolver.relation_types())
    assert calls <= SUGGESTED_NAMES * known, f"{calls} comparisons for {known} known types"


def test_resolving_the_largest_allowed_unknown_names_is_quick(
    selector: Selector, bounds_db: Driver
) -> None:
    """The worst case the limits allow: 200 unknown 1,000-character names, each sharing words
    with 60 long types. Generous bound; what matters is that it is bounded at all."""
    _create_types(bounds_db, LONG_TYPES)
    names = [("LONGWORD_" * 110)[:990] + f"_U{i}" for i in range(200)]
    started = time.monotonic()
    prep = selector.prepare(hop("Julius Caesar", names))
    elapsed = time.monotonic() - started
    assert prep.empty is not None and prep.empty.kind == "unknown_relation_type"
    assert len(prep.empty.suggestions) <= SUGGESTED_NAMES * 5
    assert elapsed < 5, f"resolution took {elapsed:.1f} s"
