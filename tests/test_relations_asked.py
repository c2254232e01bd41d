"""Which relation types a bare question asks about, decided from facts alone (issue 37):
``relations_asked`` takes the vocabulary, the scope's types and the vectors as literals — no
graph, scope, embedder or driver — and names each fact it lacks in the order the edge
(``pipeline/question_relations.py``) reads them, asking only for what the answer needs. The
import side is the "Planning is pure" contract (``tests/test_architecture.py``). No Neo4j."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from guidedrag_graph.linking.relations import link_relations
from guidedrag_graph.pipeline import question_relations as Q
from guidedrag_graph.pipeline.relations_asked import (
    MissingRelationFact,
    RelationFacts,
    relations_asked,
)
from guidedrag_graph.selection.fact_rounds import FactsNotConverging

QUESTION = "Which company acquired the studio, and who founded it?"
TYPES = ["ACQUIRED", "FOUNDED_BY", "LOCATED_IN"]


def _asks(facts: RelationFacts) -> list[tuple[str, tuple[str, ...]]]:
    """The facts the decision asks for, in order, each handed in (the vectors: one-hot rows,
    a type's vector being its span's where the words match) until it answers."""
    asked: list[tuple[str, tuple[str, ...]]] = []
    while True:
        try:
            relations_asked(facts)
            return asked
        except MissingRelationFact as missing:
            asked.append((missing.kind, missing.ask))
            if missing.kind == "vocabulary":
                facts.vocabulary = (TYPES, True)
            elif missing.kind == "in_scope":
                facts.in_scope = [t for t in missing.ask if t != "LOCATED_IN"]
            elif missing.kind == "type_vectors":
                facts.type_vectors = (np.eye(len(missing.ask), 8, dtype=np.float32), None)
            else:
                facts.span_vectors = np.zeros((len(missing.ask), 8), dtype=np.float32)


def test_each_fact_is_asked_for_in_the_order_the_edge_reads_it() -> None:
    scoped = RelationFacts(QUESTION, scoped=True, embeds=True)
    asked = _asks(scoped)
    assert [kind for kind, _ in asked] == ["vocabulary", "in_scope", "type_vectors", "span_vectors"]
    assert asked[1][1] == tuple(TYPES) and asked[2][1] == ("ACQUIRED", "FOUNDED_BY")
    assert "acquired" in " ".join(asked[3][1]).lower()  # the question's spans
    # unscoped, no scope asked; without an embedder, no vectors
    assert [k for k, _ in _asks(RelationFacts(QUESTION, embeds=True))] == [
        "vocabulary",
        "type_vectors",
        "span_vectors",
    ]
    assert [k for k, _ in _asks(RelationFacts(QUESTION))] == ["vocabulary"]


def test_a_free_text_vocabulary_links_nothing_unless_forced_and_asks_no_vector() -> None:
    free = RelationFacts(QUESTION, embeds=True, vocabulary=(TYPES, False))
    assert relations_asked(free) == []  # nothing else asked
    forced = RelationFacts(QUESTION, force=True, vocabulary=(TYPES, False))
    assert [r.relation for r in relations_asked(forced)] == [
        r.relation for r in link_relations(QUESTION, TYPES)
    ]
    assert [r.relation for r in relations_asked(forced)]  # the words name some
    # one type in scope: no vectors compared (only words)
    one = RelationFacts(QUESTION, scoped=True, embeds=True, vocabulary=(TYPES, True))
    one.in_scope = ["ACQUIRED"]
    assert [r.relation for r in relations_asked(one)] == ["ACQUIRED"]
    # none in scope: nothing, nothing more asked
    none = RelationFacts(QUESTION, scoped=True, embeds=True, vocabulary=(TYPES, True))
    none.in_scope = []
    assert relations_asked(none) == []


class _Embedder:
    def __init__(self) -> None:
        self.asked: list[list[str]] = []

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        self.asked.append(list(texts))
        return [[1.0, 0.0] for _ in texts]


def test_the_edge_reads_each_fact_once_and_refuses_one_it_cannot_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads: list[str] = []

    def vocabulary(graph: Any) -> tuple[list[str], bool]:
        reads.append("vocabulary")
        return TYPES, True

    def type_vectors(graph: Any, embedder: Any, types: Any) -> tuple[np.ndarray, None]:
        reads.append("type_vectors")
        return np.ones((len(types), 2), dtype=np.float32), None

    monkeypatch.setattr(Q, "relation_vocabulary", vocabulary)
    monkeypatch.setattr(Q, "relation_type_vectors", type_vectors)
    embedder = _Embedder()
    found = Q.question_relations(None, QUESTION, [], embedder)  # type: ignore[arg-type]
    assert reads == ["vocabulary", "type_vectors"] and len(embedder.asked) == 1
    assert {"ACQUIRED"} <= {r.relation for r in found}
    # a reader that hands nothing in ends the rounds (here: the vocabulary, read as None)
    monkeypatch.setattr(Q, "relation_vocabulary", lambda graph: None)
    with pytest.raises(FactsNotConverging, match="vocabulary"):
        Q.question_relations(None, QUESTION, [], None)  # type: ignore[arg-type]
