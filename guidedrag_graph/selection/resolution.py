"""One question's name resolution, and why a term is unknown (with suggestions).

Each primitive says what it needs (``Leaf.resolve`` calls ``entity``, ``entities``,
``relation_types`` or ``document`` here); a ``Resolution`` answers from one batch of entity
names fetched up front and from the ``Resolver``'s caches, and records, per leaf, why it
resolved to nothing. Hard selections (``Selector.prepare``) and ``auto``'s tiers
(``boosting.prepare_tiers``) both resolve through it, so a name is resolved once per question
and an unknown one is reported in the same words everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from guidedrag_graph.identifiers import quote_name
from guidedrag_graph.selection import nodes as A
from guidedrag_graph.selection.primitives import Resolved

if TYPE_CHECKING:
    from guidedrag_graph.selection.resolver import Resolver

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


class Diagnosis(Protocol):
    """Why names may be unknown for a reason other than the name (``Selector`` provides it)."""

    def schema_mismatch(self) -> str | None: ...

    def fulltext_missing(self) -> str | None: ...


@dataclass
class Resolution:
    """The names of one question, resolved; ``reasons``: each empty leaf's explanation,
    ``partial``: names of an ``entity([...])`` that are unknown while others are known.

    Without a ``diagnosis`` (``auto``'s tiers) an unknown entity's message names only the
    entity and its suggestions; with one (hard selections) it adds why the schema mapping or a
    missing full-text index may be the cause.
    """

    resolver: Resolver
    ids: dict[str, list[str]]
    diagnosis: Diagnosis | None = None
    suggestions_left: int = SUGGESTED_NAMES
    reasons: dict[A.Expr, EmptySelection] = field(default_factory=dict)
    partial: list[EmptySelection] = field(default_factory=list)

    @classmethod
    def fetch(
        cls, resolver: Resolver, names: Iterable[str], diagnosis: Diagnosis | None = None
    ) -> Resolution:
        """Every entity name in one batch (two round trips, however many names)."""
        names = list(names)
        return cls(resolver, resolver.entity_ids_many(names) if names else {}, diagnosis)

    # --- what leaves ask for (Leaf.resolve) ------------------------------------------------
    def nothing(self) -> Resolved:
        return Resolved()

    def entity(self, leaf: A.EntityAnchored) -> Resolved:
        ids = self.ids.get(leaf.name, [])
        if not ids:
            return self._empty(leaf, self.unknown_entity(leaf.to_text(), leaf.name))
        return Resolved(ids=tuple(ids))

    def entities(self, leaf: A.Entities) -> Resolved:
        """entity([...]): the ids of every name; unknown names are warnings unless all are."""
        ids: dict[str, None] = {}
        unknown: list[str] = []
        for name in dict.fromkeys(leaf.names):
            found = self.ids.get(name, [])
            ids.update(dict.fromkeys(found))
            if not found:
                unknown.append(name)
        if not ids:
            return self._empty(leaf, self.unknown_entity(leaf.to_text(), unknown[0]))
        self.partial += [self.unknown_entity(A.Entity(n).to_text(), n) for n in unknown[:5]]
        return Resolved(ids=tuple(ids))

    def relation_types(self, leaf: A.Hop, anchor: Resolved) -> Resolved:
        types, unknown = self.resolver.resolve_types(leaf.types)
        if unknown or not types:
            missing = unknown or list(leaf.types)
            # Suggestions for the first few unknown names only (as for entities): each one is
            # compared with every known type, so 200 unknown names must not cost 200 scans.
            close = tuple(
                dict.fromkeys(
                    t for u in missing[:SUGGESTED_NAMES] for t in self.resolver.close_types(u)
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
        return Resolved(ids=anchor.ids, types=tuple(types))

    def document(self, leaf: A.Document) -> Resolved:
        ids = self.resolver.document_ids(leaf.name)
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
        suggestions: tuple[str, ...] = ()
        if self.suggestions_left > 0:
            self.suggestions_left -= 1
            suggestions = tuple(self.resolver.suggestions(name))
        hint = f"; did you mean {', '.join(map(repr, suggestions))}?" if suggestions else ""
        if self.diagnosis is not None:
            if mismatch := self.diagnosis.schema_mismatch():
                hint = f"; {mismatch}{hint}"
            elif not suggestions and (no_index := self.diagnosis.fulltext_missing()):
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
            if not self.ids.get(name):
                return self.unknown_entity(A.Entity(name).to_text(), name)
        return None

    def _empty(self, leaf: A.Expr, reason: EmptySelection) -> Resolved:
        self.reasons[leaf] = reason
        return Resolved(empty=True)
