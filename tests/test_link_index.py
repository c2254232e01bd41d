"""The entity linker's in-process key index (``linking/index.py``) against the real Neo4j.

Linking with the KB's keys held in-process must give exactly what the query path gives
(``link_by_query``), ask Neo4j nothing once the index is held, see a load when the cache
expires or is cleared, and fall back to the query path with the cache off or above the size
bound. The KB is ``test_linking``'s.
"""

from __future__ import annotations

import re
import time
import unicodedata

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.linking import text as link_text
from guidedrag_graph.linking.entities import EntityLinker
from guidedrag_graph.linking.text import (
    KeyIndex,
    candidate,
    fold,
    fold_key,
    indexed_spans,
    matched_spans,
    question_spans,
)
from guidedrag_graph.schema.presets import name_key
from tests.probes import CountingDriver
from tests.test_linking import linker_kb  # noqa: F401  (the fixture)

pytestmark = pytest.mark.neo4j

QUESTIONS = [
    "Where was Ada Lovelace born?",
    "where was AUGUSTA ada   KING born?",
    "Who was Ada Lovelace's father?",
    "Where was the countess of  LOVELACE born?",
    "Is New York bigger than York?",
    "Did Ada Lovelace prefer London or Paris?",
    "How far is Mercury from the Sun?",
    "Who signed with Mercury Records?",
    "Who wrote Brand?",
    "What does the Jaguar animal eat?",
    "Who composed ASCHENBRODEL?",
    "Who composed Aschenbrödel's ballet, Aschenbrodel?",
    "What is the capital of the US?",
    "what is a capital?",
    "Who is it and what was the ab?",
    "",
    "(+-&&||!)",
]


def _index_loads(counting: CountingDriver) -> int:
    return sum("AS total" in q for q in counting.queries)


def _link_queries(counting: CountingDriver) -> int:
    return sum("db.index.fulltext.queryNodes" in q for q in counting.queries)


def test_the_held_index_links_what_the_query_links_and_asks_nothing(
    linker_kb: Driver,  # noqa: F811
    settings: Settings,
) -> None:
    counting = CountingDriver(linker_kb)
    linker = EntityLinker(GraphContext.open(settings, counting))  # type: ignore[arg-type]
    first = linker.link(QUESTIONS[0])
    assert _index_loads(counting) == 1
    asked = len(counting.queries)
    held = [linker.link(q) for q in QUESTIONS]
    assert len(counting.queries) == asked, counting.queries[asked:]
    assert held[0] == first
    assert held == [linker.link_by_query(q) for q in QUESTIONS]
    by_question = dict(zip(QUESTIONS, held, strict=True))
    assert [lk.name for lk in by_question["What is the capital of the US?"]] == ["US"]
    assert [(lk.name, lk.kind) for lk in by_question["Who composed ASCHENBRODEL?"]] == [
        ("Aschenbrödel", "variant")
    ]


def test_a_load_is_seen_when_the_cache_expires_or_is_cleared(
    linker_kb: Driver,  # noqa: F811
    settings: Settings,
) -> None:
    short = settings.model_copy(update={"resolution_cache_s": 0.5})
    graph = GraphContext.open(short, linker_kb)
    linker = EntityLinker(graph)
    question = "Who was Grace Hopper?"
    try:
        assert linker.tag(question) == []
        linker_kb.execute_query(
            "MATCH (c:Chunk {id: 'ada-1'}) "
            "CREATE (c)-[:MENTIONS]->(:Entity {id: 'grace', name: 'Grace Hopper', "
            "name_key: 'grace hopper', aliases: ['Amazing Grace'], alias_keys: ['amazing grace']})"
        )
        assert linker.tag(question) == []  # the held index is the one read before the load
        assert linker.link_by_query(question)[0].name == "Grace Hopper"
        time.sleep(0.6)
        # Expired: this question is answered from the old index at once, and the new one is
        # read in the background; a question a moment later sees the load.
        assert linker.tag(question) == []
        deadline = time.monotonic() + 10
        while linker.tag(question) != ["Grace Hopper"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert linker.tag(question) == ["Grace Hopper"]
        assert [(lk.name, lk.kind, lk.mentions) for lk in linker.link("Amazing Grace?")] == [
            ("Grace Hopper", "alias", 1)
        ]
        linker_kb.execute_query("MATCH (e:Entity {id: 'grace'}) DETACH DELETE e")
        assert linker.tag(question) == ["Grace Hopper"]  # held for the cache's time
        graph.data.clear()
        assert linker.tag(question) == []
    finally:
        linker_kb.execute_query("MATCH (e:Entity {id: 'grace'}) DETACH DELETE e")


def test_with_the_cache_off_every_question_is_linked_by_query(
    linker_kb: Driver,  # noqa: F811
    settings: Settings,
) -> None:
    off = settings.model_copy(update={"resolution_cache_s": 0.0})
    counting = CountingDriver(linker_kb)
    linker = EntityLinker(GraphContext.open(off, counting))  # type: ignore[arg-type]
    links = [linker.link(q) for q in QUESTIONS[:5]]
    assert _index_loads(counting) == 0 and _link_queries(counting) == 5
    held = EntityLinker(GraphContext.open(settings, linker_kb))
    assert links == [held.link(q) for q in QUESTIONS[:5]]


def test_a_kb_above_the_bound_is_not_held_and_is_linked_by_query(
    linker_kb: Driver,  # noqa: F811
    settings: Settings,
) -> None:
    counting = CountingDriver(linker_kb)
    graph = GraphContext.open(settings, counting)  # type: ignore[arg-type]
    bounded = EntityLinker(graph, max_held_entities=3)
    links = [bounded.link(q) for q in QUESTIONS[:4]]
    # The count is read once (and "too large" kept); each question then asks link_entities.
    assert _index_loads(counting) == 1 and _link_queries(counting) == 4
    held = EntityLinker(graph)
    assert links == [held.link(q) for q in QUESTIONS[:4]]
    assert _index_loads(counting) == 2 and _link_queries(counting) == 4


def _candidate(name: str, aliases: tuple[str, ...] = (), mentions: int = 1) -> dict[str, object]:
    return {
        "name": name,
        "name_key": name_key(name),
        "alias_keys": [name_key(a) for a in aliases],
        "mentions": mentions,
        "document_subject": False,
    }


def test_indexed_spans_equal_the_spans_matched_one_by_one() -> None:
    """The shortcut (keys looked up before a Span is built, spans cut short in ASCII text) is
    the plain product's result, possessives, accents, punctuation, whitespace runs and stop
    words included."""
    index = KeyIndex(
        candidate(_candidate(n, a))
        for n, a in (
            ("U.S.", ("United States",)),
            ("Aschenbrödel", ()),
            ("Mercury (planet)", ()),
            ("Paris, Texas", ()),
            ("New York City", ("NYC",)),
            ("New York", ()),
            ("The Who", ()),
            ("Café", ()),
            ("O'Brien", ()),
            ("New Yorkshire Terrier", ()),
            ("Pan-African Congress", ()),
            ("Rock 'n' Roll", ()),
            ("Guns N' Roses", ()),
            ("R2 D2", ()),
        )
    )
    texts = [
        "Did the U.S. and the United States' NYC office meet in New York City's Paris?",
        "Aschenbrodel and ASCHENBRÖDEL met O'Brien’s mother at the Cafe in Paris, Texas.",
        "Mercury, cafe\u0301 and Café: The Who's new-york tour in New York-City",
        "What is — ½ of 12 Mercury?",
        "",
        "Was the New York Pan African meeting a Pan-African Congress of New Yorkshire Terriers?",
        "Did Rock 'n' Roll's\tGuns N' Roses,\nor R2-D2's  R2 D2 play\x1cNew York  City's?",
        "Is r2_d2 the R2 D2 of New_York or of New York?",
        "paris,texas ; PARIS ,  TEXAS's O'Brien's the who's The Who",
    ]
    for text in texts:
        for words in (1, 3, 12):
            plain = matched_spans(question_spans(text, words), index)
            assert indexed_spans(text, words, index) == plain, (text, words)
    assert {
        (span.text, sense.name)
        for span, found in indexed_spans(texts[0], 12, index)
        for _, sense in found
    } >= {("U.S", "U.S."), ("United States", "U.S."), ("New York City's", "New York City")}


@hypothesis_settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_fold_key_of_a_name_key_is_its_fold(text: str) -> None:
    """The linker's shortcut (a key already in ``name_key`` form skips it again) folds alike."""
    key = name_key(text)
    assert fold_key(key) == fold(key)


def test_fold_key_on_punctuation_accents_and_spaces() -> None:
    for text in ("Aschenbrödel", "St. Louis-Park", "  AC/DC  ", "Ελλάδα", "l'Île", "R&B", "x"):
        assert fold_key(name_key(text)) == fold(name_key(text)) == fold(text)


_WORDS = ["new", "york", "yorkshire", "city", "terrier", "pan", "african", "congress", "the",
          "paris", "texas", "o'brien", "café", "cafe\u0301", "us", "of", "n", "roses",
          "r2"]  # fmt: skip
_SEPARATORS = [" ", "  ", "-", ", ", "'s ", ". ", "/", "\t", " \n", " ' ", "' ", "_"]
_NAMES = (
    ("New York", ()),
    ("New York City", ()),
    ("New Yorkshire Terrier", ("Yorkie",)),
    ("Pan-African Congress", ("PAC",)),
    ("Paris, Texas", ()),
    ("O'Brien", ()),
    ("Café", ()),
    ("The City of New York", ()),
    ("US", ()),
    ("Guns N' Roses", ()),
    ("R2-R2", ()),
)
_INDEX = KeyIndex(candidate(_candidate(n, a)) for n, a in _NAMES)


@hypothesis_settings(max_examples=1000, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(_WORDS), st.sampled_from(_SEPARATORS), st.booleans()),
        max_size=9,
    )
)
def test_spans_cut_at_word_ends_match_the_plain_product(
    parts: list[tuple[str, str, bool]],
) -> None:
    """``KeyIndex.heads`` (a span stops growing when no key goes on from it past a word end)
    finds every match the plain product finds, on texts made of the keys' own words, cut and
    joined every way ("New Yorkshire" is not "New York" plus a word; "Pan-African"; "N'
    Roses"; tabs, newlines and underscores)."""
    text = "".join((w.title() if cap else w) + sep for w, sep, cap in parts).strip()
    plain = matched_spans(question_spans(text, 12), _INDEX)
    assert indexed_spans(text, 12, _INDEX) == plain, text


@hypothesis_settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_fold_drops_combining_marks_as_the_per_character_filter_did(text: str) -> None:
    """``fold``'s memoised ``str.translate`` table equals filtering each character with
    ``unicodedata.combining`` (what it replaced)."""
    decomposed = unicodedata.normalize("NFKD", name_key(text))
    letters = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    assert fold(text) == " ".join(re.sub(r"[\W_]+", " ", letters).split())


def test_the_combining_marks_table_stays_bounded() -> None:
    before = len(link_text._NO_MARKS)
    fold("".join(chr(p) for p in range(0x4E00, 0x4E00 + 2 * link_text._Marks.KEPT)))
    assert before <= len(link_text._NO_MARKS) <= link_text._Marks.KEPT
    assert fold("Tekezé") == "tekeze"
