"""Whether a property scope can run inside the vector index's filtered ``SEARCH`` (issue 35).

Neo4j's ``SEARCH ... WHERE`` (checked on 2026.08.1; GQL status 42I73 and 22ND3) takes only
property predicates joined by ``AND``, on properties the index declares ``WITH [c.p, ...]``, and
per property either one exact value (``=``, ``IN``) or one range (at most one lower and one
upper bound: ``>``/``>=`` and ``<``/``<=``, or a chained ``a <= c.p <= b``); ``OR``, ``NOT``,
``<>``, ``CONTAINS`` and two bounds on the same side are refused with a syntax error, and an
undeclared property with ``PropertyNotFound``. A filter (neo4j-graphrag syntax, the scope's and
the request's) that fits is put into auto's U ``SEARCH`` as it is compiled
(``selection/chunk_filters.py``: the same condition text and ``$scpf_N``/``$flt_N``
parameters), so the in-scope chunk ids need not be listed for it; anything else keeps the
id-list or exact path (``facts.scope_in_tiers``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# neo4j-graphrag operators the SEARCH's WHERE takes, and the bound each one sets on a property.
_EXACT = ("$eq", "$in")
_LOWER = ("$gt", "$gte")
_UPPER = ("$lt", "$lte")


def search_properties(*filters: Mapping[str, Any] | None) -> frozenset[str] | None:
    """The chunk properties ``filters`` (ANDed) test, when all of them together are a
    conjunction the ``SEARCH`` clause's ``WHERE`` accepts; None when they are not (an ``$or``,
    a negation, a substring, two bounds on one side of a property, an exact value beside a
    range). The caller then checks that the index declares each property."""
    bounds: dict[str, list[str]] = {}
    for one in filters:
        if one is not None and not _collect(one, bounds):
            return None
    for kinds in bounds.values():
        exact = kinds.count("exact")
        if exact and len(kinds) > 1:
            return None
        if kinds.count("lower") > 1 or kinds.count("upper") > 1:
            return None
    return frozenset(bounds) or None


def _collect(node: Mapping[str, Any], bounds: dict[str, list[str]]) -> bool:
    for key, value in node.items():
        if key.lower() == "$and":
            if not isinstance(value, list) or not all(
                isinstance(item, Mapping) and _collect(item, bounds) for item in value
            ):
                return False
            continue
        if key.startswith("$"):  # $or, or anything else: not a conjunction
            return False
        kinds = bounds.setdefault(key, [])
        if not isinstance(value, Mapping):
            kinds.append("exact")
            continue
        ((op, _),) = value.items()  # the compiler allows one operator per field
        op = op.lower()
        if op in _EXACT:
            kinds.append("exact")
        elif op in _LOWER:
            kinds.append("lower")
        elif op in _UPPER:
            kinds.append("upper")
        elif op == "$between":
            kinds += ["lower", "upper"]
        else:  # $ne, $nin, $like, $ilike
            return False
    return True
