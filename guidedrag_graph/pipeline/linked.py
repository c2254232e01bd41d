"""What ``auto`` ranks with when the caller states less: linked entities, forgiving relations.

A bare question (a GraphRAG app sends nothing else) gets its entities from the entity linker
(:class:`~guidedrag_graph.linking.EntityLinker`), so it ranks with the same graded tiers as a
question with stated semantics. Only names the *user* states can make the pipeline abstain:
a linked name the KB cannot resolve is dropped, and an unknown relation type under ``auto`` is
read as the one relation type whose normalised name matches it (``orbit`` -> ``ORBITS``) or its
tier is dropped, each with a note. Hard steering stays strict (the paper's precision result).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from guidedrag_graph.context import GraphContext
from guidedrag_graph.identifiers import quote_name
from guidedrag_graph.linking import EntityLinker
from guidedrag_graph.selection import Selector
from guidedrag_graph.selection.resolution import SUGGESTED_NAMES
from guidedrag_graph.semantics import Semantics

# How many linked entities a bare question ranks with: the linker's best spans, as
# `ask --auto-semantics` has always taken (a question names one or two subjects; more links are
# mostly common nouns that happen to be entity names).
LINKED_ENTITIES = 2


@dataclass(frozen=True)
class LinkedName:
    """One entity linked from the question: the span, the entity, how it matched."""

    span: str
    entity: str
    match: str  # exact | alias | variant | qualified

    def to_dict(self) -> dict[str, Any]:
        return {"span": self.span, "entity": self.entity, "match": self.match}


@dataclass(frozen=True)
class AutoSemantics:
    """The semantics ``auto`` ranks with, what was linked, and what was forgiven (notes)."""

    semantics: Semantics | None
    linked: tuple[LinkedName, ...] = ()
    notes: tuple[str, ...] = ()


def link_semantics(
    graph: GraphContext, selector: Selector, question: str, semantics: Semantics | None
) -> AutoSemantics:
    """Entities linked from ``question`` added to ``semantics`` (which names none); linked
    names the KB does not resolve are left out, so they can never cause an abstention."""
    links = [lk for lk in EntityLinker(graph).link(question) if not lk.alternate]
    if not links:
        return AutoSemantics(semantics, (), ("auto: the entity linker found no entity",))
    resolution = selector.resolution([lk.name for lk in links], diagnose=False)
    kept = [lk for lk in links if resolution.ids.get(lk.name)][:LINKED_ENTITIES]
    if not kept:
        return AutoSemantics(semantics, (), ("auto: no linked entity resolved in the KB",))
    names = tuple(lk.name for lk in kept)
    base = semantics or Semantics()
    linked = base.model_copy(update={"entities": names, "complexity": 2 if len(names) > 1 else 1})
    return AutoSemantics(
        linked, tuple(LinkedName(lk.span.text, lk.name, lk.kind) for lk in kept), ()
    )


def forgive_relations(selector: Selector, semantics: Semantics | None) -> AutoSemantics:
    """Each stated relation type the graph lacks: read as the one type with the same
    normalised name, else dropped (its tier with it); a note says which."""
    if semantics is None or not semantics.relations:
        return AutoSemantics(semantics)
    resolver = selector.resolver
    kept: list[str] = []
    notes: list[str] = []
    for name in semantics.relations:
        found, _ = resolver.resolve_types((name,))
        if found:
            kept.append(name)
            continue
        match = resolver.forgiving_type(name)
        if match is not None:
            kept.append(match)
            notes.append(f"auto: relation type {name!r} read as {match!r}")
            continue
        # Only the first few unknown names get suggestions (each scans every known type).
        close = resolver.close_types(name) if len(notes) < SUGGESTED_NAMES else []
        hint = f" (did you mean {', '.join(map(quote_name, close))}?)" if close else ""
        notes.append(
            f"auto: the graph has no relation type {name!r}{hint}; its tier (A_rel) is dropped "
            "instead of abstaining (steering='hard' abstains)"
        )
    if tuple(kept) == tuple(semantics.relations):
        return AutoSemantics(semantics)
    updated = semantics.model_copy(update={"relations": tuple(dict.fromkeys(kept))})
    return AutoSemantics(updated, (), tuple(notes))
