"""KB bundle format v1: the models of its rows and a reader that validates everything up front.

A bundle is a directory of JSON Lines files (UTF-8, one object per line): ``documents.jsonl``,
``chunks.jsonl``, optional ``entities.jsonl``, ``relations.jsonl``, ``questions.jsonl`` and an
optional ``bundle.json`` manifest. The reader checks every line, every cross-reference (chunk ->
document, relation -> chunk, question -> gold chunks) and every precomputed embedding's length
before the loader writes anything, and reports problems as ``file:line: what is wrong`` so a
broken bundle never leaves a half-loaded database behind.

Entity references (a chunk's ``entities``, a relation's ``head``/``tail``) are entity ids or
names: an exact id wins, then the case- and whitespace-insensitive name, then an alias. A name
that matches nothing becomes a new entity whose id is ``name_key(name)``.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from guidedrag_graph.errors import BundleError
from guidedrag_graph.schema import name_key, relation_type_name
from guidedrag_graph.semantics import Semantics

FORMAT_NAME: Literal["guidedrag-kb"] = "guidedrag-kb"
FORMAT_VERSION: Literal[1] = 1
MAX_REPORTED_ERRORS = 20

Scalar = str | int | float | bool
MetadataValue = Scalar | list[str] | list[int] | list[float] | list[bool] | None

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


class _Errors:
    """Collects ``file:line: message`` problems; raises them together, up to a limit."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, where: str, message: str) -> None:
        self.items.append(f"{where}: {message}")

    def raise_if_any(self) -> None:
        if not self.items:
            return
        shown = self.items[:MAX_REPORTED_ERRORS]
        more = len(self.items) - len(shown)
        tail = f"\n... and {more} more problem(s)" if more else ""
        raise BundleError("\n".join(shown) + tail)


def _lines(path: Path, errors: _Errors) -> Iterator[tuple[str, dict[str, Any]]]:
    """(``file:line``, object) for every non-blank line; JSON errors are recorded, not raised."""
    if not path.exists():
        return
    with path.open(encoding="utf-8") as handle:
        number = 0
        while True:
            try:
                line = handle.readline()
            except UnicodeDecodeError as exc:
                errors.add(f"{path.name}:{number + 1}", f"not UTF-8 ({exc.reason})")
                return
            if not line:
                return
            number += 1
            where = f"{path.name}:{number}"
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                errors.add(where, f"invalid JSON ({exc.msg} at column {exc.colno})")
                continue
            if not isinstance(obj, dict):
                errors.add(where, f"expected a JSON object, got {type(obj).__name__}")
                continue
            yield where, obj


def _explain(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "row"
        if err["type"] == "missing":
            parts.append(f"missing field {loc!r}")
        elif err["type"] == "extra_forbidden":
            parts.append(f"unknown field {loc!r} (put extra data under 'metadata')")
        else:
            parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)


def _parse_embedding(value: Any) -> np.ndarray | str:
    """A float32 vector, or the reason it is not one."""
    if not isinstance(value, list) or not value:
        return "embedding must be a non-empty list of numbers"
    if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in value):
        return "embedding must contain numbers only"
    vector = np.asarray(value, dtype=np.float32)
    if not np.all(np.isfinite(vector)):
        return "embedding contains NaN or infinity"
    if not math.isclose(float(np.linalg.norm(vector)), 0.0, abs_tol=1e-12):
        return vector
    return "embedding is the zero vector (cosine is undefined)"


def read_bundle(path: str | Path) -> Bundle:
    """Read and validate a bundle directory; ``BundleError`` lists ``file:line`` problems."""
    root = Path(path)
    if not root.is_dir():
        raise BundleError(f"{root}: not a directory; a KB bundle is a folder of .jsonl files")
    for required in ("documents.jsonl", "chunks.jsonl"):
        if not (root / required).is_file():
            raise BundleError(f"{root / required}: missing; every bundle needs {required}")
    errors = _Errors()

    manifest = Manifest()
    manifest_path = root / "bundle.json"
    if manifest_path.exists():
        try:
            manifest = Manifest.model_validate(json.loads(manifest_path.read_text("utf-8")))
        except (json.JSONDecodeError, ValidationError) as exc:
            detail = _explain(exc) if isinstance(exc, ValidationError) else f"invalid JSON ({exc})"
            errors.add("bundle.json:1", detail)

    documents: list[DocumentRow] = []
    doc_lines: dict[str, str] = {}
    for where, obj in _lines(root / "documents.jsonl", errors):
        try:
            doc = DocumentRow.model_validate(obj)
        except ValidationError as exc:
            errors.add(where, _explain(exc))
            continue
        if doc.id in doc_lines:
            errors.add(where, f"duplicate document id {doc.id!r} (first at {doc_lines[doc.id]})")
            continue
        doc_lines[doc.id] = where
        documents.append(doc)

    entity_rows: list[tuple[str, EntityRow]] = [
        (where, row)
        for where, row in _validated(root / "entities.jsonl", EntityRow, errors)
        if isinstance(row, EntityRow)
    ]
    entities: dict[str, Entity] = {}
    entity_lines: dict[str, str] = {}
    by_key: dict[str, str] = {}
    by_alias: dict[str, str] = {}
    for where, row in entity_rows:
        entity_id = row.key
        if entity_id in entities:
            errors.add(
                where, f"duplicate entity id {entity_id!r} (first at {entity_lines[entity_id]})"
            )
            continue
        aliases = tuple(dict.fromkeys(a for a in row.aliases if a.strip()))
        entity = Entity(
            id=entity_id,
            name=row.name,
            name_key=name_key(row.name),
            aliases=aliases,
            alias_keys=tuple(dict.fromkeys(name_key(a) for a in aliases)),
            type=row.type,
            description=row.description,
        )
        entities[entity_id] = entity
        entity_lines[entity_id] = where
        by_key.setdefault(entity.name_key, entity_id)
        for key in entity.alias_keys:
            by_alias.setdefault(key, entity_id)

    def resolve(reference: str) -> str:
        if reference in entities:
            return reference
        key = name_key(reference)
        found = by_key.get(key) or by_alias.get(key)
        if found is None and key in entities:
            found = key
        if found is not None:
            return found
        entities[key] = Entity(
            id=key, name=" ".join(reference.split()), name_key=key, declared=False
        )
        by_key[key] = key
        return key

    chunks: list[ChunkRow] = []
    embeddings: dict[str, np.ndarray] = {}
    chunk_entity_ids: dict[str, list[str]] = {}
    chunk_lines: dict[str, str] = {}
    dims: tuple[int, str] | None = None
    for where, obj in _lines(root / "chunks.jsonl", errors):
        raw_embedding = obj.pop("embedding", None)
        try:
            chunk = ChunkRow.model_validate(obj)
        except ValidationError as exc:
            errors.add(where, _explain(exc))
            continue
        if chunk.id in chunk_lines:
            errors.add(where, f"duplicate chunk id {chunk.id!r} (first at {chunk_lines[chunk.id]})")
            continue
        if chunk.document_id not in doc_lines:
            errors.add(
                where,
                f"unknown document id {chunk.document_id!r}; add it to documents.jsonl",
            )
            continue
        if raw_embedding is not None:
            vector = _parse_embedding(raw_embedding)
            if isinstance(vector, str):
                errors.add(where, vector)
                continue
            if dims is None:
                dims = (int(vector.shape[0]), where)
            elif vector.shape[0] != dims[0]:
                errors.add(
                    where,
                    f"embedding has {vector.shape[0]} dimensions but {dims[1]} has {dims[0]}; "
                    f"all precomputed embeddings must have the same length",
                )
                continue
            embeddings[chunk.id] = vector
        chunk_lines[chunk.id] = where
        chunks.append(chunk)
        ids = [resolve(ref) for ref in chunk.entities if ref.strip()]
        chunk_entity_ids[chunk.id] = list(dict.fromkeys(ids))

    relations: list[Relation] = []
    seen_relations: set[tuple[str, str, str, str, str | None]] = set()
    for where, rel_row in _validated(root / "relations.jsonl", RelationRow, errors):
        assert isinstance(rel_row, RelationRow)
        if rel_row.chunk_id is not None and rel_row.chunk_id not in chunk_lines:
            errors.add(where, f"unknown chunk id {rel_row.chunk_id!r}; add it to chunks.jsonl")
            continue
        predicate = " ".join(rel_row.type.split())
        relation = Relation(
            head_id=resolve(rel_row.head),
            tail_id=resolve(rel_row.tail),
            type=relation_type_name(predicate),
            predicate=predicate,
            chunk_id=rel_row.chunk_id,
        )
        identity = (relation.head_id, relation.type, relation.tail_id, predicate, relation.chunk_id)
        if identity not in seen_relations:
            seen_relations.add(identity)
            relations.append(relation)

    questions: list[Question] = []
    question_lines: dict[str, str] = {}
    for where, q_row in _validated(root / "questions.jsonl", Question, errors):
        assert isinstance(q_row, Question)
        if q_row.id in question_lines:
            errors.add(
                where, f"duplicate question id {q_row.id!r} (first at {question_lines[q_row.id]})"
            )
            continue
        unknown = [
            c for c in [*q_row.gold_chunk_ids, *q_row.all_gold_chunk_ids] if c not in chunk_lines
        ]
        if unknown:
            errors.add(where, f"gold chunk id(s) {sorted(set(unknown))} not in chunks.jsonl")
            continue
        question_lines[q_row.id] = where
        questions.append(q_row)

    if dims is not None and manifest.embedding_dimensions not in (None, dims[0]):
        errors.add(
            dims[1],
            f"embedding has {dims[0]} dimensions but bundle.json says "
            f"embedding_dimensions={manifest.embedding_dimensions}",
        )
    errors.raise_if_any()
    return Bundle(
        path=root,
        manifest=manifest,
        documents=documents,
        chunks=chunks,
        embeddings=embeddings,
        entities=list(entities.values()),
        chunk_entity_ids=chunk_entity_ids,
        relations=relations,
        questions=questions,
    )


def _validated(
    path: Path, model: type[BaseModel], errors: _Errors
) -> Iterator[tuple[str, BaseModel]]:
    for where, obj in _lines(path, errors):
        try:
            yield where, model.model_validate(obj)
        except ValidationError as exc:
            errors.add(where, _explain(exc))


def read_questions(path: str | Path) -> list[Question]:
    """Only ``questions.jsonl`` of a bundle (the evaluation harness needs no chunks in memory)."""
    return read_bundle(path).questions
