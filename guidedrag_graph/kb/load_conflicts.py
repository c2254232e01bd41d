"""Before a load writes anything: bundle documents and chunks whose id the database holds with
other content.

The loader MERGEs on id and SETs every field, so without this check a bundle reusing an id would
silently replace another bundle's (or another tool's) text, title or source. One read query per
batch of ids (``cypher/load_content_conflicts.cypher``, an index seek each) sends ids and
metadata keys only; what comes back — only for ids the database already holds — is compared
here, field by field. A fresh load reads nothing back; a reload of the same bundle finds every
field equal and stays a no-op. The embedding is not compared: it follows the text (a chunk whose
text differs is a conflict; one with the same text keeps, or is given, a vector of that text).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neo4j import Driver, ManagedTransaction, NotificationMinimumSeverity, Record

from guidedrag_graph.config import Settings
from guidedrag_graph.errors import LoadConflictError
from guidedrag_graph.kb.bundle import Bundle, ChunkRow, DocumentRow
from guidedrag_graph.kb.bundle_lines import Problems, json_lines
from guidedrag_graph.schema.presets import SchemaMapping
from guidedrag_graph.templates import queries as templates

__all__ = [
    "ContentConflict",
    "content_conflicts",
    "read_in_batches",
    "refuse_or_report_content",
]

# Ids checked per query (one index seek each; only ids, names or metadata keys travel).
_BATCH = 5_000
# Compares one bundle row with what the database holds under its id: the differing fields.
_Compare = Callable[[Any, dict[str, Any]], list[str]]


@dataclass(frozen=True)
class ContentConflict:
    """A bundle ``kind`` ("document" / "chunk") row whose ``id`` the database holds with other
    values in ``fields`` (bundle names: ``title``, ``text``, ``metadata.lang``, ...)."""

    kind: str
    id: str
    fields: tuple[str, ...]


def _document_fields(d: DocumentRow, r: dict[str, Any]) -> list[str]:
    date = d.date.isoformat() if d.date else None
    wanted = {"title": d.title, "source": d.source, "date": date}
    return _fields(wanted, r["stored"]) + _metadata_fields(d.metadata, r["meta"])


def _chunk_fields(c: ChunkRow, r: dict[str, Any]) -> list[str]:
    wanted = {"text": c.text, "position": c.position, "document_id": c.document_id}
    return _fields(wanted, r["stored"]) + _metadata_fields(c.metadata, r["meta"])


def _fields(wanted: dict[str, Any], stored: dict[str, Any]) -> list[str]:
    return [name for name, value in wanted.items() if stored.get(name) != value]


def _metadata_fields(metadata: dict[str, Any], stored: Sequence[Any]) -> list[str]:
    return [
        f"metadata.{key}"
        for (key, wanted), value in zip(metadata.items(), stored, strict=True)
        if value != wanted
    ]


def read_in_batches(
    driver: Driver, settings: Settings, query: str, rows: Sequence[dict[str, Any]]
) -> Iterator[Record]:
    """What ``query`` returns for ``rows``, sent ``_BATCH`` at a time in read transactions with
    notifications off (an empty database lacks the labels): the pre-write checks of a load,
    entities' (``loader.entity_conflicts``) and documents' and chunks' alike."""
    with driver.session(
        database=settings.neo4j_database,
        notifications_min_severity=NotificationMinimumSeverity.OFF,
    ) as session:
        for start in range(0, len(rows), _BATCH):
            batch = list(rows[start : start + _BATCH])
            yield from session.execute_read(_read, query, {"rows": batch})


def content_conflicts(
    driver: Driver, settings: Settings, schema: SchemaMapping, bundle: Bundle, cypher_prefix: str
) -> list[ContentConflict]:
    """The bundle's documents, then chunks, whose id the database holds with other values."""

    def check(kind: str, rows: Sequence[Any], compare: _Compare) -> list[ContentConflict]:
        query = cypher_prefix + templates.fragment("load_content_conflicts", f"{kind}s", schema)
        by_id = {row.id: row for row in rows}
        ids = [{"id": r.id, "keys": list(r.metadata)} for r in rows]
        found: list[ContentConflict] = []
        for record in read_in_batches(driver, settings, query, ids):
            fields = compare(by_id[record["id"]], record.data())
            if fields:
                found.append(ContentConflict(kind, str(record["id"]), tuple(fields)))
        return found

    return check("document", bundle.documents, _document_fields) + check(
        "chunk", bundle.chunks, _chunk_fields
    )


def _read(tx: ManagedTransaction, query: str, params: dict[str, Any]) -> list[Record]:
    return list(tx.run(query, params))


def _lines(path: Path, ids: Iterable[str]) -> dict[str, str]:
    """``file:line`` of each id in ``path`` (read again only when there are conflicts to name)."""
    wanted = set(ids)
    out: dict[str, str] = {}
    for where, obj in json_lines(path, Problems()):
        key = obj.get("id")
        if isinstance(key, str) and key in wanted and key not in out:
            out[key] = where
    return out


def refuse_or_report_content(
    conflicts: list[ContentConflict], bundle: Bundle, on_conflict: str
) -> list[str]:
    """Refuse the load on the first conflict (``LoadConflictError``, ``file:line``), or, with
    ``on_conflict="update"``, the line reporting each replacement."""
    if not conflicts:
        return []
    where: dict[str, dict[str, str]] = {}
    for kind, name in (("document", "documents.jsonl"), ("chunk", "chunks.jsonl")):
        ids = [c.id for c in conflicts if c.kind == kind]
        where[kind] = _lines(bundle.path / name, ids) if ids else {}

    def at(c: ContentConflict) -> Path:
        return bundle.path / where[c.kind].get(c.id, f"{c.kind}s.jsonl")

    if on_conflict == "update":
        return [
            f"{at(c)}: {c.kind} {c.id!r} replaced ({', '.join(c.fields)} differed)"
            for c in conflicts
        ]
    first = conflicts[0]
    more = f" (and {len(conflicts) - 1} more)" if len(conflicts) > 1 else ""
    raise LoadConflictError(
        f"{at(first)}: {first.kind} id {first.id!r} exists in the database with another "
        f"{', '.join(first.fields)}{more}; nothing was written: give the bundle's {first.kind} "
        f"another id, or replace it with --on-conflict=update (Python: on_conflict='update')"
    )
