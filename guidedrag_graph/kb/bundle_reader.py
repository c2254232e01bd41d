"""Read and validate a KB bundle, one file at a time, before anything is written.

The reader checks every line, every cross-reference (chunk -> document, relation -> chunk,
question -> gold chunks) and every precomputed embedding's length before the loader writes
anything, and reports problems as ``file:line: what is wrong`` so a broken bundle never leaves a
half-loaded database behind. Files are read in dependency order (manifest, documents, entities,
chunks, relations, questions), so each reference is checked against a file already read.

Entity references (a chunk's ``entities``, a relation's ``head``/``tail``) are entity ids or
names: an exact id wins, then the case- and whitespace-insensitive name, then an alias. A name
that matches nothing becomes a new entity whose id is ``name_key(name)``.
"""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from guidedrag_graph.errors import BundleError
from guidedrag_graph.kb.bundle import (
    Bundle,
    ChunkRow,
    DocumentRow,
    Entity,
    EntityRow,
    Manifest,
    Question,
    Relation,
    RelationRow,
    safe_relation_type,
)
from guidedrag_graph.kb.bundle_lines import (
    Problems,
    explain,
    is_duplicate,
    json_lines,
    validated_rows,
)
from guidedrag_graph.kb.bundle_parallel import (
    PARALLEL_MIN_BYTES,
    ParsedEmbedding,
    embedding_problem,
    parsed_chunk_lines,
)
from guidedrag_graph.schema.presets import name_key

_VECTOR_BLOCK = 8192


def read_bundle(path: str | Path, *, workers: int = 1) -> Bundle:
    """Read and validate a bundle directory; ``BundleError`` lists ``file:line`` problems.

    ``workers`` > 1 parses a large ``chunks.jsonl`` (JSON and embeddings) in that many worker
    processes; the result, and every problem reported, is the same.
    """
    # Millions of long-lived row objects and no reference cycles: the cyclic collector would
    # re-walk them all again and again as they accumulate, for nothing.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _read_bundle(Path(path), workers)
    finally:
        if collecting:
            gc.enable()


def _read_bundle(root: Path, workers: int) -> Bundle:
    if not root.is_dir():
        raise BundleError(f"{root}: not a directory; a KB bundle is a folder of .jsonl files")
    for required in ("documents.jsonl", "chunks.jsonl"):
        if not (root / required).is_file():
            raise BundleError(f"{root / required}: missing; every bundle needs {required}")
    errors = Problems()
    manifest = _read_manifest(root / "bundle.json", errors)
    documents, document_lines = _read_documents(root / "documents.jsonl", errors)
    entities = _EntityTable(root / "entities.jsonl", errors)
    chunks = _Chunks(root / "chunks.jsonl", errors, document_lines, entities, workers)
    relations = _read_relations(root / "relations.jsonl", errors, chunks.lines, entities)
    questions = _read_questions(root / "questions.jsonl", errors, chunks.lines)
    if chunks.dims is not None and manifest.embedding_dimensions not in (None, chunks.dims[0]):
        errors.add(
            chunks.dims[1],
            f"embedding has {chunks.dims[0]} dimensions but bundle.json says "
            f"embedding_dimensions={manifest.embedding_dimensions}",
        )
    errors.raise_if_any()
    merged = entities.merged
    return Bundle(
        path=root,
        manifest=manifest,
        documents=documents,
        chunks=chunks.rows,
        embeddings=chunks.embeddings,
        entities=list(entities.by_id.values()),
        chunk_entity_ids=chunks.entity_ids,
        relations=relations,
        questions=questions,
        warnings=[
            f"merged {len(merged)} entity row(s) whose names differ only by case or "
            f"spacing (no id given): {merged[0]}" + (" ..." if len(merged) > 1 else "")
        ]
        if merged
        else [],
        merged_entities=merged,
        entity_lines={k: v.rstrip("*") for k, v in entities.lines.items()},
    )


def read_questions(path: str | Path) -> list[Question]:
    """Only ``questions.jsonl`` of a bundle (the evaluation harness needs no chunks in memory)."""
    return read_bundle(path).questions


def _read_manifest(path: Path, errors: Problems) -> Manifest:
    if not path.exists():
        return Manifest()
    try:
        return Manifest.model_validate(json.loads(path.read_text("utf-8-sig")))
    except (json.JSONDecodeError, UnicodeDecodeError, ValidationError) as exc:
        detail = explain(exc) if isinstance(exc, ValidationError) else f"invalid JSON ({exc})"
        errors.add("bundle.json:1", detail)
        return Manifest()


def _read_documents(path: Path, errors: Problems) -> tuple[list[DocumentRow], dict[str, str]]:
    """The valid documents, and the line each document id was read at."""
    documents: list[DocumentRow] = []
    lines: dict[str, str] = {}
    for where, doc in validated_rows(path, DocumentRow, errors):
        if is_duplicate(errors, where, "document", doc.id, lines):
            continue
        lines[doc.id] = where
        documents.append(doc)
    return documents, lines


class _EntityTable:
    """``entities.jsonl``, and every entity reference resolved against it (new ones added)."""

    def __init__(self, path: Path, errors: Problems) -> None:
        self.by_id: dict[str, Entity] = {}
        self.lines: dict[str, str] = {}  # "*" marks an explicit id (a repeat is a duplicate)
        self.by_key: dict[str, str] = {}
        self.by_alias: dict[str, str] = {}
        self.merged: list[str] = []
        # Every row is validated before any is added: invalid rows are reported first.
        for where, row in list(validated_rows(path, EntityRow, errors)):
            self._add(where, row, errors)

    def _add(self, where: str, row: EntityRow, errors: Problems) -> None:
        entity_id = row.key
        if entity_id in self.by_id and row.id is None and not self.lines[entity_id].endswith("*"):
            self._merge(where, row, entity_id)
            return
        if entity_id in self.by_id:
            errors.add(
                where,
                f"duplicate entity id {entity_id!r} (first at {self.lines[entity_id].rstrip('*')})",
            )
            return
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
        self.by_id[entity_id] = entity
        self.lines[entity_id] = where + ("*" if row.id is not None else "")
        self.by_key.setdefault(entity.name_key, entity_id)
        for key in entity.alias_keys:
            self.by_alias.setdefault(key, entity_id)

    def _merge(self, where: str, row: EntityRow, entity_id: str) -> None:
        """Same name but for case or spacing, no id given: one entity, not a duplicate."""
        first = self.by_id[entity_id]
        extra = tuple(a for a in row.aliases if a.strip() and a not in first.aliases)
        self.by_id[entity_id] = Entity(
            id=first.id,
            name=first.name,
            name_key=first.name_key,
            aliases=first.aliases + extra,
            alias_keys=tuple(dict.fromkeys([*first.alias_keys, *map(name_key, extra)])),
            type=first.type or row.type,
            description=first.description or row.description,
        )
        for key in self.by_id[entity_id].alias_keys:
            self.by_alias.setdefault(key, entity_id)
        self.merged.append(
            f"{where}: entity {row.name!r} merged into {first.name!r} "
            f"({self.lines[entity_id]}): same name but for case or spacing"
        )

    def resolve(self, reference: str) -> str:
        """The id ``reference`` names: an id, else a name, else an alias, else a new entity."""
        if reference in self.by_id:
            return reference
        key = name_key(reference)
        found = self.by_key.get(key) or self.by_alias.get(key)
        if found is None and key in self.by_id:
            found = key
        if found is not None:
            return found
        self.by_id[key] = Entity(
            id=key, name=" ".join(reference.split()), name_key=key, declared=False
        )
        self.by_key[key] = key
        return key


class _Chunks:
    """``chunks.jsonl``: the rows, their entity ids, and their embeddings as float32 rows."""

    def __init__(
        self,
        path: Path,
        errors: Problems,
        document_lines: dict[str, str],
        entities: _EntityTable,
        workers: int = 1,
    ) -> None:
        self.rows: list[ChunkRow] = []
        self.lines: dict[str, str] = {}
        self.entity_ids: dict[str, list[str]] = {}
        self.dims: tuple[int, str] | None = None  # the first embedding's length, and its line
        vectors = _Vectors()
        parallel = workers > 1 and path.is_file() and path.stat().st_size >= PARALLEL_MIN_BYTES
        lines = parsed_chunk_lines(path, errors, workers) if parallel else json_lines(path, errors)
        for where, obj in lines:
            raw_embedding = obj.pop("embedding", None)
            try:
                chunk = ChunkRow.model_validate(obj)
            except ValidationError as exc:
                errors.add(where, explain(exc))
                continue
            if is_duplicate(errors, where, "chunk", chunk.id, self.lines):
                continue
            if chunk.document_id not in document_lines:
                errors.add_reference(
                    where,
                    f"unknown document id {chunk.document_id!r}; add it to documents.jsonl",
                    "documents.jsonl",
                )
                continue
            if raw_embedding is not None:
                if not self._check_embedding(raw_embedding, where, errors):
                    continue
                row = (
                    raw_embedding.row
                    if isinstance(raw_embedding, ParsedEmbedding)
                    else raw_embedding
                )
                if row is not None:  # None only with a problem, refused above
                    vectors.add(row, len(self.rows))
            self.lines[chunk.id] = where
            self.rows.append(chunk)
            ids = [entities.resolve(ref) for ref in chunk.entities if ref.strip()]
            self.entity_ids[chunk.id] = list(dict.fromkeys(ids))
        self.embeddings = vectors.checked(self.rows, self.lines, errors)

    def _check_embedding(self, raw: Any, where: str, errors: Problems) -> bool:
        if isinstance(raw, ParsedEmbedding):  # checked by a worker (bundle_parallel)
            problem, length = raw.problem, raw.length
        else:
            problem = embedding_problem(raw)
            length = len(raw) if problem is None else 0
        if problem is not None:
            errors.add(where, problem)
            return False
        if self.dims is None:
            self.dims = (length, where)
        elif length != self.dims[0]:
            errors.add(
                where,
                f"embedding has {length} dimensions but {self.dims[1]} has {self.dims[0]}; "
                f"all precomputed embeddings must have the same length",
            )
            return False
        return True


class _Vectors:
    """Precomputed embeddings, converted to float32 a block at a time as they are read.

    Python float lists cost ~12 KB per 384-d vector: converting every block as we go means a
    million-chunk bundle needs 1.5 GB of vectors, not 12 GB of lists. A row may also come
    already converted (a float32 array from a worker): the block conversion keeps it as is.
    """

    def __init__(self) -> None:
        self.raw: list[list[float] | np.ndarray] = []
        self.blocks: list[np.ndarray] = []
        self.chunk_indexes: list[int] = []  # index into the chunk rows of each vector

    def add(self, raw: list[float] | np.ndarray, chunk_index: int) -> None:
        self.raw.append(raw)
        self.chunk_indexes.append(chunk_index)
        if len(self.raw) == _VECTOR_BLOCK:
            self._flush()

    def _flush(self) -> None:
        with np.errstate(over="ignore"):
            self.blocks.append(np.asarray(self.raw, dtype=np.float32))
        self.raw = []

    def checked(
        self, chunks: list[ChunkRow], lines: dict[str, str], errors: Problems
    ) -> dict[str, np.ndarray]:
        """chunk id -> vector, for every vector that is finite and not zero."""
        if self.raw:
            self._flush()
        wheres = [lines[chunks[i].id] for i in self.chunk_indexes]
        matrix, good = _embedding_matrix(self.blocks, wheres, errors)
        return {chunks[i].id: matrix[row] for row, i in enumerate(self.chunk_indexes) if good[row]}


def _read_relations(
    path: Path, errors: Problems, chunk_lines: dict[str, str], entities: _EntityTable
) -> list[Relation]:
    """Relations with both ends resolved, each (head, type, tail, text, chunk) kept once."""
    relations: list[Relation] = []
    seen: set[tuple[str, str, str, str, str | None]] = set()
    for where, row in validated_rows(path, RelationRow, errors):
        if row.chunk_id is not None and row.chunk_id not in chunk_lines:
            errors.add_reference(
                where, f"unknown chunk id {row.chunk_id!r}; add it to chunks.jsonl", "chunks.jsonl"
            )
            continue
        predicate = " ".join(row.type.split())
        relation = Relation(
            head_id=entities.resolve(row.head),
            tail_id=entities.resolve(row.tail),
            type=safe_relation_type(predicate),
            predicate=predicate,
            chunk_id=row.chunk_id,
        )
        identity = (relation.head_id, relation.type, relation.tail_id, predicate, relation.chunk_id)
        if identity not in seen:
            seen.add(identity)
            relations.append(relation)
    return relations


def _read_questions(path: Path, errors: Problems, chunk_lines: dict[str, str]) -> list[Question]:
    questions: list[Question] = []
    lines: dict[str, str] = {}
    for where, q in validated_rows(path, Question, errors):
        if is_duplicate(errors, where, "question", q.id, lines):
            continue
        unknown = [c for c in [*q.gold_chunk_ids, *q.all_gold_chunk_ids] if c not in chunk_lines]
        if unknown:
            errors.add_reference(
                where,
                f"gold chunk id(s) {sorted(set(unknown))} not in chunks.jsonl",
                "chunks.jsonl",
            )
            continue
        lines[q.id] = where
        questions.append(q)
    return questions


def _embedding_matrix(
    blocks: list[np.ndarray], wheres: list[str], errors: Problems
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
