"""The KB's entity keys held in-process, so that linking a question asks Neo4j nothing.

A round trip costs more than everything else the linker does (1.1-1.3 ms for ``RETURN 1`` on
loopback, ``db.read_query``), and the linker runs for every bare question. So the keys every
span is matched against — each entity's ``name_key``, alias keys, their ``fold`` variants and
the bases of disambiguated names — are read by one query (``cypher/link_index.cypher``) into a
:class:`~guidedrag_graph.linking.text.KeyIndex`, kept in the context's data cache like resolved
names: reused for ``GUIDEDRAG_RESOLUTION_CACHE_S`` seconds, then read again (``graph.data.clear()``
forgets it at once). The read after expiry runs in the background (``reader.spawn``: a thread
of its own, or a task on an async caller's event loop) while questions are still
answered from the expired index (for up to :data:`STALE_PERIODS` periods), so no question waits
for it; only the first question, and the first after ``clear()``, waits for the read. A load or
a wipe by another tool (or a driver of its own) is therefore seen a moment after the cache
expires; a context opened after it sees it at once. With the cache off (0 s) the
index is never kept, and the linker asks Neo4j per question as before.

Memory is bounded without a setting: a KB with more than :data:`MAX_ENTITIES` entities is not
held (the query then returns only the count, and the answer "too large" is what is cached), and
the linker keeps asking ``cypher/link_entities.cypher`` per question.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from guidedrag_graph.context import GraphContext
from guidedrag_graph.db.reads import FlightLock, spawn
from guidedrag_graph.linking.text import KeyIndex, candidate
from guidedrag_graph.templates import queries as templates

# The most entities held in-process: about 1 KB each (the keys, their dictionaries, their
# word-end prefixes and what a match needs; tracemalloc on MuSiQue's 19,568 entities: 20.2 MB),
# so some 100 MB at the bound, and one read of every entity per cache period. Larger KBs link
# by query, whose cost does not grow with the KB (index seeks and a capped full-text search).
MAX_ENTITIES = 100_000

CACHE_KIND = "link_index"
# An expired index is still answered from, while a fresh one is read in the background, for up
# to this many cache periods (then, or after clear(), the next question waits for the read).
STALE_KIND = "link_index_stale"
STALE_PERIODS = 10


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
        name="link_index",
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
    if held is not None:
        return held.index
    stale: HeldIndex | None = cache.get((STALE_KIND, *key[1:]))
    if stale is not None:
        # Expired but recent: answer from it and read the new one on a thread of its own, so
        # no question waits for the reload (0.4-0.5 s on MuSiQue) once per cache period.
        _reload_in_background(graph, key, mention_cap, max_entities)
        return stale.index
    # Nothing held (first question, or after clear()): one reader per context, and questions
    # arriving together wait for the same load.
    with graph.fact("link_index_lock", FlightLock).held():
        held = cache.get(key)
        if held is None:
            held = _load_and_keep(graph, key, mention_cap, max_entities)
    return held.index


def _load_and_keep(
    graph: GraphContext, key: tuple[str, int, int], mention_cap: int, max_entities: int
) -> HeldIndex:
    held = load_index(graph, mention_cap, max_entities)
    graph.data.put(key, held)
    graph.data.put((STALE_KIND, *key[1:]), held, seconds=STALE_PERIODS * graph.data.seconds)
    return held


def _reload_in_background(
    graph: GraphContext, key: tuple[str, int, int], mention_cap: int, max_entities: int
) -> None:
    busy = graph.fact("link_index_reloading", threading.Lock)
    if not busy.acquire(blocking=False):
        return  # a reload is already on its way

    def reload() -> None:
        try:
            _load_and_keep(graph, key, mention_cap, max_entities)
        except Exception:  # the next question reads it in the foreground, and sees the error
            graph.data.clear(STALE_KIND)
        finally:
            busy.release()

    spawn(reload, name="guidedrag-link-index")
