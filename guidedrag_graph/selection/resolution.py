"""One question's name resolution, and why a term is unknown (with suggestions): decided from
facts handed to it, never read (issue 37).

Each primitive says what it needs (``Leaf.resolve`` calls ``entity``, ``entities``,
``relation_types`` or ``document`` here); a ``Resolution`` answers from the facts it holds — the
entity ids of one batch of names fetched up front, what each term's relation types, documents
and unknown names mean in the KB — and records, per leaf, why it resolved to nothing. A fact it
lacks is not read here: it raises ``MissingNameFact`` naming it, and the edge
(``selection/name_reads.py``, over the ``Resolver``) reads it and asks again, as ranking plans
from ``RankFacts`` (``retrieval/facts.py``). So this module imports no driver (the "Planning is
pure" contract in ``pyproject.toml``), and deciding is testable with facts alone.

Hard selections (``Selector.prepare``) and ``auto``'s tiers (``steering/tier_prep.py``) both
resolve through it, so a name is resolved once per question and an unknown one is reported in
the same words everywhere.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from guidedrag_graph.identifiers import quote_name
from guidedrag_graph.selection import nodes as A
from guidedrag_graph.selection.primitives import Resolved

EmptyKind = Literal[
    "unknown_entity",
    "unknown_relation_type",
    "empty_intersection",
    "empty_difference",
    "empty_term",
    "empty_scope",
]

# Unknown names cost a fuzzy suggestion query each: only the first few of a question get one.
SUGGESTED_NAMES = 5


@dataclass(frozen=True)
class EmptySelection:
    """Why a selection holds no chunk: the kind, the empty term (DSL text), what to do."""

    kind: EmptyKind
    term: str
    message: str
    suggestions: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "term": self.term,
            "message": self.message,
            "suggestions": list(self.suggestions),
        }


class Answers(Protocol):
    """What a leaf asks of a question's resolution to resolve itself (``Leaf.resolve``): a
    ``Resolution`` answers from the facts it holds; the edge's ``NameResolution``
    (``selection/name_reads.py``) reads each fact the answer lacks first."""

    def nothing(self) -> Resolved: ...

    def entity(self, leaf: A.EntityAnchored) -> Resolved: ...

    def entities(self, leaf: A.Entities) -> Resolved: ...

    def relation_types(self, leaf: A.Hop, anchor: Resolved) -> Resolved: ...

    def document(self, leaf: A.Document) -> Resolved: ...


# The facts a resolution is decided from, by kind: what the edge reads for each (the
# ``Resolver``'s method, or the diagnosis's) is in ``selection/name_reads.py``.
FactKind = Literal[
    "entity_ids",  # key: the name -> its entity ids (normally all fetched in one batch)
    "relation_types",  # key: the hop term -> (known types, unknown names) of its types
    "close_types",  # key: an unknown type name -> known types like it
    "document_ids",  # key: the name -> ids of the documents it names
    "suggestions",  # key: the explanation's ordinal -> entity names like the unknown one
    "schema_mismatch",  # key: the explanation's ordinal -> why the mapping misfits, or None
    "fulltext_missing",  # key: the explanation's ordinal -> why no suggestion can exist, or None
]
Fact = tuple[FactKind, Hashable]


class MissingNameFact(LookupError):
    """A resolution needed a fact it was not handed: ``kind`` and ``key`` say which, ``ask``
    what the edge reads it for (a name, or a hop's types). The edge reads it and asks again,
    so a fact costs its read only when an answer needs it (as ``retrieval.facts.MissingFact``)."""

    def __init__(self, kind: FactKind, key: Hashable, ask: Any) -> None:
        super().__init__(f"name resolution decided without the fact {kind} of {ask!r}")
        self.kind = kind
        self.key = key
        self.ask = ask


@dataclass
class Resolution:
    """The names of one question, resolved from ``ids`` (entity ids per name) and ``facts``
    (everything else, by ``Fact``); ``reasons``: each empty leaf's explanation, ``partial``:
    names of an ``entity([...])`` that are unknown while others are known.

    Without ``diagnose`` (``auto``'s tiers) an unknown entity's message names only the entity
    and its suggestions; with it (hard selections) it adds why the schema mapping or a missing
    full-text index may be the cause.

    Explanations of unknown entities are numbered in the order they are made (``explained``):
    only the first ``SUGGESTED_NAMES`` get suggestions, and their facts are keyed by that
    number, so the edge reads them per explanation exactly as a resolution that read them
    itself did (the suggestions are kept by the ``Resolver``; the index check is not). Every
    answer asks for all its facts before it records anything, so an answer interrupted by a
    missing fact is asked again from the same state.
    """

    ids: dict[str, list[str]] = field(default_factory=dict)
    facts: dict[Fact, Any] = field(default_factory=dict)
    diagnose: bool = False
    explained: int = 0
    reasons: dict[A.Expr, EmptySelection] = field(default_factory=dict)
    partial: list[EmptySelection] = field(default_factory=list)

    def need(self, kind: FactKind, key: Hashable, ask: Any) -> Any:
        """The fact ``(kind, key)``; ``MissingNameFact`` naming it when it was not handed in."""
        if kind == "entity_ids":
            if key in self.ids:
                return self.ids[key]
        elif (kind, key) in self.facts:
            return self.facts[(kind, key)]
        raise MissingNameFact(kind, key, ask)

    def _ids(self, name: str) -> list[str]:
        return list(self.need("entity_ids", name, name))

    # --- what leaves ask for (Leaf.resolve) ------------------------------------------------
    def nothing(self) -> Resolved:
        return Resolved()

    def entity(self, leaf: A.EntityAnchored) -> Resolved:
        ids = self._ids(leaf.name)
        if not ids:
            return self._empty(leaf, self.unknown_entity(leaf.to_text(), leaf.name))
        return Resolved(ids=tuple(ids))

    def entities(self, leaf: A.Entities) -> Resolved:
        """entity([...]): the ids of every name; unknown names are warnings unless all are."""
        ids: dict[str, None] = {}
        unknown: list[str] = []
        for name in dict.fromkeys(leaf.names):
            found = self._ids(name)
            ids.update(dict.fromkeys(found))
            if not found:
                unknown.append(name)
        if not ids:
            return self._empty(leaf, self.unknown_entity(leaf.to_text(), unknown[0]))
        self.partial += self._explained([(A.Entity(n).to_text(), n) for n in unknown[:5]])
        return Resolved(ids=tuple(ids))

    def relation_types(self, leaf: A.Hop, anchor: Resolved) -> Resolved:
        known, unknown = self.need("relation_types", leaf, leaf.types)
        if unknown or not known:
            missing = list(unknown) or list(leaf.types)
            # Suggestions for the first few unknown names only (as for entities): each one is
            # compared with every known type, so 200 unknown names must not cost 200 scans.
            close = tuple(
                dict.fromkeys(
                    t for u in missing[:SUGGESTED_NAMES] for t in self.need("close_types", u, u)
                )
            )
            hint = f"; did you mean {', '.join(map(quote_name, close))}?" if close else ""
            return self._empty(
                leaf,
                EmptySelection(
                    "unknown_relation_type",
                    leaf.to_text(),
                    f"unknown relation type(s) {', '.join(map(repr, missing))}: the graph "
                    f"has no such relationships{hint}",
                    close,
                ),
            )
        return Resolved(ids=anchor.ids, types=tuple(known))

    def document(self, leaf: A.Document) -> Resolved:
        ids = self.need("document_ids", leaf.name, leaf.name)
        if not ids:
            return self._empty(
                leaf,
                EmptySelection(
                    "empty_term", leaf.to_text(), f"no document with id or title {leaf.name!r}"
                ),
            )
        return Resolved(ids=tuple(ids))

    # --- explanations --------------------------------------------------------------------------
    def unknown_entity(self, term: str, name: str) -> EmptySelection:
        """Why ``name`` (written as ``term``) resolved to no entity, with suggestions."""
        return self._explained([(term, name)])[0]

    def _explained(self, asks: list[tuple[str, str]]) -> list[EmptySelection]:
        """Each (term, name) explained; numbered (``explained``) once all their facts are in."""
        out = [self._explain(term, name, self.explained + i) for i, (term, name) in enumerate(asks)]
        self.explained += len(asks)
        return out

    def _explain(self, term: str, name: str, n: int) -> EmptySelection:
        suggestions: tuple[str, ...] = ()
        if n < SUGGESTED_NAMES:
            suggestions = tuple(self.need("suggestions", n, name))
        hint = f"; did you mean {', '.join(map(repr, suggestions))}?" if suggestions else ""
        if self.diagnose:
            if mismatch := self.need("schema_mismatch", n, name):
                hint = f"; {mismatch}{hint}"
            elif not suggestions and (no_index := self.need("fulltext_missing", n, name)):
                hint = f"; {no_index}"
        return EmptySelection(
            "unknown_entity",
            term,
            f"no entity named {name!r} (by name, id, case-insensitive name or alias){hint}",
            suggestions,
        )

    def first_unknown(self, names: Iterable[str]) -> EmptySelection | None:
        """The first of ``names`` that resolved to no entity, explained (``entity(name)``)."""
        for name in names:
            if not self._ids(name):
                return self.unknown_entity(A.Entity(name).to_text(), name)
        return None

    def _empty(self, leaf: A.Expr, reason: EmptySelection) -> Resolved:
        self.reasons[leaf] = reason
        return Resolved(empty=True)
