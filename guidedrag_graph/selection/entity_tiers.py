"""Which tiers can be given by their entities instead of their chunks (``auto``, issue 23).

A leaf of ``MENTIONING`` denotes "every chunk that mentions an entity of a set" (its template's
``out=entities`` variant gives the set), so a union of them is the chunks mentioning the union
of the sets, whatever the union's shape. The compiler gives such a tier as its entities and
``cypher/select_mentioned.cypher`` lists its chunks only when listing pays off; a tier too
large to list is then tested by membership (``cypher/retrieve_boost.cypher``).
"""

from __future__ import annotations

from collections.abc import Callable

from guidedrag_graph.schema.presets import SchemaMapping
from guidedrag_graph.selection import nodes as A

# Leaves whose chunks are "every chunk mentioning an entity of a set" (their templates have an
# ``out=entities`` variant giving that set). Under ``auto`` a tier made only of them is compiled
# as its entities (``select_mentioned``), so a tier too large to list is never listed.
MENTIONING = (A.Entity, A.Entities, A.Hop, A.KHop, A.Near)
# The member variable of every listed tier: null (``select_mentioned``'s fragment "none").
NO_MEMBERS = "m_none"


def mentioning_leaves(expr: A.Expr) -> tuple[A.Expr, ...] | None:
    """The leaves of ``expr`` when it is one ``MENTIONING`` leaf or a union of them (each once,
    in written order); None otherwise. Such a selection is the chunks mentioning the union of
    its leaves' entity sets, whatever the shape of the union."""
    leaves = union_leaves(expr, lambda node: isinstance(node, MENTIONING))
    return None if leaves is None else tuple(dict.fromkeys(leaves))


def union_leaves(expr: A.Expr, keep: Callable[[A.Expr], bool]) -> list[A.Expr] | None:
    """The operands of ``expr``'s tree of unions, left to right, when ``keep`` holds for every
    one; None otherwise."""
    leaves: list[A.Expr] = []
    stack: list[A.Expr] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, A.Union):
            stack.extend((node.right, node.left))
        elif keep(node):
            leaves.append(node)
        else:
            return None
    return leaves


def tier_walk_params(schema: SchemaMapping) -> dict[str, str]:
    """The ``$tier_*`` parameters of the rank plugin's walk functions (``walk=plugin``): the
    chunk and entity labels, the mentions type and its direction, as values (strings, which a
    Browser script's ``:param`` lines can set; a map they cannot)."""
    return {
        "tier_chunk_label": schema.chunk_label,
        "tier_entity_label": schema.entity_label,
        "tier_mentions": schema.mentions_type,
        "tier_direction": schema.mentions_direction,
    }
