"""The KB's entity keys held in-process, so that linking a question asks Neo4j nothing.

A round trip costs more than everything else the linker does (1.1-1.3 ms for ``RETURN 1`` on
loopback, ``db.read_query``), and the linker runs for every bare question. So the keys every
span is matched against — each entity's ``name_key``, alias keys, their ``fold`` variants and
the bases of disambiguated names — are read by one query (``cypher/link_index.cypher``) into a
:class:`~guidedrag_graph.link_text.KeyIndex`, kept in the context's data cache like resolved
names: reused for ``GUIDEDRAG_RESOLUTION_CACHE_S`` seconds, then read again (``graph.data.clear()``
forgets it at once). A load or a wipe by another tool (or a driver of its own) is therefore seen
when the cache expires; a context opened after it sees it at once. With the cache off (0 s) the
index is never kept, and the linker asks Neo4j per question as before.

Memory is bounded without a setting: a KB with more than :data:`MAX_ENTITIES` entities is not
held (the query then returns only the count, and the answer "too large" is what is cached), and
the linker keeps asking ``cypher/link_entities.cypher`` per question.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from guidedrag_graph import templates
from guidedrag_graph.context import GraphContext
from guidedrag_graph.link_text import KeyIndex, candidate

# The most entities held in-process: about 650 bytes each (the keys, their dictionaries and
# what a match needs; tracemalloc on MuSiQue's 19,568 entities), so some 65 MB at the bound, and
# one read of every entity per cache period. Larger KBs link by query, whose cost does not grow
# with the KB (index seeks and a capped full-text search).
MAX_ENTITIES = 100_000

CACHE_KIND = "link_index"


@dataclass(frozen=True)
class HeldIndex:
    """What the cache keeps: the index, or None when the KB had too many entities."""

    index: KeyIndex | None
    entities: int


def load_index(
    graph: GraphContext, mention_cap: int, max_entities: int = MAX_ENTITIES
) -> HeldIndex:
    """Read every entity's keys (one READ query) and index them; None above ``max_entities``."""
    rows = graph.read(
        templates.query("link_index", graph.schema),
        {"max_entities": max_entities, "mention_cap": mention_cap},
    )
    total = int(rows[0]["total"]) if rows else 0
    if total > max_entities:
        return HeldIndex(None, total)
    entities = rows[0]["entities"] if rows else []
    return HeldIndex(
        KeyIndex(
            candidate(
                {
                    "name": name,
                    "name_key": key,
                    "alias_keys": aliases,
                    "mentions": mentions,
                    "document_subject": subject,
                }
            )
            for name, key, aliases, mentions, subject in entities
        ),
        total,
    )


def held_index(
    graph: GraphContext, mention_cap: int, max_entities: int = MAX_ENTITIES
) -> KeyIndex | None:
    """The KB's key index from the cache, read when absent or expired; None when the linker
    must ask Neo4j instead (the cache is off, or the KB has more than ``max_entities``)."""
    cache = graph.data
    if cache.seconds <= 0:
        return None
    key = (CACHE_KIND, mention_cap, max_entities)
    held: HeldIndex | None = cache.get(key)
    if held is None:
        # One reader per context: questions arriving together wait for the same load.
        with graph.fact("link_index_lock", threading.Lock):
            held = cache.get(key)
            if held is None:
                held = load_index(graph, mention_cap, max_entities)
                cache.put(key, held)
    return held.index
