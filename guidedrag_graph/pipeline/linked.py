"""What ``auto`` ranks with when the caller states less: linked entities, forgiving relations.

A bare question (a GraphRAG app sends nothing else) gets its entities from the entity linker
(:class:`~guidedrag_graph.linking.entities.EntityLinker`), so it ranks with the same graded tiers
as a question with stated semantics. Only names the *user* states can make the pipeline abstain:
a linked name the KB cannot resolve is dropped, and an unknown relation type under ``auto`` is
read as the one relation type whose normalised name matches it (``orbit`` -> ``ORBITS``) or its
tier is dropped, each with a note. Hard steering stays strict (the paper's precision result).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from guidedrag_graph.context import GraphContext
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.identifiers import quote_name
from guidedrag_graph.linking.entities import EntityLinker, Link
from guidedrag_graph.linking.name_spans import unknown_names
from guidedrag_graph.linking.relations import RelationLink
from guidedrag_graph.linking.text import TOKEN
from guidedrag_graph.pipeline.question_relations import question_relations, relation_vocabulary
from guidedrag_graph.schema.presets import name_key
from guidedrag_graph.selection import Selector
from guidedrag_graph.selection.resolution import SUGGESTED_NAMES
from guidedrag_graph.selection.scope_names import ScopeNames
from guidedrag_graph.semantics import Semantics

# How many linked entities a bare question ranks with: the linker's best spans, as
# `ask --auto-semantics` has always taken (a question names one or two subjects; more links are
# mostly common nouns that happen to be entity names).
LINKED_ENTITIES = 2
_PARENTHETICAL = re.compile(r"\s*\([^()]*\)\s*$")


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
    relations: tuple[RelationLink, ...] = ()
    unknown: tuple[str, ...] = ()  # name-like spans no entity link covers

    def linked_dicts(self) -> tuple[dict[str, str], ...]:
        """What the result reports as ``linked``: entities, then relation types."""
        return tuple(n.to_dict() for n in self.linked) + tuple(r.to_dict() for r in self.relations)


def link_semantics(
    graph: GraphContext,
    selector: Selector,
    question: str,
    semantics: Semantics | None,
    *,
    embedder: Embedder | None = None,
    relations: str = "auto",
) -> AutoSemantics:
    """Entities linked from ``question`` added to ``semantics`` (which names none); linked
    names the KB does not resolve are left out, so they can never cause an abstention.

    With entities linked and no relation stated, the relation types the question asks about
    are linked too (``relations``: ``auto`` where the graph's vocabulary is typed, ``on``,
    ``off``; ``linking/relations.py``), each feeding the ``A_rel`` tier."""
    scope = selector.resolver.scope
    found = EntityLinker(graph, scope=scope).link(question)
    unknown = tuple(unknown_names(question, _char_ranges(question, found)))
    links = [lk for lk in found if not lk.alternate]
    if not links:
        note = "auto: the entity linker found no entity"
        return AutoSemantics(semantics, (), (note,), unknown=unknown)
    resolution = selector.resolution([lk.name for lk in links], diagnose=False)
    kept = [lk for lk in links if resolution.ids.get(lk.name)][:LINKED_ENTITIES]
    if not kept:
        note = "auto: no linked entity resolved in the KB"
        return AutoSemantics(semantics, (), (note,), unknown=unknown)
    names = tuple(lk.name for lk in kept)
    base = semantics or Semantics()
    update: dict[str, Any] = {"entities": names, "complexity": 2 if len(names) > 1 else 1}
    rel_links: tuple[RelationLink, ...] = ()
    if relations != "off" and not base.relations:
        rel_links = tuple(
            question_relations(
                graph,
                question,
                _char_ranges(question, kept),
                embedder,
                force=relations == "on",
                scope=scope,
            )
        )
    if rel_links:
        update |= {"relations": tuple(r.relation for r in rel_links), "relational": True}
    linked = base.model_copy(update=update)
    names_linked = tuple(LinkedName(lk.span.text, lk.name, lk.kind) for lk in kept)
    return AutoSemantics(linked, names_linked, (), rel_links, unknown)


def link_beside_stated(
    graph: GraphContext, selector: Selector, question: str, semantics: Semantics
) -> AutoSemantics:
    """The stated entities, plus the proper names the question writes beside them (a
    comparison's other film, a bridge question's second subject), up to the ``LINKED_ENTITIES``
    a bare question ranks with. A link whose span is part of a stated name is that name, and is
    left out; so is a lower-case span ("place of birth" -> an entity titled "Place of birth"):
    the caller named the subject, a common noun beside it is no second one. The added names
    are resolved first, so they never cause an abstention."""
    stated = [name_key(e) for e in semantics.entities]
    room = LINKED_ENTITIES - len(stated)
    if room <= 0:
        return AutoSemantics(semantics)
    links = [
        lk
        for lk in EntityLinker(graph, scope=selector.resolver.scope).link(question)
        if not lk.alternate
        and lk.span.proper
        and name_key(lk.name) not in stated
        and not any(k in s for k in lk.span.keys for s in stated)
    ]
    if not links:
        return AutoSemantics(semantics)
    resolution = selector.resolution([lk.name for lk in links], diagnose=False)
    kept = [lk for lk in links if resolution.ids.get(lk.name)][:room]
    if not kept:
        return AutoSemantics(semantics)
    names = tuple(semantics.entities) + tuple(lk.name for lk in kept)
    update: dict[str, Any] = {"entities": names}
    if "complexity" not in semantics.model_fields_set:
        update["complexity"] = 2
    return AutoSemantics(
        semantics.model_copy(update=update),
        tuple(LinkedName(lk.span.text, lk.name, lk.kind) for lk in kept),
        (
            "auto: named in the question beside the stated entities: "
            + ", ".join(lk.name for lk in kept),
        ),
    )


def beside_stated(graph: GraphContext, mode: str) -> bool:
    """Whether names beside stated entities join them (``link_beside_stated``): ``auto`` where
    the graph's relation vocabulary is typed, the rule that links relation types
    (``links_relations``). A typed graph's entities are its subjects (one per page, item or
    record), so a second name the question writes is a second subject to compare or bridge; a
    free-text graph's entities are the noun phrases an extractor found, so names beside the
    stated subject are mostly incidental (MuSiQue: its stated rows lost 2 points of all-gold
    recall with them)."""
    if mode == "off":
        return False
    # judged once per counts read (relation_vocabulary): walking MuSiQue's 5,034 types on
    # every stated call was 0.5-2 ms of its CPU
    return mode == "on" or relation_vocabulary(graph)[1]


def relations_beside_stated(
    graph: GraphContext,
    question: str,
    semantics: Semantics,
    embedder: Embedder | None,
    relations: str = "auto",
    scope: ScopeNames | None = None,
) -> AutoSemantics:
    """Stated entities and no stated relation: the relation types the question asks about,
    linked as for a bare question (``question_relations``), outside the stated names' words."""
    if relations == "off" or semantics.relations or not semantics.entities:
        return AutoSemantics(semantics)
    excluded = stated_ranges(question, semantics.entities)
    found = question_relations(
        graph, question, excluded, embedder, force=relations == "on", scope=scope
    )
    if not found:
        return AutoSemantics(semantics)
    update = {"relations": tuple(r.relation for r in found), "relational": True}
    return AutoSemantics(semantics.model_copy(update=update), (), (), tuple(found))


def stated_ranges(question: str, names: Sequence[str]) -> list[tuple[int, int]]:
    """Where the question writes each stated name, or that name without its parenthetical
    (case-insensitive): the words relation linking leaves alone."""
    folded = question.casefold()
    out: list[tuple[int, int]] = []
    for name in names:
        for form in dict.fromkeys((name, _PARENTHETICAL.sub("", name))):
            key = form.casefold().strip()
            start = folded.find(key) if key else -1
            while start >= 0:
                out.append((start, start + len(key)))
                start = folded.find(key, start + 1)
    return out


def _char_ranges(question: str, links: Sequence[Link]) -> list[tuple[int, int]]:
    """The character ranges of the links' spans (a span counts words of ``TOKEN``)."""
    tokens = list(TOKEN.finditer(question))
    return [
        (tokens[lk.span.start].start(), tokens[lk.span.end - 1].end())
        for lk in links
        if lk.span.end <= len(tokens)
    ]


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


def auto_semantics(
    graph: GraphContext,
    selector: Selector,
    embedder: Embedder,
    question: str,
    semantics: Semantics | None,
    link: bool,
) -> AutoSemantics:
    """``auto``'s semantics: stated entities as given (with the proper names the question
    writes beside them on a typed graph, ``beside_stated``), else linked from the question
    (unless ``link`` is off); the relation types a bare question asks about on a typed graph;
    unknown relation types forgiven."""
    settings = graph.settings
    linked = AutoSemantics(semantics)
    if semantics is not None and semantics.entities:
        if link and beside_stated(graph, settings.link_beside_stated):
            linked = link_beside_stated(graph, selector, question, semantics)
        if link and linked.semantics is not None:
            more = relations_beside_stated(
                graph,
                question,
                linked.semantics,
                embedder,
                settings.link_relations,
                selector.resolver.scope,
            )
            linked = AutoSemantics(
                more.semantics, linked.linked, linked.notes, more.relations, linked.unknown
            )
    elif link:
        linked = link_semantics(
            graph,
            selector,
            question,
            semantics,
            embedder=embedder,
            relations=settings.link_relations,
        )
    forgiven = forgive_relations(selector, linked.semantics)
    return AutoSemantics(
        forgiven.semantics,
        linked.linked,
        linked.notes + forgiven.notes,
        linked.relations,
        linked.unknown,
    )
