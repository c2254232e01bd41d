"""Name resolution against the database: entities, documents and relation types.

Entity names resolve in tiers and the first tier that matches wins: exact name, id, ``name_key``
(case/whitespace-insensitive), then alias (exact alias or alias key). Relation types must exist in
the database (``db.relationshipTypes()`` and in use, or the type property's values in relation
mode "property"); a free-text predicate also matches its UPPER_SNAKE form. Nothing user-supplied
reaches query text: names are parameters, and only validated types are escaped into patterns.
"""

from __future__ import annotations

import difflib
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from neo4j.exceptions import ClientError

from guidedrag_graph.context import GraphContext
from guidedrag_graph.db.reads import Read
from guidedrag_graph.db.versions import database_version
from guidedrag_graph.schema.presets import SchemaMapping, name_key, relation_type_name
from guidedrag_graph.selection import fact_rounds
from guidedrag_graph.selection.cost import CostStats
from guidedrag_graph.selection.entity_matches import (
    EntityFacts,
    EntityIds,
    MissingEntityFact,
    Row,
    decide_entity_ids,
    lowest_tier,
    narrowed,
    scope_asks,
)
from guidedrag_graph.selection.fact_reads import fetch_stats
from guidedrag_graph.selection.limits import Limits, check_list, check_text
from guidedrag_graph.templates import queries as T

if TYPE_CHECKING:
    from guidedrag_graph.selection.scope_names import ScopeNames

_WORD = re.compile(r"\w+", re.UNICODE)
# A scoped resolver asks the full-text index for this many times the suggestions it returns:
# the closest names may all be outside the scope, and only in-scope ones are offered.
SCOPED_SUGGESTION_FACTOR = 10


def lucene_fuzzy(text: str) -> str:
    """Each word of ``text`` as a fuzzy term (``word~``), OR-ed: words only, nothing to escape."""
    return " ".join(w.lower() + "~" for w in _WORD.findall(text)[:8])


@dataclass
class Resolver:
    """Names and relation types resolved against one database; what it finds is kept in the
    context's ``ExpiringCache`` (``GUIDEDRAG_RESOLUTION_CACHE_S``), shared by its selectors.

    With ``scope`` (the names a trusted scope may show, ``selection/scope_names.py``) every
    answer is narrowed to it: an entity, document or relation type found only outside the scope
    resolves to nothing (the same "unknown" as a name the KB lacks), and suggestions name only
    in-scope entities and types. Scoped answers are cached under the scope's key."""

    graph: GraphContext
    limits: Limits = field(default_factory=Limits)
    scope: ScopeNames | None = None

    def _scoped_ids(self, rows: list[Row]) -> list[Row]:
        """``rows`` (with an ``id``) less those outside the scope (the scope asked here, the
        narrowing ``entity_matches.narrowed``), before the lowest tier is taken: a name that
        means an in-scope alias and an out-of-scope exact name is the alias."""
        if self.scope is None or not rows:
            return rows
        return narrowed(rows, frozenset(self.scope.keep_ids(scope_asks(rows))))

    def _cache_key(self, *key: Any) -> tuple[Any, ...]:
        return key if self.scope is None else (key[0], ("scope", self.scope.key), *key[1:])

    @property
    def schema(self) -> SchemaMapping:
        return self.graph.schema

    @property
    def fulltext_index(self) -> str:
        return self.graph.settings.entity_fulltext_index_name

    def _read(self, query: str, params: dict[str, Any], name: str) -> list[dict[str, Any]]:
        return self.graph.read(query, params, name=name)

    def entity_ids(self, name: str) -> list[str]:
        """Ids of the entities ``name`` means (lowest matching tier), or [] if none."""
        check_text(name, "an entity name", self.limits)
        params: dict[str, Any] = {"sel_name": name, "sel_key": name_key(name)}
        rows = self._read(
            T.fragment("resolve_entity", "query", self.schema), params, name="resolve_entity"
        )
        rows = self._scoped_ids(rows)  # each read's rows asked of the scope once
        if not rows:
            alias = T.fragment("resolve_entity_alias", "query", self.schema)
            rows = self._scoped_ids(self._read(alias, params, name="resolve_entity_alias"))
        return lowest_tier(rows)

    def entity_ids_many(self, names: tuple[str, ...] | list[str]) -> dict[str, list[str]]:
        """``entity_ids`` for every name: none for names resolved within the cache's time,
        else at most two round trips whatever their number."""
        names = list(dict.fromkeys(names))
        for name in names:
            check_text(name, "an entity name", self.limits)
        cache = self.graph.data
        kept = {
            n: ids for n in names if (ids := cache.get(self._cache_key("entity", n))) is not None
        }
        missing = [n for n in names if n not in kept]
        if missing and self._still_unknown(missing):
            kept |= {n: [] for n in missing}
            missing = []
        state = self.graph.state
        version = state.version if state is not None else None  # before the names are read
        found: dict[str, list[str]] = {}
        if missing:
            decided = self._fetch_entity_ids(EntityFacts(missing, self.scope is not None, version))
            found = decided.ids
            for kind, name, value in decided.cache:
                cache.put(self._cache_key(kind, name), value)
        return {name: list(kept[name] if name in kept else found[name]) for name in names}

    def _still_unknown(self, names: list[str]) -> bool:
        """Whether every name of ``names`` was found unknown at the database's current version.

        An unknown name costs two reads (the alias tier scans every entity: tens of ms on a
        large KB) and an app's users may keep asking about it; a name found unknown is kept
        with the version it was read at, and asked again only when the version moved since
        (a write: ours, another tool's, another process's). The version is one ``RETURN 1``
        (its bookmark), so a new entity is still found at once, even by a reused instance."""
        state = self.graph.state
        if state is None or state.version is None:
            return False
        at = [self.graph.data.get(self._cache_key("unknown", n)) for n in names]
        if any(v is None or v != state.version for v in at):
            return False
        check = Read("connection_check", T.query("connection_check"), {})
        version = database_version(self.graph.driver, self.graph.database, check)
        state.observe(version)  # a moved version forgets every data answer, these with them
        return bool(version == at[0])

    def _fetch_entity_ids(self, facts: EntityFacts) -> EntityIds:
        """``decide_entity_ids`` (``selection/entity_matches.py``: the tiers, the scope's
        narrowing, whether aliases are read, what is kept), each fact it asks for read here:
        a tier read, or the scope's answer for its rows' ids (held: from memory)."""
        names = facts.names
        params: dict[str, Any] = {"sel_names": names, "sel_keys": [name_key(n) for n in names]}

        def read(facts: EntityFacts, missing: MissingEntityFact) -> EntityFacts:
            if missing.kind == "rows":
                query = T.fragment("resolve_entities", missing.read, self.schema)
                facts.rows[missing.read] = self._read(query, params, name="resolve_entities")
            elif self.scope is not None:
                facts.in_scope[missing.read] = frozenset(self.scope.keep_ids(missing.ask))
            else:  # only a scoped decision asks the scope
                raise missing
            return facts

        # at most four facts: each read's rows and, scoped, the scope's answer for them
        key = attrgetter("kind", "read")
        return fact_rounds.decided(decide_entity_ids, facts, read, MissingEntityFact, key, rounds=4)

    def cost_stats(self, ids: list[str]) -> CostStats:
        """The counts a selection's cost is estimated from (``selection/cost.py``): kept like
        resolved names, else one cheap query."""
        return fetch_stats(self.graph, ids)

    def document_ids(self, name: str) -> list[str]:
        check_text(name, "a document name", self.limits)
        rows = self._read(
            T.fragment("resolve_document", "query", self.schema),
            {"sel_name": name},
            name="resolve_document",
        )
        if self.scope is not None and rows:  # a document outside the scope is unknown
            rows = narrowed(rows, frozenset(self.scope.keep_documents(scope_asks(rows))))
        return lowest_tier(rows)

    def suggestions(self, name: str, limit: int = 5, scope_key: str | None = None) -> list[str]:
        """Close entity names from the full-text index (fuzzy); [] when it cannot help.

        Kept in the process's warm state (``KBState``) like resolved names, per name, ``limit``
        and ``scope_key`` (the scope that restricts a request's suggestions; None: the whole KB):
        forgotten when the database's version moves or after ``GUIDEDRAG_RESOLUTION_CACHE_S``.
        The fuzzy query is the dearest read a question can make (tens of ms, against ~2 ms for a
        ranking), and an app whose users keep asking about a name the KB lacks would pay it on
        every abstention; an empty list is kept too (the same version gives the same answer)."""
        check_text(name, "an entity name", self.limits)
        key = self._cache_key("suggestions", name, limit, scope_key)
        kept: tuple[str, ...] | None = self.graph.data.get(key)
        if kept is not None:
            return list(kept)
        found = self._fetch_suggestions(name, limit)
        if found is None:  # no full-text index (yet): asked again, never kept
            return []
        self.graph.data.put(key, tuple(found))
        return found

    def _fetch_suggestions(self, name: str, limit: int) -> list[str] | None:
        """The fuzzy full-text query's names, most alike first (scoped: in-scope names only);
        None when the index is missing."""
        fuzzy = lucene_fuzzy(name)
        return self._suggest(name, fuzzy, limit) if fuzzy else []

    def _suggest(self, name: str, fuzzy: str, limit: int) -> list[str] | None:
        asked = limit if self.scope is None else limit * SCOPED_SUGGESTION_FACTOR
        try:
            rows = self._read(
                T.fragment("suggest_entities", "query", self.schema),
                {"sel_index": self.fulltext_index, "sel_fuzzy": fuzzy, "sel_limit": asked},
                name="suggest_entities",
            )
        except ClientError:
            return None
        out: list[str] = []
        for row in rows:
            if row["name"] is not None and row["name"] not in out:
                out.append(str(row["name"]))
        if self.scope is not None:  # only names an in-scope chunk mentions are offered
            out = self.scope.keep_names(out)[:limit]
        # The index's fuzzy scores favour short names; order by how alike the names read.
        alike = rank_similar(name, out, limit)
        return alike + [n for n in out if n not in alike]

    def relation_types(self, *, fresh: bool = False) -> set[str]:
        """Names that may be relation types (mode "types": every relationship type token but the
        lexical-graph ones; mode "property": the type property's values, all in use); ``fresh``
        asks the database even if the cache holds them. Scoped: only the types with a relation
        in scope (``selection/scope_names.py``), so an out-of-scope type is unknown and never
        suggested."""
        if self.scope is not None:
            key = self._cache_key("relation_types")
            scoped: set[str] | None = None if fresh else self.graph.data.get(key)
            if scoped is None:
                every = Resolver(self.graph, self.limits).relation_types(fresh=fresh)
                scoped = set(self.scope.keep_types(sorted(every)))
                self.graph.data.put(key, scoped)
            return scoped
        if fresh:
            found = self._read_relation_types()
            self.graph.data.put("relation_types", found)
            return found
        # refreshed in the background once expired: no call on a warm process waits for it
        return self.graph.data.refreshed("relation_types", self._read_relation_types)

    def _read_relation_types(self) -> set[str]:
        if self.schema.relation_mode == "types":
            return {
                str(r["relationship_type"])
                for r in self._read(
                    T.fragment("relation_types", "types", self.schema), {}, name="relation_types"
                )
            } - set(self.schema.structural_relationship_types)
        return {
            str(r["relationship_type"])
            for r in self._read(
                T.fragment("relation_types", "property", self.schema), {}, name="relation_types"
            )
            if r["relationship_type"] is not None
        }

    def _in_use(self, rel_type: str) -> bool:
        """Whether relationships of this (token-validated) type exist: tokens outlive them."""
        if self.schema.relation_mode != "types":
            return True
        relation = T.Relation((rel_type,), "out")

        def load() -> bool:
            query = T.fragment("relation_type_in_use", "query", self.schema, relation=relation)
            rows = self._read(query, {}, name="relation_type_in_use")
            return bool(rows and rows[0]["in_use"])

        # only a "yes" is kept (an unknown type is asked again every question), refreshed in
        # the background once expired (50 ms under load on MuSiQue: not on a call's path)
        return self.graph.data.refreshed(("in_use", rel_type), load, keep=bool)

    def resolve_types(self, types: tuple[str, ...]) -> tuple[list[str], list[str]]:
        """(known types, unknown names): the exact type, else its UPPER_SNAKE form, in use.

        The names are bounded like entity names (``GUIDEDRAG_MAX_STRING`` characters each,
        ``GUIDEDRAG_MAX_LIST`` of them) whichever door they came through (DSL, ``--relation``,
        semantics, MCP), before any is compared or sent."""
        check_list(types, "the relation types", self.limits)
        for t in types:
            check_text(t, "a relation type name", self.limits)
        known = self.relation_types()
        # the KB's own types decide whether to ask again (scoped: a type the KB has outside
        # the scope is not asked again on every question)
        every = known if self.scope is None else Resolver(self.graph, self.limits).relation_types()
        if any(t not in every and relation_type_name(t) not in every for t in types):
            known = self.relation_types(fresh=True)  # never call a type unknown from the cache
        found: list[str] = []
        unknown: list[str] = []
        for t in types:
            candidate = t if t in known else relation_type_name(t)
            if candidate in known and self._in_use(candidate):
                found.append(candidate)
            else:
                unknown.append(t)
        return sorted(set(found)), unknown

    def close_types(self, name: str, limit: int = 5) -> list[str]:
        """Known relation types most like ``name`` (string similarity of the UPPER_SNAKE forms,
        shared words first): the suggestion for a typo, best first; bounded by
        ``rank_similar``'s caps whatever the name's length or the number of types."""
        check_text(name, "a relation type name", self.limits)
        key = self._cache_key("close_types", name, limit)  # a scoped view: its own
        kept: tuple[str, ...] | None = self.graph.data.get(key)
        if kept is None:  # kept like the relation types it is ranked from (same expiry)
            known = self.relation_types()
            kept = tuple(rank_similar(relation_type_name(name), known, limit, split="_"))
            self.graph.data.put(key, kept)
        return list(kept)

    def forgiving_type(self, name: str) -> str | None:
        """The one known relation type whose normalised name (case, separators, plural and verb
        endings) equals ``name``'s — ``orbit`` -> ``ORBITS`` — else None (none, or ambiguous)."""
        key = type_key(name)
        matches = sorted(t for t in self.relation_types() if type_key(t) == key)
        if len(matches) != 1 or not self._in_use(matches[0]):
            return None
        return matches[0]


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SEPARATORS = re.compile(r"[^0-9A-Za-z]+")


def stem(word: str) -> str:
    """A word without its plural or verb ending: ORBITS, ORBITED, ORBITING -> ORBIT."""
    for ending, keep in (("IES", "Y"), ("ING", ""), ("ED", ""), ("ES", ""), ("S", "")):
        if word.endswith(ending) and len(word) - len(ending) >= 3 and not word.endswith("SS"):
            return word[: len(word) - len(ending)] + keep
    return word


def type_key(name: str) -> tuple[str, ...]:
    """A relation type's normalised name: words, upper case, stemmed (``orbit``, ``Orbits``,
    ``ORBITED`` and ``orbits`` all read ``("ORBIT",)``)."""
    words = _SEPARATORS.split(_CAMEL.sub("_", name).upper().replace("_", " "))
    return tuple(stem(w) for w in words if w)


# rank_similar's caps: characters of a name compared, candidates compared per call, and the
# seconds one call may spend comparing (a graph of thousands of long, alike types still
# answers in time; a question asks for at most SUGGESTED_NAMES such calls).
SIMILAR_CHARS = 64
SIMILAR_CANDIDATES = 1_000
SIMILAR_BUDGET_S = 0.15


def rank_similar(
    name: str, candidates: Iterable[str], limit: int, *, split: str | None = None
) -> list[str]:
    """``candidates`` most like ``name``, best first: shared words (when ``split`` cuts names
    into words), then difflib's similarity ratio, then the name; weak matches left out.

    Bounded whatever the input (a suggestion is a courtesy, never a cost): names are compared
    on their first ``SIMILAR_CHARS`` characters, at most ``SIMILAR_CANDIDATES`` candidates
    (those nearest in length) are looked at, difflib runs only where the length ratio and its cheap
    upper bounds leave a match of 0.6 possible, and comparing stops after
    ``SIMILAR_BUDGET_S`` seconds. Ordinary names and graphs stay far inside these caps, so
    their suggestions are the same as without them."""
    target = name.casefold()[:SIMILAR_CHARS]
    words = set(target.split(split)) - {""} if split else set()
    matcher = difflib.SequenceMatcher(None)
    matcher.set_seq1(target)  # a = the name, b = each candidate: the ratio as before the caps
    scored: list[tuple[int, float, str]] = []
    deadline = time.monotonic() + SIMILAR_BUDGET_S
    # Over the cap, the candidates nearest in length are kept (they can score highest).
    nearest = sorted(candidates, key=lambda c: (abs(len(c) - len(name)), c))
    for cand in nearest[:SIMILAR_CANDIDATES]:
        if time.monotonic() > deadline:
            break
        folded = cand.casefold()[:SIMILAR_CHARS]
        shared = len(words & set(folded.split(split))) if split else 0
        matcher.set_seq2(folded)
        total = len(folded) + len(target)
        possible = total > 0 and 2 * min(len(folded), len(target)) / total >= 0.6
        ratio = (
            matcher.ratio()
            if possible and matcher.real_quick_ratio() >= 0.6 and matcher.quick_ratio() >= 0.6
            else 0.0
        )
        if shared and not ratio:
            ratio = matcher.ratio()
        if shared or ratio >= 0.6:
            scored.append((-shared, -ratio, cand))
    scored.sort()
    return [cand for _, _, cand in scored[:limit]]
