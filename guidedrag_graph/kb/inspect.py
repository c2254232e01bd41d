"""Read an existing graph's layout and propose a schema mapping; say when a mapping does not fit.

Users bring graphs written by KG builders or by hand. ``inspect_graph`` reads what is there
(labels with counts, relationship types between labels, property keys with their value types,
indexes) and ``propose_mapping`` guesses the chunk, document and entity labels from it: chunks
carry a long string and a LIST<FLOAT>, entities hang off chunks and carry a short name,
documents hang off chunks and carry no embedding. The guess is written as a mapping file that
the user reviews; nothing is changed in the database.

Whether a mapping fits (``schema_mismatch`` and the other cheap checks) lives in
``guidedrag_graph.db.fit``, below the stages, because the selector asks it too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from neo4j import Driver

from guidedrag_graph.db.fit import (
    ADOPTED_NAME_KEY_LABEL,
    INTERNAL_LABELS,
    LOADED_LABEL,
    TITLE_NAMES,
    PropertyInfo,
    by_key,
    first_property,
    label_counts,
    label_properties,
    read_rows,
)
from guidedrag_graph.schema.presets import ELEMENT_ID, PRESETS, SchemaMapping


@dataclass
class GraphLayout:
    """What ``guidedrag kb inspect`` reads: enough to map a graph, never its content."""

    labels: dict[str, int]
    properties: dict[str, list[PropertyInfo]]
    relationships: list[tuple[tuple[str, ...], str, tuple[str, ...], int]]
    indexes: list[dict[str, Any]] = field(default_factory=list)
    constraints: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "labels": self.labels,
            "properties": {
                label: [
                    {
                        "key": p.key,
                        "present": p.present,
                        "distinct": p.distinct,
                        "types": list(p.types),
                        "avg_length": p.avg_length,
                    }
                    for p in props
                ]
                for label, props in self.properties.items()
            },
            "relationships": [
                {"from": list(a), "type": t, "to": list(b), "sampled": n}
                for a, t, b, n in self.relationships
            ],
            "indexes": self.indexes,
            "constraints": self.constraints,
        }


def inspect_graph(driver: Driver, database: str, *, sample: int = 200) -> GraphLayout:
    labels = label_counts(driver, database)
    properties = {
        label: label_properties(driver, database, label, sample)
        for label, count in labels.items()
        if count and label not in INTERNAL_LABELS
    }
    # Our own marks (the loader's :__GuidedRAGLoaded) say nothing about the layout: dropped, and
    # the label sets that differed only by them added up.
    merged: dict[tuple[tuple[str, ...], str, tuple[str, ...]], int] = {}
    for r in read_rows(driver, database, "inspect_relationships", {"sample": 100_000}):
        key = (_layout_labels(r["from"]), str(r["type"]), _layout_labels(r["to"]))
        merged[key] = merged.get(key, 0) + int(r["n"])
    rels = sorted(((a, t, b, n) for (a, t, b), n in merged.items()), key=lambda x: -x[3])
    indexes = [
        {k: r[k] for k in ("name", "type", "entity_type", "labels", "properties", "state")}
        for r in read_rows(driver, database, "schema_indexes", {})
        if r["type"] != "LOOKUP"
    ]
    constraints = [
        {k: r[k] for k in ("name", "type", "labels", "properties")}
        for r in read_rows(driver, database, "schema_constraints", {})
    ]
    return GraphLayout(labels, properties, rels, indexes, constraints)


# --- proposing a mapping -----------------------------------------------------------------------
_ID_NAMES = ("id", "pid", "uuid", "uid", "key", "chunk_id", "doc_id", "document_id")
_TEXT_NAMES = ("text", "content", "body", "page_content", "passage")
_NAME_NAMES = ("name", "title", "label", "id")


def _id_property(props: dict[str, PropertyInfo], count: int) -> str:
    """A property every sampled node has with a distinct value, else elementId()."""
    sampled = max((p.present for p in props.values()), default=0)
    # The usual names first, then any other key that reads like an id (aid, passageId, ...).
    others = sorted(k for k in props if k.lower().endswith("id") and k not in _ID_NAMES)
    for name in (*_ID_NAMES, *others):
        p = props.get(name)
        if p is not None and p.present == sampled and p.distinct == p.present and not p.is_vector:
            return name
    return ELEMENT_ID


def _chunk_label(layout: GraphLayout) -> str | None:
    best: tuple[int, str] | None = None
    for label, props in layout.properties.items():
        has_vector = any(p.is_vector for p in props)
        long_text = max((p.avg_length or 0 for p in props if p.is_string), default=0)
        if has_vector and long_text >= 20:
            candidate = (layout.labels.get(label, 0), label)
            if label == "Chunk":
                candidate = (candidate[0] + 10**12, label)
            best = max(best, candidate) if best else candidate
    return best[1] if best else None


OWN_MARKS = (LOADED_LABEL, ADOPTED_NAME_KEY_LABEL)


def _layout_labels(labels: list[str]) -> tuple[str, ...]:
    return tuple(label for label in labels if label not in OWN_MARKS)


def _specific(labels: tuple[str, ...], counts: dict[str, int]) -> str | None:
    """Of a node's labels, the one a mapping should use: a shared base label (``__Entity__``)
    beats the per-type labels a builder adds beside it."""
    usable = [label for label in labels if label not in INTERNAL_LABELS]
    if "__Entity__" in usable:
        return "__Entity__"
    if not usable:
        return None
    return max(usable, key=lambda label: (counts.get(label, 0), label))


def propose_mapping(layout: GraphLayout) -> tuple[SchemaMapping, list[str]]:
    """The mapping that best fits ``layout``, with notes on every guess a person should check."""
    notes: list[str] = []
    chunk = _chunk_label(layout)
    if chunk is None:
        notes.append(
            "no label has both a text property and an embedding (LIST<FLOAT>): set [chunk] by "
            "hand; guided retrieval ranks chunks by their embeddings"
        )
        return PRESETS["guidedrag"].model_copy(update={"preset": "custom"}), notes
    fields = _chunk_fields(layout, chunk)
    links = _chunk_links(layout, chunk, fields)
    document = _document_link(layout, chunk, links, fields, notes)
    _entity_fields(layout, chunk, document, links, fields, notes)
    _document_fields(layout, chunk, fields)
    for name in ("chunk_id", "entity_id", "document_id"):
        if fields.get(name) == ELEMENT_ID:
            notes.append(
                f"{name.replace('_', '.')}: no property is present and unique on every sampled "
                f"node, so nodes are addressed by elementId() (stable while the node exists)"
            )
    mapping = PRESETS["guidedrag"].model_copy(update={"preset": "custom"})
    return SchemaMapping.model_validate({**mapping.model_dump(), **fields}), notes


def _chunk_fields(layout: GraphLayout, chunk: str) -> dict[str, Any]:
    """Chunks: the longest (or conventionally named) text, a vector, a unique id."""
    cprops = by_key(layout.properties[chunk])
    strings = [p for p in cprops.values() if p.is_string]
    text = (
        first_property(cprops, _TEXT_NAMES, True)
        or max(strings, key=lambda p: p.avg_length or 0).key
    )
    embedding = next(
        (n for n in ("embedding", "vec", "vector") if n in cprops and cprops[n].is_vector),
        next(p.key for p in cprops.values() if p.is_vector),
    )
    fields: dict[str, Any] = {
        "chunk_label": chunk,
        "chunk_text": text,
        "chunk_embedding": embedding,
        "chunk_id": _id_property(cprops, layout.labels[chunk]),
    }
    if "index" in cprops and "position" not in cprops:
        fields["chunk_position"] = "index"
    return fields


def _chunk_links(
    layout: GraphLayout, chunk: str, fields: dict[str, Any]
) -> dict[tuple[str, str, str], int]:
    """Relationships touching chunks: (other label, type, direction from the chunk) -> count.

    A chunk-to-chunk type with NEXT in its name is the reading order (``next_chunk_type``).
    """
    links: dict[tuple[str, str, str], int] = {}
    for a, rtype, b, n in layout.relationships:
        if chunk in a and chunk in b:
            if "NEXT" in rtype.upper():
                fields["next_chunk_type"] = rtype
            continue
        if chunk in a and (other := _specific(b, layout.labels)):
            links[(other, rtype, "out")] = links.get((other, rtype, "out"), 0) + n
        elif chunk in b and (other := _specific(a, layout.labels)):
            links[(other, rtype, "in")] = links.get((other, rtype, "in"), 0) + n
    return links


_DOCUMENT_WORDS = ("PART", "DOCUMENT", "HAS", "FROM_DOC", "CONTAINS")


def _document_link(
    layout: GraphLayout,
    chunk: str,
    links: dict[tuple[str, str, str], int],
    fields: dict[str, Any],
    notes: list[str],
) -> str | None:
    """Documents: few nodes per chunk, no embedding, a part-of-like type; the most linked."""

    def has_vector(label: str) -> bool:
        return any(p.is_vector for p in layout.properties.get(label, []))

    doc_links = [
        (count, other, rtype, d)
        for (other, rtype, d), count in links.items()
        if not has_vector(other)
        and layout.labels.get(other, 0) <= layout.labels[chunk]
        and other != "__Entity__"
        and any(word in rtype.upper() for word in _DOCUMENT_WORDS)
    ]
    if not doc_links:
        fields.update(part_of_type=None)
        notes.append(
            f"no relationship links :{chunk} to a document label: each :{chunk} is read as its "
            f"own document (titles from its own properties)"
        )
        return None
    _, document, rtype, direction = max(doc_links)
    fields.update(document_label=document, part_of_type=rtype, part_of_direction=direction)
    return document


def _entity_fields(
    layout: GraphLayout,
    chunk: str,
    document: str | None,
    links: dict[tuple[str, str, str], int],
    fields: dict[str, Any],
    notes: list[str],
) -> None:
    """Entities: the most-linked other label, with a short name (unique names serve as ids)."""
    entity_links = [
        (count, other, rtype, d)
        for (other, rtype, d), count in links.items()
        if other != document and other != chunk
    ]
    if not entity_links:
        notes.append(f"no relationship links :{chunk} to entities: set [entity] and [mentions]")
        return
    _, entity, rtype, direction = max(entity_links)
    eprops = by_key(layout.properties.get(entity, []))
    fields.update(
        entity_label=entity,
        mentions_type=rtype,
        mentions_direction=direction,
        entity_name=first_property(eprops, _NAME_NAMES, True) or "name",
        entity_id=_id_property(eprops, layout.labels.get(entity, 0)),
    )
    name_prop = eprops.get(fields["entity_name"])
    if (
        fields["entity_id"] == ELEMENT_ID
        and name_prop is not None
        and name_prop.distinct == name_prop.present == max(p.present for p in eprops.values())
    ):
        # Unique names are ids already (LangChain stores its entities that way).
        fields["entity_id"] = fields["entity_name"]
    if "type" not in eprops and "label" in eprops:
        fields["entity_type"] = "label"


def _document_fields(layout: GraphLayout, chunk: str, fields: dict[str, Any]) -> None:
    """Title, id, source and date of the document label (the chunk's own, without one)."""
    doc_label = fields.get("document_label", chunk)
    dprops = by_key(layout.properties.get(doc_label, []))
    title = first_property(dprops, TITLE_NAMES, True)
    if title:
        fields["document_title"] = title
    if doc_label != chunk:
        fields["document_id"] = _id_property(dprops, layout.labels.get(doc_label, 0))
    for key in ("source", "date"):
        if key not in dprops:
            alt = {"source": ("path", "file_name", "fileName", "url"), "date": ("createdAt",)}[key]
            found = next((a for a in alt if a in dprops), None)
            if found:
                fields[f"document_{key}"] = found
