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
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from guidedrag_graph.errors import BundleError
from guidedrag_graph.schema import PRESETS, name_key, relation_type_name
from guidedrag_graph.semantics import Semantics

FORMAT_NAME: Literal["guidedrag-kb"] = "guidedrag-kb"
FORMAT_VERSION: Literal[1] = 1
MAX_REPORTED_ERRORS = 20

Scalar = str | int | float | bool
MetadataValue = Scalar | list[str] | list[int] | list[float] | list[bool] | None

# Relationship types of the lexical graph under every preset: a predicate ("part of", "mentions")
# must never become one of them, or entity relations and structure mix (the loader re-checks a
# custom mapping's own structural types).
RESERVED_RELATION_TYPES = frozenset().union(
    *(p.structural_relationship_types for p in PRESETS.values())
)
RESERVED_PREFIX = "REL_"
_UTF8_BOM = b"\xef\xbb\xbf"
_NUMBER_TYPES = frozenset({float, int})
_VECTOR_BLOCK = 8192


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
        # Files with lines we could not even parse (bad UTF-8, bad JSON): references into them
        # may point at those lines, so "unknown id" errors would be false knock-ons.
        self.unreadable: set[str] = set()

    def add(self, where: str, message: str) -> None:
        self.items.append(f"{where}: {message}")

    def add_reference(self, where: str, message: str, target: str) -> None:
        """A dangling reference into ``target``; dropped when ``target`` had unreadable lines."""
        if target not in self.unreadable:
            self.add(where, message)

    def raise_if_any(self) -> None:
        if not self.items:
            return
        shown = self.items[:MAX_REPORTED_ERRORS]
        more = len(self.items) - len(shown)
        tail = f"\n... and {more} more problem(s)" if more else ""
        raise BundleError("\n".join(shown) + tail)


def _lines(path: Path, errors: _Errors) -> Iterator[tuple[str, dict[str, Any]]]:
    """(``file:line``, object) for every non-blank line; bad lines are recorded, not raised.

    Each line is decoded on its own (bytes, split on ``\\n``), so a bad UTF-8 byte or a stray
    byte-order mark is reported at its own line and the lines after it are still read: no
    false knock-on errors. A BOM at the very start of the file is accepted (Windows editors
    write one); at the start of any later line it is reported.
    """
    if not path.exists():
        return
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            where = f"{path.name}:{number}"
            if number == 1 and raw.startswith(_UTF8_BOM):
                raw = raw[len(_UTF8_BOM) :]
            if raw.startswith(_UTF8_BOM):
                # U+FEFF inside a JSON string is text; at the start of a later line it is a
                # byte-order mark left by concatenating files.
                errors.add(where, "byte-order mark (U+FEFF) at the start of the line; remove it")
                errors.unreadable.add(path.name)
                continue
            if not raw.strip():
                continue
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as bad:
                    errors.add(
                        where,
                        f"not UTF-8 ({bad.reason} at byte {bad.start + 1}); re-save the file "
                        f"as UTF-8",
                    )
                    errors.unreadable.add(path.name)
                    continue
                errors.add(where, _json_problem(text, exc))
                errors.unreadable.add(path.name)
                continue
            if not isinstance(obj, dict):
                errors.add(where, f"expected a JSON object, got {type(obj).__name__}")
                errors.unreadable.add(path.name)
                continue
            yield where, obj


def _json_problem(text: str, exc: Exception) -> str:
    """The standard library's wording (message and column) for a line orjson rejected."""
    try:
        json.loads(text)
    except json.JSONDecodeError as std:
        return f"invalid JSON ({std.msg} at column {std.colno})"
    except RecursionError:
        return "invalid JSON (nested too deeply)"
    return f"invalid JSON ({exc})"


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


def _embedding_problem(value: Any) -> str | None:
    """Why a raw embedding is not a flat list of numbers, or None (checked at C speed)."""
    if not isinstance(value, list) or not value:
        return "embedding must be a non-empty list of numbers"
    if not set(map(type, value)) <= _NUMBER_TYPES:
        return "embedding must contain numbers only"
    return None


def _embedding_matrix(
    blocks: list[np.ndarray], wheres: list[str], errors: _Errors
) -> tuple[np.ndarray, np.ndarray]:
    """All precomputed vectors as one float32 matrix, checked in bulk.

    Returns the matrix and a mask of good rows. Per-row NumPy calls cost more than the data;
    block conversions and vectorised finiteness/norm checks cost almost nothing.
    """
    if not blocks:
        return np.zeros((0, 0), dtype=np.float32), np.zeros(0, dtype=bool)
    with np.errstate(over="ignore", invalid="ignore"):
        matrix = blocks[0] if len(blocks) == 1 else np.concatenate(blocks)
        finite: np.ndarray = np.asarray(np.isfinite(matrix).all(axis=1))
        # float32 and in place: no float64 copy of a million-row matrix. Non-finite rows give
        # nan/inf here, and are already excluded by ``finite``.
        norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix))
    good = finite & (norms > 1e-12)
    for row in np.flatnonzero(~good):
        reason = (
            "embedding contains NaN or infinity (or a number too large for float32)"
            if not finite[row]
            else "embedding is the zero vector (cosine is undefined)"
        )
        errors.add(wheres[row], reason)
    return matrix, good


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
            manifest = Manifest.model_validate(json.loads(manifest_path.read_text("utf-8-sig")))
        except (json.JSONDecodeError, UnicodeDecodeError, ValidationError) as exc:
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
    merged: list[str] = []
    for where, row in entity_rows:
        entity_id = row.key
        if entity_id in entities and row.id is None and not entity_lines[entity_id].endswith("*"):
            # Same name but for case or spacing, no id given: one entity, not a duplicate.
            first = entities[entity_id]
            extra = tuple(a for a in row.aliases if a.strip() and a not in first.aliases)
            entities[entity_id] = Entity(
                id=first.id,
                name=first.name,
                name_key=first.name_key,
                aliases=first.aliases + extra,
                alias_keys=tuple(dict.fromkeys([*first.alias_keys, *map(name_key, extra)])),
                type=first.type or row.type,
                description=first.description or row.description,
            )
            for key in entities[entity_id].alias_keys:
                by_alias.setdefault(key, entity_id)
            merged.append(
                f"{where}: entity {row.name!r} merged into {first.name!r} "
                f"({entity_lines[entity_id]}): same name but for case or spacing"
            )
            continue
        if entity_id in entities:
            errors.add(
                where,
                f"duplicate entity id {entity_id!r} "
                f"(first at {entity_lines[entity_id].rstrip('*')})",
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
        # "*" marks an explicit id: a second row with the same explicit id is a real duplicate.
        entity_lines[entity_id] = where + ("*" if row.id is not None else "")
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
    chunk_entity_ids: dict[str, list[str]] = {}
    chunk_lines: dict[str, str] = {}
    raw_vectors: list[list[float]] = []
    # Python float lists cost ~12 KB per 384-d vector: convert every block to float32 as we go,
    # so a million-chunk bundle needs 1.5 GB of vectors, not 12 GB of lists.
    blocks: list[np.ndarray] = []
    vector_chunks: list[int] = []  # index into ``chunks`` of each raw vector
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
            errors.add_reference(
                where,
                f"unknown document id {chunk.document_id!r}; add it to documents.jsonl",
                "documents.jsonl",
            )
            continue
        if raw_embedding is not None:
            problem = _embedding_problem(raw_embedding)
            if problem is not None:
                errors.add(where, problem)
                continue
            if dims is None:
                dims = (len(raw_embedding), where)
            elif len(raw_embedding) != dims[0]:
                errors.add(
                    where,
                    f"embedding has {len(raw_embedding)} dimensions but {dims[1]} has {dims[0]}; "
                    f"all precomputed embeddings must have the same length",
                )
                continue
            raw_vectors.append(raw_embedding)
            vector_chunks.append(len(chunks))
            if len(raw_vectors) == _VECTOR_BLOCK:
                with np.errstate(over="ignore"):
                    blocks.append(np.asarray(raw_vectors, dtype=np.float32))
                raw_vectors = []
        chunk_lines[chunk.id] = where
        chunks.append(chunk)
        ids = [resolve(ref) for ref in chunk.entities if ref.strip()]
        chunk_entity_ids[chunk.id] = list(dict.fromkeys(ids))
    if raw_vectors:
        with np.errstate(over="ignore"):
            blocks.append(np.asarray(raw_vectors, dtype=np.float32))
    del raw_vectors
    matrix, good = _embedding_matrix(
        blocks, [chunk_lines[chunks[i].id] for i in vector_chunks], errors
    )
    embeddings: dict[str, np.ndarray] = {
        chunks[i].id: matrix[row] for row, i in enumerate(vector_chunks) if good[row]
    }

    relations: list[Relation] = []
    seen_relations: set[tuple[str, str, str, str, str | None]] = set()
    for where, rel_row in _validated(root / "relations.jsonl", RelationRow, errors):
        assert isinstance(rel_row, RelationRow)
        if rel_row.chunk_id is not None and rel_row.chunk_id not in chunk_lines:
            errors.add_reference(
                where,
                f"unknown chunk id {rel_row.chunk_id!r}; add it to chunks.jsonl",
                "chunks.jsonl",
            )
            continue
        predicate = " ".join(rel_row.type.split())
        relation = Relation(
            head_id=resolve(rel_row.head),
            tail_id=resolve(rel_row.tail),
            type=safe_relation_type(predicate),
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
            errors.add_reference(
                where,
                f"gold chunk id(s) {sorted(set(unknown))} not in chunks.jsonl",
                "chunks.jsonl",
            )
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
        warnings=[
            f"merged {len(merged)} entity row(s) whose names differ only by case or "
            f"spacing (no id given): {merged[0]}" + (" ..." if len(merged) > 1 else "")
        ]
        if merged
        else [],
        merged_entities=merged,
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
