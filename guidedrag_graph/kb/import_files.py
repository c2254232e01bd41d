"""The bundle as ``neo4j-admin database import full`` CSV files: the graph ``load_bundle`` writes.

The same labels, relationship types and directions from the schema mapping, the same properties
(embeddings as float arrays holding the same float32 values widened to float64,
``name_key``/``alias_keys``, predicate text, ``source_chunk``), and predicates that would collide
with structural types prefixed the same way. One writer per file; each returns the importer's
``--nodes``/``--relationships`` argument for it.

The embeddings column is most of the bytes (384 doubles a chunk): it is formatted a block of
chunks at a time by orjson (C, shortest round-trip repr of each float64), not float by float in
Python, and copied into its row's line as it is: it holds only digits, signs,
``.``, ``e`` and ``;``, so it never needs quoting, and ``csv.writer`` would scan its ~7 KB a
row for characters to quote (most of the writer's time at 1M chunks). Files whose fields hold a
line break are recorded in :class:`ImportFiles`, so the importer parses only those
single-threaded (``--multiline-fields`` for every file serialises the whole import).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from guidedrag_graph.db.fit import LOADED_LABEL
from guidedrag_graph.errors import BundleError, ConfigurationError
from guidedrag_graph.kb.bundle import RESERVED_PREFIX, Bundle
from guidedrag_graph.kb.loader import next_chunk_pairs
from guidedrag_graph.schema.presets import SchemaMapping

ARRAY_DELIMITER = ";"
_CSV_TYPES = {bool: "boolean", int: "long", float: "double", str: "string"}
_EMBEDDING_BLOCK = 2048  # chunks formatted per orjson call (~40 MB of text at 384-d)


@dataclass
class ImportFiles:
    """The importer's ``--nodes``/``--relationships`` arguments, and the files with line breaks.

    ``multiline`` names the files that hold a field spanning lines: only those need the
    importer's (single-threaded) multiline parsing.
    """

    arguments: list[str] = field(default_factory=list)
    multiline: list[Path] = field(default_factory=list)


def embedding_cells(matrix: np.ndarray) -> list[str]:
    """Each row of a float32 matrix as the importer's ``double[]`` cell: ``v1;v2;...``.

    Each value is the float32 widened to float64, written as the shortest decimal that parses
    back to that very double (``Double.parseDouble`` in the importer is correctly rounded): the
    doubles stored are exactly those the transactional loader stores (``toFloatList`` of the
    float32 vector). The shortest *float32* decimal would be shorter but parses to another
    double (0.1f is 0.10000000149011612, not 0.1).
    """
    if matrix.shape[0] == 0:
        return []
    wide = np.ascontiguousarray(matrix, dtype=np.float64)
    if not np.isfinite(wide).all():
        raise BundleError("an embedding holds NaN or infinity: it cannot be imported")
    text = orjson.dumps(wide, option=orjson.OPT_SERIALIZE_NUMPY)
    # b"[[a,b],[c,d]]" -> "a;b" and "c;d": numbers hold no "," "[" or "]".
    return text[2:-2].replace(b",", b";").decode("ascii").split("];[")


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


def _has_line_break(row: list[Any]) -> bool:
    return any(isinstance(v, str) and ("\n" in v or "\r" in v) for v in row)


class _Around:
    """A row as ``csv.writer`` writes it, but with the cell at ``at`` copied in as it is."""

    def __init__(self, at: int) -> None:
        self.at = at
        self.buffer = io.StringIO()
        # "\n" as terminator (cut off below): it is what makes a field with a line break
        # quoted, as in a whole-row writerow.
        self.writer = csv.writer(self.buffer, quoting=csv.QUOTE_MINIMAL, lineterminator="\n")

    def _csv(self, cells: list[Any]) -> str:
        if len(cells) == 1 and cells[0] in ("", None):
            return ""  # alone, csv.writer writes an empty field as "" (not so inside a row)
        self.writer.writerow(cells)
        text = self.buffer.getvalue()[:-1]
        self.buffer.seek(0)
        self.buffer.truncate()
        return text

    def line(self, cells: list[Any]) -> str:
        head, raw, tail = cells[: self.at], cells[self.at], cells[self.at + 1 :]
        parts = [self._csv(head)] if head else []
        parts.append(str(raw))
        if tail:
            parts.append(self._csv(tail))
        return ",".join(parts) + "\n"


class _Files:
    """Where the files go, and which of them hold a field with a line break."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.multiline: list[Path] = []

    def write(
        self,
        name: str,
        header: list[str],
        rows: Iterable[list[Any]],
        *,
        plain: bool = False,
        raw_at: int | None = None,
    ) -> Path:
        """Write ``rows`` under ``header``; ``plain`` rows hold ids only (no cell conversion);
        the cell at ``raw_at`` is written as it is, unquoted (a vector cell: no delimiter,
        quote or line break can be in it), the cells around it as ``csv.writer`` writes them:
        the same bytes as a ``writerow`` of the whole row."""
        path = self.out / name
        multiline = False
        with path.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle, quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
            writer.writerow(header)
            around = _Around(raw_at) if raw_at is not None else None
            for row in rows:
                cells = row if plain else [_cell(v) for v in row]
                multiline = multiline or _has_line_break(cells)
                if around is not None:
                    handle.write(around.line(cells))
                else:
                    writer.writerow(cells)
        if multiline:
            self.multiline.append(path)
        return path


def write_import_files(bundle: Bundle, schema: SchemaMapping, out: Path) -> ImportFiles:
    """The bundle as importer CSV files, with the importer's arguments for them."""
    out.mkdir(parents=True, exist_ok=True)
    files = _Files(out)
    arguments = [
        _documents(bundle, schema, files),
        _entities(bundle, schema, files),
        _chunks(bundle, schema, files),
        *_lexical_relationships(bundle, schema, files),
        _relations(bundle, schema, files),
    ]
    return ImportFiles(arguments, files.multiline)


def _labels(label: str) -> str:
    """A ``:LABEL`` cell: the mapped label and the loader's own mark (``LOADED_LABEL``, what
    ``kb wipe`` deletes by), as the transactional loader writes them."""
    return f"{label}{ARRAY_DELIMITER}{LOADED_LABEL}"


def _documents(bundle: Bundle, s: SchemaMapping, files: _Files) -> str:
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
        [
            d.id,
            d.title,
            d.source,
            d.date,
            *(d.metadata.get(k) for k in meta),
            _labels(s.document_label),
        ]
        for d in bundle.documents
    )
    return f"--nodes={files.write('documents.csv', header, rows)}"


def _entities(bundle: Bundle, s: SchemaMapping, files: _Files) -> str:
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
            _labels(s.entity_label),
        ]
        for e in bundle.entities
    )
    return f"--nodes={files.write('entities.csv', header, rows)}"


def _chunks(bundle: Bundle, s: SchemaMapping, files: _Files) -> str:
    h = _header_name
    chunk_meta = _metadata_columns((c.metadata for c in bundle.chunks), "chunks.jsonl")
    label = _labels(s.chunk_label)
    embeddings = bundle.embeddings

    def chunk_rows() -> Iterator[list[Any]]:
        chunks = bundle.chunks
        for start in range(0, len(chunks), _EMBEDDING_BLOCK):
            block = chunks[start : start + _EMBEDDING_BLOCK]
            cells = embedding_cells(np.stack([embeddings[c.id] for c in block]))
            for c, vector in zip(block, cells, strict=True):
                row = [c.id, c.text, c.position, c.document_id, vector]
                if chunk_meta:
                    row += [_cell(c.metadata.get(k)) for k in chunk_meta]
                row.append(label)
                yield row

    path = files.write(
        "chunks.csv",
        [
            f"{h(s.chunk_id)}:ID(Chunk)",
            h(s.chunk_text),
            f"{h(s.chunk_position)}:long",
            "document_id",
            f"{h(s.chunk_embedding)}:double[]",  # written raw (see the module docstring)
            *(f"{h(k)}:{t}" for k, t in chunk_meta.items()),
            ":LABEL",
        ],
        chunk_rows(),
        # ids, text and labels are strings, position an int or None: nothing to convert
        # but the metadata, converted above.
        plain=True,
        raw_at=4,
    )
    return f"--nodes={path}"


def _lexical_relationships(bundle: Bundle, s: SchemaMapping, files: _Files) -> list[str]:
    """PART_OF, MENTIONS (in the mapping's direction) and, where mapped, NEXT_CHUNK."""
    h = _header_name
    args: list[str] = []
    path = files.write(
        "part_of.csv",
        [":START_ID(Chunk)", ":END_ID(Document)", ":TYPE"],
        ([c.id, c.document_id, s.part_of_type] for c in bundle.chunks),
        plain=True,
    )
    args.append(f"--relationships={path}")
    mentions_out = s.mentions_direction == "out"
    path = files.write(
        "mentions.csv",
        [":START_ID(Chunk)", ":END_ID(Entity)"]
        if mentions_out
        else [":START_ID(Entity)", ":END_ID(Chunk)"],
        (
            [c, e] if mentions_out else [e, c]
            for c, ids in bundle.chunk_entity_ids.items()
            for e in ids
        ),
        plain=True,
    )
    args.append(f"--relationships={h(s.mentions_type)}={path}")
    if s.next_chunk_type:
        path = files.write(
            "next_chunk.csv",
            [":START_ID(Chunk)", ":END_ID(Chunk)"],
            ([p["a"], p["b"]] for p in next_chunk_pairs(bundle.chunks)),
            plain=True,
        )
        args.append(f"--relationships={h(s.next_chunk_type)}={path}")
    return args


def _relations(bundle: Bundle, s: SchemaMapping, files: _Files) -> str:
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
    return f"--relationships={files.write('relations.csv', rel_header, relation_rows())}"
