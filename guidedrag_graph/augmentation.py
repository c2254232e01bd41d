"""Augmentation: the prompt = question + semantics + chunks + triplets + entity descriptions.

Paper §3.4: the LLM sees the chunks the selection allowed, each with its id and document so it
can cite them, and the relational triplets among the selected entities (read from the graph by
``cypher/triplets.cypher``), which carry the structure that plain chunk text loses. Templates
differ per question type: factoid asks for a short answer, open for a synthesis, relational puts
the triplets first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from guidedrag_graph.context import GraphContext
from guidedrag_graph.retrieval import RankedChunk
from guidedrag_graph.schema.presets import name_key
from guidedrag_graph.semantics import Semantics
from guidedrag_graph.templates import queries as templates

if TYPE_CHECKING:
    from guidedrag_graph.selection.scope import CompiledScope

SYSTEM_PROMPT = (
    "You answer questions using ONLY the context chunks given. Every claim must cite the id of "
    "the chunk it comes from in square brackets, e.g. [chunk-id]. If the chunks do not contain "
    "the answer, say that you do not know. Do not cite ids that are not in the context."
)

INSTRUCTIONS: dict[str, str] = {
    "factoid": "Answer in one short sentence (a name, date or number where possible), "
    "citing the chunk id(s) that state it.",
    "open": "Write a concise synthesis (3-6 sentences) that draws on several chunks, citing "
    "each chunk id you use.",
    "relational": "Use the relations between the entities to connect the facts step by step, "
    "then answer briefly, citing the chunk id(s) for each step.",
}


@dataclass(frozen=True)
class Triplet:
    """``(head)-[type]->(tail)`` from the graph; ``predicate`` is the original relation text."""

    head: str
    type: str
    tail: str
    predicate: str | None = None
    source_chunk: str | None = None

    def __str__(self) -> str:
        return f"({self.head})-[{self.type}]->({self.tail})"


@dataclass(frozen=True)
class EntityNote:
    name: str
    type: str | None
    description: str


@dataclass
class AugmentedPrompt:
    """The messages we send, plus what they were built from (for citations and reports)."""

    question: str
    template: str
    system: str
    user: str
    chunks: list[RankedChunk]
    triplets: list[Triplet] = field(default_factory=list)
    entities: list[EntityNote] = field(default_factory=list)
    cypher: dict[str, str] = field(default_factory=dict)

    @property
    def messages(self) -> list[dict[str, str]]:
        return [{"role": "system", "content": self.system}, {"role": "user", "content": self.user}]

    @property
    def text(self) -> str:
        """The whole prompt as one text (what ``guidedrag ask`` prints without an LLM)."""
        return f"[system]\n{self.system}\n\n[user]\n{self.user}"

    @property
    def chunk_ids(self) -> list[str]:
        return [c.id for c in self.chunks]

    @property
    def token_estimate(self) -> int:
        return estimate_tokens(self.system) + estimate_tokens(self.user) + 8


def estimate_tokens(text: str) -> int:
    """≈ tokens for English-like text (4 characters per token, the usual BPE average)."""
    return (len(text) + 3) // 4


def format_semantics(semantics: Semantics | None) -> str:
    if semantics is None:
        return "(none given)"
    parts = [f"question type: {semantics.question_type}", f"complexity: C{semantics.complexity}"]
    if semantics.entities:
        parts.append("entities: " + ", ".join(semantics.entities))
    if semantics.relations:
        parts.append("relations: " + ", ".join(semantics.relations))
    if semantics.relational:
        parts.append("relational: yes")
    if semantics.categories:
        parts.append("categories: " + ", ".join(semantics.categories))
    if semantics.documents:
        parts.append("documents: " + ", ".join(semantics.documents))
    if semantics.date_from or semantics.date_to:
        parts.append(f"dates: {semantics.date_from or '…'} – {semantics.date_to or '…'}")
    return "; ".join(parts)


def build_prompt(
    question: str,
    chunks: Sequence[RankedChunk],
    *,
    semantics: Semantics | None = None,
    template: str = "factoid",
    triplets: Sequence[Triplet] = (),
    entities: Sequence[EntityNote] = (),
) -> AugmentedPrompt:
    """Assemble the prompt from parts already fetched (pure; no database)."""
    if template not in INSTRUCTIONS:
        raise ValueError(f"unknown prompt template {template!r}; use one of {sorted(INSTRUCTIONS)}")
    context = []
    for chunk in chunks:
        source = chunk.document_title or chunk.document_id or "unknown document"
        context.append(f"[{chunk.id}] (document: {source})\n{chunk.text.strip()}")
    sections: list[str] = []
    triplet_text = "\n".join(
        f"- {t}" + (f'  "{t.predicate}"' if t.predicate and t.predicate != t.type else "")
        for t in triplets
    )
    entity_text = "\n".join(
        f"- {e.name}" + (f" ({e.type})" if e.type else "") + f": {e.description}" for e in entities
    )
    relations_first = template == "relational"
    if relations_first and triplet_text:
        sections.append(f"Relations between the selected entities:\n{triplet_text}")
    sections.append("Context chunks:\n\n" + ("\n\n".join(context) if context else "(none)"))
    if not relations_first and triplet_text:
        sections.append(f"Relations between the selected entities:\n{triplet_text}")
    if entity_text:
        sections.append(f"Entities:\n{entity_text}")
    user = (
        f"Question: {question}\n"
        f"Semantics: {format_semantics(semantics)}\n\n"
        + "\n\n".join(sections)
        + f"\n\nInstructions: {INSTRUCTIONS[template]}"
    )
    return AugmentedPrompt(
        question=question,
        template=template,
        system=SYSTEM_PROMPT,
        user=user,
        chunks=list(chunks),
        triplets=list(triplets),
        entities=list(entities),
    )


class Augmenter:
    """Reads triplets and entity descriptions for the selected entities, then builds the prompt."""

    def __init__(
        self, graph: GraphContext, *, max_triplets: int = 50, max_entities: int = 20
    ) -> None:
        self.graph = graph
        self.max_triplets = max_triplets
        self.max_entities = max_entities

    def _params(self, chunks: Sequence[RankedChunk], semantics: Semantics | None) -> dict[str, Any]:
        keys = [name_key(e) for e in (semantics.entities if semantics else ())]
        return {"chunk_ids": [c.id for c in chunks], "entity_keys": keys}

    def graph_context(
        self,
        chunks: Sequence[RankedChunk],
        semantics: Semantics | None,
        scope: CompiledScope | None = None,
    ) -> tuple[list[Triplet], list[EntityNote], str]:
        """The triplets among the selected entities and their descriptions, in one query
        (``cypher/augmentation.cypher``), and that query's text.

        With a trusted ``scope`` the scope's prelude goes first and the ``scoped`` variant
        keeps the prompt inside it: entities mentioned by in-scope chunks only, and a triplet
        only when its evidence chunk is in scope or, having none, when both its endpoints are
        such entities (docs/security.md, "What a scope hides"). A scope that holds the whole
        KB reads as none (the same query and prompt as unscoped)."""
        if scope is None or scope.whole:
            query = templates.query("augmentation", self.graph.schema)
            scope_params: dict[str, Any] = {}
        else:
            query = (
                scope.prelude
                + "\n"
                + templates.fragment(
                    "augmentation", "query", self.graph.schema, variant={"scope": "scoped"}
                )
            )
            scope_params = dict(scope.params)
        params = {
            **scope_params,
            **self._params(chunks, semantics),
            "structural_types": sorted(self.graph.schema.structural_relationship_types),
            "triplet_limit": self.max_triplets,
            "entity_limit": self.max_entities,
        }
        rows = self.graph.read(query, params, name="triplets")
        row = rows[0] if rows else {"triplets": [], "entities": []}
        triplets = [
            Triplet(
                head=str(r["head"]),
                type=str(r["type"]),
                tail=str(r["tail"]),
                predicate=None if r.get("predicate") is None else str(r["predicate"]),
                source_chunk=None if r.get("source_chunk") is None else str(r["source_chunk"]),
            )
            for r in row["triplets"]
            if r.get("head") is not None and r.get("tail") is not None
        ]
        notes = [
            EntityNote(
                name=str(r["name"]),
                type=None if r.get("type") is None else str(r["type"]),
                description=str(r["description"]),
            )
            for r in row["entities"]
        ]
        return triplets, notes, query

    def augment(
        self,
        question: str,
        chunks: Sequence[RankedChunk],
        *,
        semantics: Semantics | None = None,
        template: str | None = None,
        scope: CompiledScope | None = None,
    ) -> AugmentedPrompt:
        """The prompt for ``chunks``; ``scope`` (the call's trusted scope, compiled) keeps its
        triplets and entity notes inside it."""
        template = template or (
            "relational"
            if semantics and semantics.relational
            else (semantics.question_type if semantics else "factoid")
        )
        triplets, notes, query = self.graph_context(chunks, semantics, scope)
        prompt = build_prompt(
            question,
            chunks,
            semantics=semantics,
            template=template,
            triplets=triplets,
            entities=notes,
        )
        prompt.cypher = {"augmentation": query}
        return prompt
