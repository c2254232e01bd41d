"""Entity taggers: find the KB entities a question names (paper §5.1; docs/entity-linking.md).

Used by the GraphRAG baseline and by users who state no semantics (``--auto-semantics``).
Every tagger returns names **that exist in the KB**, best first:

* ``linker`` (the default) — the question's word n-grams looked up against entity names and
  aliases by index seeks, longest span first, rarer entities first (``linking/entities.py``);
* ``fulltext`` — Lucene over entity names/aliases; keeps entities whose whole normalised name
  (or alias) occurs in the question, longest first (no model needed, fast);
* ``embedding`` — cosine between the question and entity-name embeddings (vector index
  ``entity_name_embedding``, migration V0006; fill it with ``guidedrag kb embed-entities``);
* ``llm`` — the LLM lists the entities as JSON, resolved by normalised name or alias;
* ``hybrid`` — the LLM's entities, each matched to the nearest entity name by embedding
  (so "NYC" can still find "New York City").
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Protocol

from guidedrag_graph.context import GraphContext
from guidedrag_graph.embeddings import Embedder, embedder_for
from guidedrag_graph.errors import ConfigurationError, GenerationError
from guidedrag_graph.linking.entities import EntityLinker
from guidedrag_graph.schema.presets import name_key
from guidedrag_graph.templates import queries as templates
from guidedrag_graph.vocabulary import TAGGERS

_LUCENE_SPECIAL = re.compile(r'[+\-&|!(){}\[\]^"~*?:\\/]')

LLM_TAGGER_PROMPT = (
    "List the named entities (people, places, organisations, works, events, ...) that the "
    "question mentions, exactly as written in the question. Answer with JSON only, in the form "
    '{"entities": ["...", "..."]}.'
)


class Tagger(Protocol):
    name: str

    def tag(self, question: str) -> list[str]: ...


def _words(text: str) -> str:
    return f" {name_key(re.sub(r'[^0-9A-Za-z]+', ' ', text))} "


class FulltextTagger:
    """Lucene candidates, kept when their whole name/alias occurs in the question."""

    name = "fulltext"

    def __init__(self, graph: GraphContext) -> None:
        self.graph = graph

    def tag(self, question: str) -> list[str]:
        text = _LUCENE_SPECIAL.sub(" ", question).lower().strip()
        if not text:
            return []
        rows = self.graph.read(
            templates.query("tag_fulltext", self.graph.schema),
            {
                "index_name": self.graph.settings.entity_fulltext_index_name,
                "query_text": text,
                "limit": 50,
            },
        )
        words = _words(question)
        found: list[tuple[int, float, str]] = []
        for row in rows:
            keys = [row.get("name_key") or name_key(str(row["name"])), *row["alias_keys"]]
            longest = max(
                (len(k) for k in keys if k and _words(k) in words),
                default=0,
            )
            if longest:
                found.append((longest, float(row["score"]), str(row["name"])))
        found.sort(key=lambda t: (-t[0], -t[1], t[2]))
        names: list[str] = []
        for _, _, name in found:
            # Drop names contained in a longer name already kept ("York" inside "New York").
            if any(_words(name) in _words(kept) for kept in names):
                continue
            names.append(name)
        return names


class EmbeddingTagger:
    """Nearest entity names to the question (or to given phrases) by embedding cosine."""

    name = "embedding"

    def __init__(
        self, graph: GraphContext, embedder: Embedder | None = None, *, limit: int = 5
    ) -> None:
        self.graph = graph
        self.settings = graph.settings
        self._embedder = embedder
        self.limit = limit

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = embedder_for(self.settings)
        return self._embedder

    def nearest(self, vector: Sequence[float], limit: int) -> list[tuple[str, float]]:
        rows = self.graph.read(
            templates.query("tag_embedding", self.graph.schema),
            {
                "index_name": self.settings.entity_vector_index_name,
                "query_vector": [float(x) for x in vector],
                "limit": int(limit),
            },
        )
        return [(str(r["name"]), float(r["cosine"])) for r in rows]

    def tag(self, question: str) -> list[str]:
        vector = self.embedder.embed_queries([question])[0]
        return [
            name
            for name, cosine in self.nearest(vector, self.limit)
            if cosine >= self.settings.tagger_min_cosine
        ]

    def match(self, phrases: Sequence[str]) -> list[str]:
        """Each phrase's nearest entity name (phrases embedded as passages, like names)."""
        if not phrases:
            return []
        vectors = self.embedder.embed_passages(list(phrases))
        out: list[str] = []
        for vector in vectors:
            hits = self.nearest(vector, 1)
            if hits and hits[0][1] >= self.settings.tagger_min_cosine and hits[0][0] not in out:
                out.append(hits[0][0])
        return out


class LLMTagger:
    """The LLM names the entities (JSON); names are resolved against the KB."""

    name = "llm"

    def __init__(self, graph: GraphContext, client: Any | None = None) -> None:
        from guidedrag_graph.generation import Generator

        self.graph = graph
        self.settings = graph.settings
        self.generator = Generator(graph.settings, client)

    def raw_tags(self, question: str) -> list[str]:
        """The LLM's entity strings, before matching them to the KB."""
        response = self.generator.client.chat.completions.create(
            model=self.settings.llm_model,
            messages=[
                {"role": "system", "content": LLM_TAGGER_PROMPT},
                {"role": "user", "content": question},
            ],
            temperature=0.0,
            response_format={"type": "json_object"},
        )
        content = response.choices[0].message.content if response.choices else None
        return parse_llm_tags(content or "")

    def resolve(self, names: Sequence[str]) -> list[str]:
        if not names:
            return []
        rows = self.graph.read(
            templates.query("tag_resolve", self.graph.schema),
            {"keys": [name_key(n) for n in names]},
        )
        out: list[str] = []
        for row in rows:
            if row["name"] is not None and row["name"] not in out:
                out.append(str(row["name"]))
        return out

    def tag(self, question: str) -> list[str]:
        return self.resolve(self.raw_tags(question))


class HybridTagger:
    """LLM entity strings matched to KB names by embedding (exact matches first)."""

    name = "hybrid"

    def __init__(self, llm: LLMTagger, embedding: EmbeddingTagger) -> None:
        self.llm = llm
        self.embedding = embedding

    def tag(self, question: str) -> list[str]:
        raw = self.llm.raw_tags(question)
        exact = self.llm.resolve(raw)
        matched = self.embedding.match(raw)
        return list(dict.fromkeys([*exact, *matched]))


def parse_llm_tags(content: str) -> list[str]:
    """``{"entities": [...]}`` (or a bare list), tolerating a fenced code block around it."""
    text = content.strip()
    fence = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    if fence:
        text = fence.group(1).strip()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GenerationError(
            f'the LLM tagger expected JSON like {{"entities": [...]}}, got {content[:120]!r}; '
            f"use a model that follows JSON instructions or another tagger (--tagger fulltext)"
        ) from exc
    items = data.get("entities", []) if isinstance(data, dict) else data
    if not isinstance(items, list):
        return []
    return [str(x).strip() for x in items if isinstance(x, str | int) and str(x).strip()]


def tagger_for(
    name: str,
    graph: GraphContext,
    *,
    embedder: Embedder | None = None,
    llm_client: Any | None = None,
) -> Tagger:
    """A tagger by name (one of ``vocabulary.TAGGERS``)."""
    if name == "linker":
        return EntityLinker(graph)
    if name == "fulltext":
        return FulltextTagger(graph)
    if name == "embedding":
        return EmbeddingTagger(graph, embedder)
    if name == "llm":
        return LLMTagger(graph, llm_client)
    if name == "hybrid":
        return HybridTagger(LLMTagger(graph, llm_client), EmbeddingTagger(graph, embedder))
    raise ConfigurationError(f"unknown tagger {name!r}; choose one of {', '.join(TAGGERS)}")
