"""Which relation types a bare question asks about, decided from facts (issue 37): pure.

A question's relation types are linked (``linking/relations.py``) on the graph's relation
vocabulary when it reads as typed (or ``force``), scoped to the types with a relation in a
trusted scope, matched by words and, with an embedder, by how close the question's spans are to
each type's phrase. ``relations_asked`` decides that from ``RelationFacts``: the vocabulary and
whether it is typed, the scope's types, the type phrases' vectors and bars, the spans' vectors.
A fact not yet handed in raises ``MissingRelationFact`` naming it, in the order the edge
(``pipeline/question_relations.py``, ``question_relations``) reads them: the vocabulary, the
scope's types, the type vectors, the span vectors — each only when the decision needs it. This
module imports no driver, database layer, context or embedder (the "Planning is pure" contract
in ``pyproject.toml``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Literal, TypeVar

import numpy as np

from guidedrag_graph.linking.relations import (
    RelationLink,
    candidate_spans,
    link_relations,
    similarity_spans,
)

RelationFactKind = Literal["vocabulary", "in_scope", "type_vectors", "span_vectors"]
_V = TypeVar("_V")


class MissingRelationFact(LookupError):
    """The decision needed a fact it was not handed: ``kind``, and ``ask`` what the edge reads
    it for (the types the scope is asked about or embedded, the spans embedded; () for the
    vocabulary). The edge reads it and asks again (``selection/fact_rounds.py``)."""

    def __init__(self, kind: RelationFactKind, ask: tuple[str, ...] = ()) -> None:
        super().__init__(f"relation types decided without the fact {kind} ({len(ask)} asked)")
        self.kind = kind
        self.ask = ask


@dataclass
class RelationFacts:
    """What one question's relation types are decided from.

    ``question`` and ``excluded`` (linked entities' character ranges); ``force``: link on a
    free-text vocabulary too; ``scoped``: a scope keeps only its types; ``embeds``: an embedder
    compares spans with types. Read at the edge: ``vocabulary`` (the graph's types, sorted, and
    whether it reads as typed), ``in_scope`` (the types the scope keeps, of those asked),
    ``type_vectors`` (the asked types' phrase vectors, and their bars when they are the whole
    vocabulary), ``span_vectors`` (the asked spans' vectors, a row each)."""

    question: str
    excluded: Sequence[tuple[int, int]] = ()
    force: bool = False
    scoped: bool = False
    embeds: bool = False
    vocabulary: tuple[list[str], bool] | None = None
    in_scope: list[str] | None = None
    type_vectors: tuple[np.ndarray, np.ndarray | None] | None = None
    span_vectors: np.ndarray | None = None

    @cached_property
    def spans(self) -> list[str]:
        """The question's candidate spans (``candidate_spans``): a function of the question and
        ``excluded`` alone, found once however many rounds the decision is asked."""
        return candidate_spans(self.question, self.excluded)


def _need(value: _V | None, kind: RelationFactKind, ask: Sequence[str] = ()) -> _V:
    if value is None:
        raise MissingRelationFact(kind, tuple(ask))
    return value


def relations_asked(facts: RelationFacts) -> list[RelationLink]:
    """The vocabulary's types ``facts.question`` asks about outside ``facts.excluded``: none
    where the vocabulary is free text, unless ``force`` (judged on the whole graph); scoped,
    only the scope's types; with an embedder and more than one type, close spans too."""
    types, typed = _need(facts.vocabulary, "vocabulary")
    if facts.scoped:
        types = _need(facts.in_scope, "in_scope", types)
    if not types or not (facts.force or typed):
        return []
    similar: list[RelationLink] = []
    spans = facts.spans
    if facts.embeds and spans and len(types) > 1:
        type_vectors, bar = _need(facts.type_vectors, "type_vectors", types)
        span_vectors = _need(facts.span_vectors, "span_vectors", spans)
        similar = similarity_spans(spans, span_vectors, types, type_vectors, bar)
    return link_relations(facts.question, types, excluded=facts.excluded, similar=similar)
