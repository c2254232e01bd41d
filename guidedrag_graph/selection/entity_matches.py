"""Which entities a batch of names means, decided from the rows read and the scope's answer
(issue 37): pure, the reads are the ``Resolver``'s.

Entity names resolve in tiers (``cypher/resolve_entities.cypher``): exact name, id and
``name_key`` in one read, then the alias tier (a scan of every entity) only when some name
matched nothing in the first; each name means its lowest matching tier. Scoped
(``selection/scope_names.py``), each read's rows are narrowed to the entities an in-scope chunk
mentions *before* either step, so a name that is an in-scope alias and an out-of-scope exact
name means the alias, and a name found only outside the scope reads as unknown.

What to read next, which rows the scope keeps, which tier wins and what the warm state keeps
are decided here from facts handed in (``EntityFacts``: each read's rows, and which of their ids
are in scope). A fact not yet handed in raises ``MissingEntityFact`` naming it; the edge
(``Resolver._fetch_entity_ids``) reads it — the query, or the scope's answer: a held scope
answers from memory, one too large to hold sends ``scope_names_check`` — and asks again, so the
reads go out in the order a resolver deciding as it read sent them. This module imports no
driver, database layer or context (the "Planning is pure" contract in ``pyproject.toml``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

Row = dict[str, Any]  # a row as read: columns n (batch reads only), tier, id
# The reads of a batch (``cypher/resolve_entities.cypher``'s fragments): first tiers, aliases.
EntityRead = Literal["query", "alias"]
ALIAS_TIER = 4
# What the warm state keeps for a name: its ids ("entity"; scoped, also [] for a name the KB
# has only outside the scope), or the KB version it was found unknown at ("unknown").
CacheEntry = tuple[Literal["entity", "unknown"], str, Any]


class MissingEntityFact(LookupError):
    """A decision needed a fact it was not handed: ``kind`` "rows" (the ``read``'s rows) or
    "in_scope" (which of ``ask``, the ids of that read's rows, are in scope). The edge reads it
    and asks again (as ``resolution.MissingNameFact``)."""

    def __init__(
        self, kind: Literal["rows", "in_scope"], read: EntityRead, ask: tuple[str, ...] = ()
    ) -> None:
        # the ids are not named: a message must not carry an out-of-scope entity's id anywhere
        what = f"which of {len(ask)} ids are in scope" if kind == "in_scope" else "its rows"
        super().__init__(f"entity ids decided without the {read!r} read's fact: {what}")
        self.kind = kind
        self.read = read
        self.ask = ask


@dataclass
class EntityFacts:
    """What one batch's entity ids are decided from.

    ``names``: the batch (a row's ``n`` is a position in it); ``scoped``: whether a scope
    narrows the answer; ``version``: the KB's version read before the names were (None: an
    unknown name is not kept); ``rows``: each read's rows as returned (columns n, tier, id);
    ``in_scope``: per read, the scope's answer for exactly ``scope_asks(rows[read])``."""

    names: list[str]
    scoped: bool = False
    version: Any = None
    rows: dict[EntityRead, list[Row]] = field(default_factory=dict)
    in_scope: dict[EntityRead, frozenset[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class EntityIds:
    """A batch decided: ``ids`` per name (in scope when scoped; [] for none), and ``cache``:
    what the warm state keeps, in the order the names were given."""

    ids: dict[str, list[str]]
    cache: tuple[CacheEntry, ...]


def decide_entity_ids(facts: EntityFacts) -> EntityIds:
    """Each name's ids and the cache entries, from ``facts``; ``MissingEntityFact`` for the
    first fact lacking, in read order: first tiers, their scope answer, aliases (only when a
    name kept no first-tier row), their scope answer."""
    names = facts.names
    by_name: dict[int, list[Row]] = {}
    for row in _kept_rows(facts, "query"):
        by_name.setdefault(int(row["n"]), []).append(row)
    sent: list[EntityRead] = ["query"]
    if len(by_name) < len(names):
        sent.append("alias")
        for row in _kept_rows(facts, "alias"):
            n = int(row["n"])
            if n not in by_name or int(by_name[n][0]["tier"]) == ALIAS_TIER:
                by_name.setdefault(n, []).append(row)
    # The names the KB has at all, in scope or not: never an answer, only what is kept.
    existing = {names[int(r["n"])] for read in sent for r in facts.rows[read]}
    ids = {name: lowest_tier(by_name.get(i, [])) for i, name in enumerate(names)}
    cache: list[CacheEntry] = []
    for name, found in ids.items():
        # Only what was found is kept; scoped, also a name the KB has outside the scope (its
        # being outside is an answer about the data like any other, kept as long).
        if found or (facts.scoped and name in existing):
            cache.append(("entity", name, found))
        elif facts.version is not None:
            cache.append(("unknown", name, facts.version))
    return EntityIds(ids, tuple(cache))


def _kept_rows(facts: EntityFacts, read: EntityRead) -> list[Row]:
    """The ``read``'s rows the scope keeps (all of them unscoped)."""
    rows = facts.rows.get(read)
    if rows is None:
        raise MissingEntityFact("rows", read)
    if not facts.scoped or not rows:
        return list(rows)
    asks = scope_asks(rows)
    in_scope = facts.in_scope.get(read) if asks else frozenset()
    if in_scope is None:
        raise MissingEntityFact("in_scope", read, asks)
    return narrowed(rows, in_scope)


def scope_asks(rows: Iterable[Row]) -> tuple[str, ...]:
    """The ids of ``rows`` a scope is asked about (each once, in order; a null id never)."""
    return tuple(dict.fromkeys(str(r["id"]) for r in rows if r["id"] is not None))


def narrowed(rows: Iterable[Row], in_scope: Collection[str]) -> list[Row]:
    """``rows`` whose id is in ``in_scope`` (the scope's answer for their ids), in order."""
    return [r for r in rows if r["id"] is not None and str(r["id"]) in in_scope]


def lowest_tier(rows: Iterable[Row]) -> list[str]:
    """The ids of the lowest tier among ``rows`` (sorted, each once); [] for no rows."""
    rows = list(rows)
    if not rows:
        return []
    best = min(int(r["tier"]) for r in rows)
    return sorted({str(r["id"]) for r in rows if int(r["tier"]) == best and r["id"] is not None})
