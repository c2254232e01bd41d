"""Whether a request's chunk filters may run, and whether any chunk passes them, decided from
facts (issue 37): pure, the reads are ``pipeline/filter_reads.py``'s.

A filter naming a property no node in the database has is a typo, not an empty result: it is
refused (``FilterError``) before anything is linked, embedded or searched. A filter no chunk
passes leaves nothing to rank: the request abstains before the question is embedded. Both are
decided here from ``FilterFacts`` — the filter, the schema, and two facts read at the edge: the
database's property keys (asked first, before linking) and whether some chunk passes (asked
after). A fact not yet handed in raises ``MissingFilterFact`` naming it; the edge reads it and
asks again (``selection/fact_rounds.py``). This module imports no driver, database layer or
context (the "Planning is pure" contract in ``pyproject.toml``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from guidedrag_graph.retrieval.filters import ChunkFilter, check_fields
from guidedrag_graph.schema.presets import SchemaMapping

# The facts a filter is decided from: the database's property keys, whether a chunk passes.
FilterFactKind = Literal["keys", "passes"]


class MissingFilterFact(LookupError):
    """The decision needed the fact ``kind``: the edge reads it and asks again."""

    def __init__(self, kind: FilterFactKind) -> None:
        super().__init__(f"chunk filters decided without the fact {kind}")
        self.kind = kind


@dataclass(slots=True)
class FilterFacts:
    """What one request's filters are decided from: the ``chunk_filter`` and ``schema``; read
    at the edge, ``keys`` (every property key a node of the database has) and ``passes``
    (whether some chunk passes the filters)."""

    chunk_filter: ChunkFilter
    schema: SchemaMapping
    keys: set[str] | None = None
    passes: bool | None = None


def fields_known(facts: FilterFacts) -> FilterFacts:
    """``facts`` when every property the filters name is a key some node has; else
    ``FilterError`` naming the unknown ones (``MissingFilterFact("keys")`` until read)."""
    if facts.keys is None:
        raise MissingFilterFact("keys")
    check_fields(facts.chunk_filter, facts.keys, facts.schema)
    return facts


def nothing_passes(facts: FilterFacts) -> bool:
    """Whether the request abstains because no chunk passes its filters
    (``MissingFilterFact("passes")`` until read)."""
    if facts.passes is None:
        raise MissingFilterFact("passes")
    return not facts.passes
