"""The bundle as ``neo4j-admin database import full`` CSV files: the graph ``load_bundle`` writes.

The same labels, relationship types and directions from the schema mapping, the same properties
(embeddings as float arrays holding the same float32 values widened to float64,
``name_key``/``alias_keys``, predicate text, ``source_chunk``), and predicates that would collide
with structural types prefixed the same way. One writer per file; each returns the importer's
``--nodes``/``--relationships`` argument for it.
"""

from __future__ import annotations

import csv
import datetime as dt
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from guidedrag_graph.errors import BundleError, ConfigurationError
from guidedrag_graph.kb.bundle import RESERVED_PREFIX, Bundle
from guidedrag_graph.kb.loader import next_chunk_pairs
from guidedrag_graph.schema import SchemaMapping

ARRAY_DELIMITER = ";"
_CSV_TYPES = {bool: "boolean", int: "long", float: "double", str: "string"}


def _header_name(name: str) -> str:
    """A property key as the importer's header takes it (no escaping there: refuse oddities)."""
    if not name or any(ch in name for ch in ':,"\n\r;'):
        raise ConfigurationError(
            f"property or label {name!r} cannot be written in an import header; use the "
            f"transactional `guidedrag load` (without --bulk)"
        )
    return name


def _metadata_columns(rows: Iterable[dict[str, Any]], where: str) -> dict[str, str]:
    """``key -> importer type`` for the metadata of a file, one type per key."""
    types: dict[str, str] = {}
    for metadata in rows:
        for key, value in metadata.items():
            if value is None:
                continue
            if isinstance(value, list):
                inner = {type(v) for v in value} or {str}
                kind = _CSV_TYPES.get(inner.pop(), "") + "[]" if len(inner) <= 1 else ""
            else:
                kind = _CSV_TYPES.get(type(value), "")
            if kind in ("", "[]") or types.setdefault(key, kind) != kind:
                raise BundleError(
                    f"{where}: metadata {key!r} mixes value types; --bulk needs one type per "
                    f"key (or load without --bulk)"
                )
    return types


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        items = [_cell(v) for v in value]
        if any(ARRAY_DELIMITER in str(v) for v in items):
            raise BundleError(
                f"a list value contains {ARRAY_DELIMITER!r} (the import array delimiter): "
                f"load without --bulk"
            )
        return ARRAY_DELIMITER.join(str(v) for v in items)
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def _write(path: Path, header: list[str], rows: Iterator[list[Any]]) -> int:
    count = 0
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
        writer.writerow(header)
        for row in rows:
            writer.writerow([_cell(v) for v in row])
            count += 1
    return count


def write_import_files(bundle: Bundle, schema: SchemaMapping, out: Path) -> list[str]:
    """The bundle as importer CSV files; returns the ``--nodes``/``--relationships`` arguments."""
    out.mkdir(parents=True, exist_ok=True)
    return [
        _documents(bundle, schema, out),
        _entities(bundle, schema, out),
        _chunks(bundle, schema, out),
        *_lexical_relationships(bundle, schema, out),
        _relations(bundle, schema, out),
    ]


def _documents(bundle: Bundle, s: SchemaMapping, out: Path) -> str:
    h = _header_name
    meta = _metadata_columns((d.metadata for d in bundle.documents), "documents.jsonl")
    header = [
        f"{h(s.document_id)}:ID(Document)",
        h(s.document_title),
        h(s.document_source),
        f"{h(s.document_date)}:date",
        *(f"{h(k)}:{t}" for k, t in meta.items()),
        ":LABEL",
    ]
    rows = (
        [d.id, d.title, d.source, d.date, *(d.metadata.get(k) for k in meta), s.document_label]
        for d in bundle.documents
    )
    return _nodes(out / "documents.csv", header, rows)


def _entities(bundle: Bundle, s: SchemaMapping, out: Path) -> str:
    h = _header_name
    header = [
        f"{h(s.entity_id)}:ID(Entity)",
        h(s.entity_name),
        h(s.entity_key),
        f"{h(s.entity_aliases)}:string[]",
        f"{h(s.entity_alias_keys)}:string[]",
        h(s.entity_type),
        h(s.entity_description),
        ":LABEL",
    ]
    rows = (
        [
            e.id,
            e.name,
            e.name_key,
            [*e.aliases],
            [*e.alias_keys],
            e.type,
            e.description,
            s.entity_label,
        ]
        for e in bundle.entities
    )
    return _nodes(out / "entities.csv", header, rows)


def _nodes(path: Path, header: list[str], rows: Iterator[list[Any]]) -> str:
    """Write one node file; returns its ``--nodes`` argument."""
    _write(path, header, rows)
    return f"--nodes={path}"


def _chunks(bundle: Bundle, s: SchemaMapping, out: Path) -> str:
    h = _header_name
    chunk_meta = _metadata_columns((c.metadata for c in bundle.chunks), "chunks.jsonl")

    def chunk_rows() -> Iterator[list[Any]]:
        for c in bundle.chunks:
            vector = bundle.embeddings[c.id]
            # repr of the float32 value widened to float64: the importer parses it back to the
            # very double the transactional loader stores (toFloatList of the float32 vector).
            cells = ARRAY_DELIMITER.join(map(repr, vector.astype(np.float64).tolist()))
            yield [
                c.id,
                c.text,
                c.position,
                c.document_id,
                cells,
                *(c.metadata.get(k) for k in chunk_meta),
                s.chunk_label,
            ]

    _write(
        out / "chunks.csv",
        [
            f"{h(s.chunk_id)}:ID(Chunk)",
            h(s.chunk_text),
            f"{h(s.chunk_position)}:long",
            "document_id",
            f"{h(s.chunk_embedding)}:double[]",
            *(f"{h(k)}:{t}" for k, t in chunk_meta.items()),
            ":LABEL",
        ],
        chunk_rows(),
    )
    return f"--nodes={out / 'chunks.csv'}"


def _lexical_relationships(bundle: Bundle, s: SchemaMapping, out: Path) -> list[str]:
    """PART_OF, MENTIONS (in the mapping's direction) and, where mapped, NEXT_CHUNK."""
    h = _header_name
    args: list[str] = []
    _write(
        out / "part_of.csv",
        [":START_ID(Chunk)", ":END_ID(Document)", ":TYPE"],
        ([c.id, c.document_id, s.part_of_type] for c in bundle.chunks),
    )
    args.append(f"--relationships={out / 'part_of.csv'}")
    mentions_out = s.mentions_direction == "out"
    _write(
        out / "mentions.csv",
        [":START_ID(Chunk)", ":END_ID(Entity)"]
        if mentions_out
        else [":START_ID(Entity)", ":END_ID(Chunk)"],
        (
            [c, e] if mentions_out else [e, c]
            for c, ids in bundle.chunk_entity_ids.items()
            for e in ids
        ),
    )
    args.append(f"--relationships={h(s.mentions_type)}={out / 'mentions.csv'}")
    if s.next_chunk_type:
        _write(
            out / "next_chunk.csv",
            [":START_ID(Chunk)", ":END_ID(Chunk)"],
            ([p["a"], p["b"]] for p in next_chunk_pairs(bundle.chunks)),
        )
        args.append(f"--relationships={h(s.next_chunk_type)}={out / 'next_chunk.csv'}")
    return args


def _relations(bundle: Bundle, s: SchemaMapping, out: Path) -> str:
    """Entity relations, as types or as a property of the mapping's one generic type."""
    h = _header_name
    reserved = s.structural_relationship_types | (
        {s.generic_relation_type} if s.relation_mode == "property" else set()
    )

    def relation_rows() -> Iterator[list[Any]]:
        for r in bundle.relations:
            rel_type = RESERVED_PREFIX + r.type if r.type in reserved else r.type
            if s.relation_mode == "property":
                yield [
                    r.head_id,
                    r.tail_id,
                    s.generic_relation_type,
                    rel_type,
                    r.predicate,
                    r.chunk_id,
                ]
            else:
                yield [r.head_id, r.tail_id, rel_type, r.predicate, r.chunk_id]

    rel_header = [":START_ID(Entity)", ":END_ID(Entity)", ":TYPE"]
    if s.relation_mode == "property":
        rel_header.append(h(s.relation_type_property))
    rel_header += [h(s.relation_text_property), h(s.relation_chunk_property)]
    _write(out / "relations.csv", rel_header, relation_rows())
    return f"--relationships={out / 'relations.csv'}"
