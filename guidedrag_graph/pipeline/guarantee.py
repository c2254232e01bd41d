"""Multi-passage recall: every named entity keeps a chunk of its own in the top k.

A comparison ("which film came out first, A or B?") or a bridge question needs both entities'
passages; graded tiers boost the union of the entities, so one entity's chunks can fill the top k
and push the other's out. ``guarantee_entities`` puts back, for each entity none of whose chunks
made the top k, its best chunk by cosine, in place of the lowest-ranked chunk that no other
entity needs. A pure function of the rankings: ``pipeline/auto.py`` runs the per-entity ranking.
"""

from __future__ import annotations

from collections.abc import Sequence

from guidedrag_graph.retrieval import RankedChunk

__all__ = ["guarantee_entities"]


def guarantee_entities(
    top: Sequence[RankedChunk], per_entity: Sequence[Sequence[RankedChunk]], k: int
) -> list[RankedChunk]:
    """``top`` (best first, at most ``k``) with each entity represented: ``per_entity[i]`` is
    entity i's own chunks, best first (its ranking inside ``entity(Ei)``). An entity with no
    chunk gets no place; when every place is an entity's, the rest go without."""
    out = list(top)
    ids = {c.id for c in out}
    needed: list[RankedChunk] = []
    keep: set[str] = set()
    for chunks in per_entity:
        mine = [c for c in chunks if c.id in ids]
        if mine:
            keep.add(mine[0].id)
        elif chunks and chunks[0].id not in {c.id for c in needed}:
            needed.append(chunks[0])
    for chunk in needed:
        if len(out) < k:
            out.append(chunk)
            keep.add(chunk.id)
            continue
        # the lowest-ranked chunk that no entity holds on to gives way
        free = [i for i in range(len(out)) if out[i].id not in keep]
        if free:
            out[free[-1]] = chunk
            keep.add(chunk.id)
    return out
