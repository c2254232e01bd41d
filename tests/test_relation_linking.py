"""Relation linking from a bare question: when (the graph's vocabulary), how (name, inflection,
similarity), and end to end on a small typed and a small free-text graph in a real Neo4j."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from neo4j import Driver
from pydantic import ValidationError

from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.kb import load_bundle, read_bundle
from guidedrag_graph.linking.name_spans import unknown_names
from guidedrag_graph.linking.relations import (
    RelationLink,
    link_relations,
    links_relations,
    similarity_spans,
    type_phrase,
    vocabulary_kind,
)
from guidedrag_graph.migration.run import migrate
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.pipeline.linked import stated_ranges
from guidedrag_graph.schema.presets import PRESETS
from guidedrag_graph.semantics import Semantics
from tests.conftest import wipe


def test_vocabulary_kind_reads_the_share_of_types_used_once() -> None:
    assert vocabulary_kind({"DIRECTOR": 92, "SPOUSE": 11, "FATHER": 2}) == "typed"
    free = {"IS": 40, "WAS_MARRIED_TO": 1, "DIRECTED_THE_FILM": 1, "IS_HUSBAND_OF": 1}
    assert vocabulary_kind(free) == "free-text" and not links_relations(free)
    # exactly half used once is not "more than half": still typed
    assert vocabulary_kind({"A": 1, "B": 3}) == "typed"
    assert vocabulary_kind({}) == "none" and not links_relations({})


TYPES = ["DIRECTOR", "BIRTH", "PLACE_OF_BIRTH", "PLACE_OF_BURIAL", "PUBLISHER", "LINKS_TO"]


def test_link_relations_by_name_then_inflection() -> None:
    assert link_relations("What nationality is the director of film Blood Street?", TYPES) == [
        RelationLink("director", "DIRECTOR", "name")
    ]
    # the longest type's words win: "place of birth", not the shorter type "birth" inside it
    assert link_relations("What is the place of birth of Ann?", TYPES) == [
        RelationLink("place of birth", "PLACE_OF_BIRTH", "name")
    ]
    assert link_relations("Who published Blood Street?", TYPES) == [
        RelationLink("published", "PUBLISHER", "inflection")
    ]
    # a piece of a hyphenated compound is another word: "mother-in-law" is no MOTHER
    assert link_relations("Who is Ann's mother-in-law?", [*TYPES, "MOTHER"]) == []
    # words inside a linked entity's span never match ("Director Dan" is a name)
    question = "Where was Director Dan born?"
    assert link_relations(question, TYPES, excluded=[(10, 22)]) == []


def test_similarity_links_mutual_best_matches_above_the_vocabularys_own_bar() -> None:
    types = ["SPOUSE", "FATHER", "DIRECTOR"]
    type_vectors = np.eye(3, dtype=np.float32)
    type_vectors[1] = [0.6, 0.8, 0.0]  # FATHER lies near SPOUSE: SPOUSE's bar is 0.6
    spans = ["husband", "film", "uncle", "wife"]
    span_vectors = np.array(
        [[0.9, 0.1, 0.0], [0.0, 0.1, 0.5], [0.5, 0.86, 0.0], [0.8, 0.1, 0.0]], dtype=np.float32
    )
    found = similarity_spans(spans, span_vectors, types, type_vectors)
    # "husband" -> SPOUSE (0.9 > 0.6); "film" -> DIRECTOR is its best but 0.5 is under the bar
    # (the median nearest-neighbour similarity, 0.6); "uncle" -> FATHER (0.988 > 0.6); "wife"
    # is nearest SPOUSE too, but SPOUSE's best span is "husband": one span per type
    assert found == [
        RelationLink("uncle", "FATHER", "similarity"),
        RelationLink("husband", "SPOUSE", "similarity"),
    ]
    # a similarity match never takes words a name match took
    question = "Who is the husband and director of Ann?"
    assert link_relations(question, types, similar=found) == [
        RelationLink("director", "DIRECTOR", "name"),
        RelationLink("husband", "SPOUSE", "similarity"),
    ]


def test_unknown_names_are_name_like_spans_no_link_covers() -> None:
    question = "Which country is Tajlu Khanum's husband from, Persia or Duchess of Blekinge?"
    start = question.index("Persia")
    assert unknown_names(question, [(start, start + len("Persia"))]) == [
        "Tajlu Khanum",
        "Duchess of Blekinge",
    ]
    assert unknown_names("Where was Ann born?", []) == ["Ann"]
    # a question's capitalised first word alone is no name
    assert unknown_names("Name the director of Blood Street.", []) == ["Blood Street"]


# --- end to end: the same question on a typed and on a free-text graph ------------------------
QUESTION = "Which country is Tajlu Khanum's husband from?"
PEOPLE = [
    ("Tajlu Khanum", "Tajlu Khanum was a Turkoman princess at the Safavid court."),
    ("Ismail I", "Ismail I founded the Safavid Empire of Persia in 1501."),
    ("Tahmasp I", "Tahmasp I was the second shah of the Safavid Empire."),
    ("Abbas I", "Abbas I was the fifth Safavid shah of Iran."),
    ("Mohammad Khodabanda", "Mohammad Khodabanda was the fourth Safavid shah."),
]
TYPED = [
    ("Tajlu Khanum", "spouse", "Ismail I"),
    ("Tahmasp I", "spouse", "Mohammad Khodabanda"),
    ("Tahmasp I", "father", "Ismail I"),
    ("Abbas I", "father", "Mohammad Khodabanda"),
    ("Ismail I", "links to", "Tahmasp I"),
    ("Abbas I", "links to", "Tahmasp I"),
]
FREE_TEXT = [
    ("Tajlu Khanum", "was married to the shah", "Ismail I"),
    ("Tahmasp I", "is the son of", "Ismail I"),
    ("Abbas I", "succeeded his father", "Mohammad Khodabanda"),
    ("Ismail I", "founded the empire with", "Tahmasp I"),
    ("Abbas I", "husband", "Tahmasp I"),
]


def _bundle(root: Path, triples: list[tuple[str, str, str]]) -> Path:
    root.mkdir(parents=True)
    rows: dict[str, list[dict[str, Any]]] = {
        "documents.jsonl": [{"id": f"d{i}", "title": t} for i, (t, _) in enumerate(PEOPLE)],
        "chunks.jsonl": [
            {"id": f"c{i}", "document_id": f"d{i}", "text": f"{t}\n{text}", "entities": [t]}
            for i, (t, text) in enumerate(PEOPLE)
        ],
        "relations.jsonl": [
            {"head": h, "type": r, "tail": t, "chunk_id": f"c{[p[0] for p in PEOPLE].index(h)}"}
            for h, r, t in triples
        ],
    }
    for name, lines in rows.items():
        (root / name).write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    return root


@pytest.mark.parametrize(
    ("triples", "linked"),
    [(TYPED, [{"span": "husband", "relation": "SPOUSE", "match": "similarity"}]), (FREE_TEXT, [])],
    ids=["typed", "free-text"],
)
def test_bare_question_links_relations_only_on_a_typed_graph(
    driver: Driver,
    settings: Settings,
    embedder: Embedder,
    tmp_path: Path,
    triples: list[tuple[str, str, str]],
    linked: list[dict[str, str]],
) -> None:
    wipe(driver)
    migrate(driver, settings, PRESETS["guidedrag"])
    load_bundle(
        driver,
        settings,
        PRESETS["guidedrag"],
        read_bundle(_bundle(tmp_path / "kb", triples)),
        embedder=embedder,
    )
    driver.execute_query("CALL db.awaitIndexes(120)")
    with GuidedRAG(settings, driver=driver, embedder=embedder) as rag:
        result = rag.retrieve(QUESTION, k=3)
    assert not result.abstained
    entities = [n for n in result.linked if "entity" in n]
    assert [n["entity"] for n in entities] == ["Tajlu Khanum"]
    assert [n for n in result.linked if "relation" in n] == linked
    assert ("A_rel" in result.tier_sizes) == bool(linked)
    assert result.to_dict()["unknown_names"] == []
    wipe(driver)


@pytest.mark.parametrize(
    ("triples", "mode", "joins"),
    [
        (TYPED, "auto", True),
        (FREE_TEXT, "auto", False),
        (TYPED, "off", False),
        (FREE_TEXT, "on", True),
    ],
    ids=["typed-auto", "free-text-auto", "typed-off", "free-text-on"],
)
def test_names_beside_the_stated_entity_join_it_by_the_graphs_rule(
    driver: Driver,
    settings: Settings,
    embedder: Embedder,
    tmp_path: Path,
    triples: list[tuple[str, str, str]],
    mode: str,
    joins: bool,
) -> None:
    """The default (``auto``) adds the question's other proper name beside a stated entity on
    a typed graph only (the relation-linking rule); a lower-case span never joins."""
    wipe(driver)
    migrate(driver, settings, PRESETS["guidedrag"])
    bundle = read_bundle(_bundle(tmp_path / "kb", triples))
    load_bundle(driver, settings, PRESETS["guidedrag"], bundle, embedder=embedder)
    driver.execute_query("CALL db.awaitIndexes(120)")
    stated = Semantics(entities=("Tajlu Khanum",))
    chosen = (
        settings if mode == "auto" else settings.model_copy(update={"link_beside_stated": mode})
    )
    with GuidedRAG(chosen, driver=driver, embedder=embedder) as rag:
        joined = rag.retrieve("Who was born first, Tajlu Khanum or Abbas I?", semantics=stated, k=3)
        lower = rag.retrieve(
            "Who was born first, Tajlu Khanum or mohammad khodabanda?", semantics=stated, k=3
        )
    assert joined.semantics is not None and lower.semantics is not None
    if joins:
        assert joined.semantics.entities == ("Tajlu Khanum", "Abbas I")  # never the stated twice
        assert [n for n in joined.linked if "entity" in n] == [
            {"span": "Abbas I", "entity": "Abbas I", "match": "exact"}
        ]
    else:
        assert joined.semantics.entities == ("Tajlu Khanum",)
        assert not [n for n in joined.linked if "entity" in n]
    # the same name written in lower case is read as a common noun beside the stated subject
    assert lower.semantics.entities == ("Tajlu Khanum",)
    wipe(driver)


@pytest.mark.parametrize(
    ("value", "mode"),
    [("true", "on"), ("FALSE", "off"), ("1", "on"), ("no", "off"), ("auto", "auto"), (True, "on")],
)
def test_link_beside_stated_reads_the_former_boolean_as_on_or_off(value: Any, mode: str) -> None:
    assert Settings(link_beside_stated=value).link_beside_stated == mode


def test_link_beside_stated_refuses_other_words(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GUIDEDRAG_LINK_BESIDE_STATED", "sometimes")
    with pytest.raises(ValidationError, match="link_beside_stated"):
        Settings()


def test_stated_entities_without_relations_get_the_questions_relation_types(
    driver: Driver, settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    wipe(driver)
    migrate(driver, settings, PRESETS["guidedrag"])
    bundle = read_bundle(_bundle(tmp_path / "kb", TYPED))
    load_bundle(driver, settings, PRESETS["guidedrag"], bundle, embedder=embedder)
    driver.execute_query("CALL db.awaitIndexes(120)")
    stated = Semantics(entities=("Tajlu Khanum",))
    with GuidedRAG(settings, driver=driver, embedder=embedder) as rag:
        result = rag.retrieve(QUESTION, semantics=stated, k=3)
        kept = rag.retrieve(
            QUESTION, semantics=stated.model_copy(update={"relations": ("FATHER",)})
        )
    assert result.semantics is not None and result.semantics.relations == ("SPOUSE",)
    assert {"span": "husband", "relation": "SPOUSE", "match": "similarity"} in result.linked
    assert "A_rel" in result.tier_sizes
    assert kept.semantics is not None and kept.semantics.relations == ("FATHER",)  # as stated
    wipe(driver)


class CountingEmbedder:
    """The test embedder, counting how often each text is embedded."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dimensions = inner.dimensions
        self.texts: list[str] = []

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        self.texts.extend(texts)
        return self.inner.embed_queries(texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed_passages(texts)


def test_relation_type_phrases_are_embedded_once_per_vocabulary_read(
    driver: Driver, settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """The type phrases belong to the vocabulary, not to the question: embedded on the first
    call, reused after it, and embedded again once the vocabulary is read again (a cleared
    cache, new relation counts); the links stay the same."""
    wipe(driver)
    migrate(driver, settings, PRESETS["guidedrag"])
    bundle = read_bundle(_bundle(tmp_path / "kb", TYPED))
    load_bundle(driver, settings, PRESETS["guidedrag"], bundle, embedder=embedder)
    driver.execute_query("CALL db.awaitIndexes(120)")
    counting = CountingEmbedder(embedder)
    phrases = [type_phrase(t) for t in ("FATHER", "LINKS_TO", "SPOUSE")]
    stated = Semantics(entities=("Tajlu Khanum",))
    spouse = {"span": "husband", "relation": "SPOUSE", "match": "similarity"}
    with GuidedRAG(settings, driver=driver, embedder=counting) as rag:
        for _ in range(3):
            assert spouse in rag.retrieve(QUESTION, semantics=stated, k=3).linked
        assert [counting.texts.count(p) for p in phrases] == [1, 1, 1]
        assert counting.texts.count("husband") == 3  # the question's spans: every call
        rag.graph.data.clear()
        assert spouse in rag.retrieve(QUESTION, semantics=stated, k=3).linked
        assert [counting.texts.count(p) for p in phrases] == [2, 2, 2]
        # the counts read again (the background refresh's new answer): a new vocabulary
        counts = rag.graph.data.get("relation_type_counts")
        rag.graph.data.put("relation_type_counts", dict(counts))
        assert spouse in rag.retrieve(QUESTION, semantics=stated, k=3).linked
        assert [counting.texts.count(p) for p in phrases] == [3, 3, 3]
    wipe(driver)


def test_stated_ranges_cover_the_name_and_its_alias() -> None:
    question = "Who directed Reverse (Film), or reverse?"
    assert stated_ranges(question, ["Reverse (film)"]) == [(13, 27), (13, 20), (32, 39)]
