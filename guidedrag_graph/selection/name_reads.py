"""The reads name resolution is decided from, gathered at the edge (issue 37).

Deciding what a question's names mean is pure (``selection/resolution.py``: a ``Resolution``
answers from facts and raises ``MissingNameFact`` for one it lacks). This is the edge: it holds
a question's ``Resolution`` beside the reader that can fetch its facts (the ``Resolver``, whose
reads are templated, bounded and kept in the process's warm state) and the diagnosis of an
unknown name (the ``Selector``), and runs each answer until it has every fact it needs —
reading one, then asking again. The reads are the ones a resolution that read for itself sent,
in the same order: one batch of entity names up front, then, as the answers need them, each hop
term's relation types, each unknown type's close types, each document name, and per unknown
entity its suggestions and diagnosis.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Protocol, TypeVar

from guidedrag_graph.selection import fact_rounds
from guidedrag_graph.selection import nodes as A
from guidedrag_graph.selection.primitives import Leaf, Resolved
from guidedrag_graph.selection.resolution import (
    SUGGESTED_NAMES,
    EmptySelection,
    MissingNameFact,
    Resolution,
)

_T = TypeVar("_T")
# The most facts one answer needs besides its names' entity ids: a hop's types and the close
# types of its first unknown names, or up to SUGGESTED_NAMES explanations of unknown names
# (suggestions, schema check, index check each).
ANSWER_FACTS = 1 + 3 * SUGGESTED_NAMES


class NameReader(Protocol):
    """What resolution's facts are read through (``selection/resolver.py``'s ``Resolver``)."""

    def entity_ids_many(self, names: list[str]) -> dict[str, list[str]]: ...

    def resolve_types(self, types: tuple[str, ...]) -> tuple[list[str], list[str]]: ...

    def close_types(self, name: str) -> list[str]: ...

    def document_ids(self, name: str) -> list[str]: ...

    def suggestions(self, name: str) -> list[str]: ...


class Diagnosis(Protocol):
    """Why names may be unknown for a reason other than the name (``Selector`` provides it)."""

    def schema_mismatch(self) -> str | None: ...

    def fulltext_missing(self) -> str | None: ...


@dataclass
class NameResolution:
    """One question's ``Resolution`` with its facts read as its answers need them; it answers
    a leaf's asks itself (``resolution.Answers``), so ``leaf.resolve(res)`` reads what it must.

    >>> res = NameResolution.fetch(selector.resolver, ["Rome"], diagnosis=selector)
    >>> res.resolve(parse("hop('Rome', ['FOUGHT_IN'])")).types   # reads the types, once
    """

    resolution: Resolution
    reader: NameReader
    diagnosis: Diagnosis | None = None

    @classmethod
    def fetch(
        cls, reader: NameReader, names: Iterable[str], diagnosis: Diagnosis | None = None
    ) -> NameResolution:
        """Every entity name in one batch (two round trips, however many names)."""
        names = list(names)
        ids = reader.entity_ids_many(names) if names else {}
        return cls(Resolution(ids, diagnose=diagnosis is not None), reader, diagnosis)

    @property
    def ids(self) -> dict[str, list[str]]:
        return self.resolution.ids

    @property
    def reasons(self) -> dict[A.Expr, EmptySelection]:
        return self.resolution.reasons

    @property
    def partial(self) -> list[EmptySelection]:
        return self.resolution.partial

    def resolve(self, leaf: Leaf) -> Resolved:
        """What ``leaf`` means in this KB (``Leaf.resolve``), its facts read as needed."""
        return leaf.resolve(self)

    # --- what leaves ask for (``resolution.Answers``): the pure answer, its facts read first
    def nothing(self) -> Resolved:
        return Resolved()

    def entity(self, leaf: A.EntityAnchored) -> Resolved:
        return self.decided(lambda: self.resolution.entity(leaf))

    def entities(self, leaf: A.Entities) -> Resolved:
        return self.decided(lambda: self.resolution.entities(leaf), len(leaf.names))

    def relation_types(self, leaf: A.Hop, anchor: Resolved) -> Resolved:
        return self.decided(lambda: self.resolution.relation_types(leaf, anchor))

    def document(self, leaf: A.Document) -> Resolved:
        return self.decided(lambda: self.resolution.document(leaf))

    def first_unknown(self, names: Iterable[str]) -> EmptySelection | None:
        """``Resolution.first_unknown``, its facts read as needed."""
        names = list(names)
        return self.decided(lambda: self.resolution.first_unknown(names), len(names))

    def decided(self, answer: Callable[[], _T], names: int = 0) -> _T:
        """``answer()`` asked again after each fact it lacked is read (``fact_rounds.decided``:
        a fact read is kept in the resolution, so the rounds end; one asked again, or more than
        an answer over ``names`` entity names can need, is ``FactsNotConverging``)."""
        return fact_rounds.decided(
            lambda _: answer(),
            self.resolution,
            self._read,
            MissingNameFact,
            attrgetter("kind", "key"),
            rounds=names + ANSWER_FACTS,
        )

    def _read(self, res: Resolution, missing: MissingNameFact) -> Resolution:
        self.gather(missing)
        return res

    def gather(self, missing: MissingNameFact) -> None:
        """Read the fact ``missing`` names, through the reader (or the diagnosis)."""
        res, kind, ask = self.resolution, missing.kind, missing.ask
        value: Any
        if kind == "entity_ids":
            res.ids[ask] = list(self.reader.entity_ids_many([ask]).get(ask, []))
            return
        if kind == "relation_types":
            known, unknown = self.reader.resolve_types(ask)
            value = (tuple(known), tuple(unknown))
        elif kind == "close_types":
            value = tuple(self.reader.close_types(ask))
        elif kind == "document_ids":
            value = tuple(self.reader.document_ids(ask))
        elif kind == "suggestions":
            value = tuple(self.reader.suggestions(ask))
        elif kind == "schema_mismatch" and self.diagnosis is not None:
            value = self.diagnosis.schema_mismatch()
        elif kind == "fulltext_missing" and self.diagnosis is not None:
            value = self.diagnosis.fulltext_missing()
        else:  # a diagnosis asked without one: the resolution was built to diagnose
            raise missing
        res.facts[(kind, missing.key)] = value
