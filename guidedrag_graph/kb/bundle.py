"""KB bundle format v1: the models of its rows, and :class:`Bundle`, a bundle read and resolved.

A bundle is a directory of JSON Lines files (UTF-8, one object per line): ``documents.jsonl``,
``chunks.jsonl``, optional ``entities.jsonl``, ``relations.jsonl``, ``questions.jsonl`` and an
optional ``bundle.json`` manifest. :mod:`~guidedrag_graph.kb.bundle_reader` checks every line,
every cross-reference and every precomputed embedding before the loader writes anything.

Entity references (a chunk's ``entities``, a relation's ``head``/``tail``) are entity ids or
names: an exact id wins, then the case- and whitespace-insensitive name, then an alias. A name
that matches nothing becomes a new entity whose id is ``name_key(name)``.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from guidedrag_graph.schema.presets import PRESETS, name_key, relation_type_name
from guidedrag_graph.semantics import Semantics

FORMAT_NAME: Literal["guidedrag-kb"] = "guidedrag-kb"
FORMAT_VERSION: Literal[1] = 1

Scalar = str | int | float | bool
MetadataValue = Scalar | list[str] | list[int] | list[float] | list[bool] | None

# Relationship types of the lexical graph under every preset: a predicate ("part of", "mentions")
# must never become one of them, or entity relations and structure mix (the loader re-checks a
# custom mapping's own structural types).
RESERVED_RELATION_TYPES = frozenset().union(
    *(p.structural_relationship_types for p in PRESETS.values())
)
RESERVED_PREFIX = "REL_"


def safe_relation_type(predicate: str, reserved: frozenset[str] = RESERVED_RELATION_TYPES) -> str:
    """``relation_type_name`` with structural types prefixed: "part of" -> ``REL_PART_OF``."""
    name = relation_type_name(predicate)
    return RESERVED_PREFIX + name if name in reserved else name


# Properties the loader writes itself; metadata may not overwrite them.
_RESERVED_KEYS = frozenset(
    {"id", "title", "source", "date", "text", "embedding", "position", "index", "document_id",
     "path", "name", "name_key", "aliases", "alias_keys", "type", "description"}
)  # fmt: skip


def _nonblank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _WithMetadata(_Row):
    metadata: dict[str, MetadataValue] = Field(default_factory=dict)

    @field_validator("metadata")
    @classmethod
    def _no_reserved_keys(cls, value: dict[str, MetadataValue]) -> dict[str, MetadataValue]:
        clash = sorted(set(value) & _RESERVED_KEYS)
        if clash:
            raise ValueError(f"metadata keys {clash} clash with properties the loader writes")
        return value


class DocumentRow(_WithMetadata):
    """``documents.jsonl``: ``{"id", "title", "source"?, "date"?, "metadata"?}``."""

    id: str
    title: str
    source: str | None = None
    date: dt.date | None = None

    _check_id = field_validator("id", "title")(_nonblank)


class ChunkRow(_WithMetadata):
    """``chunks.jsonl`` without its embedding (kept apart, as float32, to spare memory)."""

    id: str
    document_id: str
    text: str
    position: int | None = None
    entities: list[str] = Field(default_factory=list)

    _check_id = field_validator("id", "document_id", "text")(_nonblank)


class EntityRow(_Row):
    """``entities.jsonl``: ``{"id"?, "name", "type"?, "description"?, "aliases"?}``."""

    id: str | None = None
    name: str
    type: str | None = None
    description: str | None = None
    aliases: list[str] = Field(default_factory=list)

    _check_name = field_validator("name")(_nonblank)

    @property
    def key(self) -> str:
        return self.id if self.id is not None else name_key(self.name)


class RelationRow(_Row):
    """``relations.jsonl``: ``{"head", "type", "tail", "chunk_id"?}``; type is free text."""

    head: str
    type: str
    tail: str
    chunk_id: str | None = None

    _check = field_validator("head", "type", "tail")(_nonblank)


class Question(_Row):
    """``questions.jsonl`` (evaluation only): a question, its gold chunks and its semantics."""

    id: str
    question: str
    answer: str | None = None
    answerable: bool = True
    semantics: Semantics = Field(default_factory=Semantics)
    gold_chunk_ids: list[str] = Field(default_factory=list)
    all_gold_chunk_ids: list[str] = Field(default_factory=list)
    paraphrases: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    _check = field_validator("id", "question")(_nonblank)

    @model_validator(mode="after")
    def _all_gold_includes_gold(self) -> Question:
        # all_gold is optional in the file; absent means "the gold chunks are all there is".
        if not self.all_gold_chunk_ids and self.gold_chunk_ids:
            object.__setattr__(self, "all_gold_chunk_ids", list(self.gold_chunk_ids))
        return self


class Manifest(BaseModel):
    """Optional ``bundle.json``: what the bundle is, where it came from, how it was embedded."""

    model_config = ConfigDict(extra="allow", frozen=True)

    format: Literal["guidedrag-kb"] = FORMAT_NAME
    version: Literal[1] = FORMAT_VERSION
    name: str | None = None
    description: str | None = None
    license: str | None = None
    embedding_model: str | None = None
    embedding_dimensions: int | None = None


@dataclass(frozen=True)
class Entity:
    """An entity after resolution: declared in ``entities.jsonl`` or created from a reference."""

    id: str
    name: str
    name_key: str
    aliases: tuple[str, ...] = ()
    alias_keys: tuple[str, ...] = ()
    type: str | None = None
    description: str | None = None
    declared: bool = True


@dataclass(frozen=True)
class Relation:
    """A relation with both ends resolved to entity ids; ``type`` is UPPER_SNAKE."""

    head_id: str
    tail_id: str
    type: str
    predicate: str
    chunk_id: str | None


@dataclass
class Bundle:
    """A validated bundle, every reference resolved: what the loader writes, as is."""

    path: Path
    manifest: Manifest
    documents: list[DocumentRow]
    chunks: list[ChunkRow]
    embeddings: dict[str, np.ndarray]
    entities: list[Entity]
    chunk_entity_ids: dict[str, list[str]]
    relations: list[Relation]
    questions: list[Question]
    warnings: list[str] = field(default_factory=list)
    # Entity rows without an id whose names differ only by case/spacing, merged into one entity.
    merged_entities: list[str] = field(default_factory=list)
    # Where each entities.jsonl entity was declared ("entities.jsonl:3"): a load conflict
    # with the database names that line.
    entity_lines: dict[str, str] = field(default_factory=dict)

    @property
    def embedding_dimensions(self) -> int | None:
        for vector in self.embeddings.values():
            return int(vector.shape[0])
        return None

    @property
    def mention_count(self) -> int:
        return sum(len(ids) for ids in self.chunk_entity_ids.values())

    def counts(self) -> dict[str, int]:
        return {
            "documents": len(self.documents),
            "chunks": len(self.chunks),
            "chunks_with_embedding": len(self.embeddings),
            "entities": len(self.entities),
            "mentions": self.mention_count,
            "relations": len(self.relations),
            "relation_types": len({r.type for r in self.relations}),
            "questions": len(self.questions),
        }
