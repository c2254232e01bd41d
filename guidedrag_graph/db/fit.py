"""Does a schema mapping describe this database? Cheap reads that say so in one line.

Every entry point asks this before a question is answered (the selector, ``kb inspect``,
adoption), so it sits with the configuration, below the stages: it only reads label counts from
the count store, relationship type names and the property keys of a small sample. It turns
"no entity named 'Euro'" into "no :Chunk nodes; this graph has :Passage (1,234) ..." and names
the fix: the preset that fits, or the mapping file to write. ``kb.inspect`` builds on it to
propose a mapping for a graph no preset fits.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from neo4j import Driver

from guidedrag_graph.db.connection import read_query
from guidedrag_graph.schema.presets import ELEMENT_ID, PRESETS, SchemaMapping
from guidedrag_graph.templates import queries as templates

# The label the loader gives every node it creates (never one a MERGE found): what `kb wipe`
# deletes (guidedrag_graph/kb/wipe.py).
LOADED_LABEL = "__GuidedRAGLoaded"
# The label `kb adopt` gives an entity it wrote the name key on (the entity had none): what
# `kb adopt --drop` removes the key from, so a key the user had stays.
ADOPTED_NAME_KEY_LABEL = "__GuidedRAGNameKey"
# Our own bookkeeping and the builders' internal labels are never chunks, documents or entities.
INTERNAL_LABELS = (
    "__GuidedRAGMigration",
    "__GuidedRAGAdoption",
    LOADED_LABEL,
    ADOPTED_NAME_KEY_LABEL,
    "__KGBuilder__",
    "__Node__",
)


@dataclass(frozen=True)
class PropertyInfo:
    key: str
    present: int
    distinct: int
    types: tuple[str, ...]
    avg_length: float | None

    @property
    def is_string(self) -> bool:
        return any(t.startswith("STRING") for t in self.types)

    @property
    def is_vector(self) -> bool:
        return any(t.startswith("LIST<FLOAT") for t in self.types)


class Reads(Protocol):
    """What reads for a context (``GraphContext.read``: awaited on an ``AsyncDriver``)."""

    def read(
        self, query: str, params: dict[str, Any] | None = None, *, name: str = ...
    ) -> list[dict[str, Any]]: ...


# A driver, or a context whose reads go through the one read function (``reader.read``).
Source = Driver | Reads


def read_rows(
    driver: Source, database: str, name: str, params: dict[str, Any]
) -> list[dict[str, Any]]:
    if isinstance(driver, Driver):
        return read_query(driver, templates.query(name), params, database=database)
    return driver.read(templates.query(name), params, name=name)


def label_counts(driver: Source, database: str) -> dict[str, int]:
    rows = read_rows(driver, database, "inspect_labels", {})
    return {str(r["label"]): int(r["nodes"]) for r in rows}


def label_properties(
    driver: Source, database: str, label: str, sample: int = 200
) -> list[PropertyInfo]:
    rows = read_rows(driver, database, "inspect_properties", {"label": label, "sample": sample})
    return [
        PropertyInfo(
            str(r["key"]),
            int(r["present"]),
            int(r["distinct"]),
            tuple(str(t) for t in r["types"]),
            None if r["avg_length"] is None else float(r["avg_length"]),
        )
        for r in rows
    ]


TITLE_NAMES = ("title", "name", "fileName", "file_name", "path", "url", "id")


def by_key(props: list[PropertyInfo]) -> dict[str, PropertyInfo]:
    return {p.key: p for p in props}


def first_property(
    props: dict[str, PropertyInfo], names: tuple[str, ...], strings: bool
) -> str | None:
    for name in names:
        p = props.get(name)
        if p is not None and (p.is_string or not strings):
            return name
    return None


# --- does a mapping fit the database? ------------------------------------------------------------
def _listing(counts: dict[str, int], limit: int = 6) -> str:
    shown = [
        f":{label} ({n:,})" for label, n in counts.items() if n and label not in INTERNAL_LABELS
    ][:limit]
    return ", ".join(shown) if shown else "no nodes at all"


def schema_mismatch(driver: Source, database: str, schema: SchemaMapping) -> str | None:
    """One line saying how ``schema`` fails to describe the database, or ``None`` when it fits;
    the line ends with the fix: the preset that does fit, or the mapping file to write.

    Only cheap reads: label counts from the count store, the relationship type names, and the
    property keys of a small sample of the mapped chunk and entity labels. An empty database
    fits any mapping.
    """
    counts = label_counts(driver, database)
    problem = _misfit(driver, database, schema, counts)
    if problem is None:
        return None
    return f"{problem} — {fix_for(driver, database, counts, exclude=schema.preset)}"


def fitting_preset(
    driver: Source,
    database: str,
    counts: dict[str, int] | None = None,
    *,
    exclude: str | None = None,
) -> str | None:
    """The first schema preset that describes the database (``None``: none does)."""

    counts = counts if counts is not None else label_counts(driver, database)
    for name, preset in PRESETS.items():
        if name != exclude and _misfit(driver, database, preset, counts) is None:
            return name
    return None


def fix_for(
    driver: Source, database: str, counts: dict[str, int], *, exclude: str | None = None
) -> str:
    """What to do about a mapping that does not fit: use the preset that does, or write one."""
    preset = fitting_preset(driver, database, counts, exclude=exclude)
    if preset is not None:
        return (
            f"this graph fits preset {preset!r}: `guidedrag kb adopt --preset {preset}` (it is "
            f"then remembered), or GUIDEDRAG_SCHEMA_PRESET={preset}"
        )
    return (
        "no preset fits: write a mapping file with `guidedrag kb inspect --out mapping.toml`, "
        "check it, then `guidedrag kb adopt --schema mapping.toml`"
    )


def _misfit(
    driver: Source, database: str, schema: SchemaMapping, counts: dict[str, int]
) -> str | None:
    """How ``schema`` fails to describe the database, without the fix (``None``: it fits)."""
    if not any(n for label, n in counts.items() if label not in INTERNAL_LABELS):
        return None
    what = f"preset {schema.preset!r}" if schema.preset != "custom" else "the schema mapping"
    for role, label in (("chunk", schema.chunk_label), ("entity", schema.entity_label)):
        if not counts.get(label):
            return (
                f"{what} expects :{label} {role} nodes, but there are none; this graph has "
                f"{_listing(counts)}"
            )
    checks = (
        (schema.chunk_label, "chunk", (schema.chunk_id, schema.chunk_text, schema.chunk_embedding)),
        (schema.entity_label, "entity", (schema.entity_id, schema.entity_name)),
    )
    for label, role, keys in checks:
        props = {p.key for p in label_properties(driver, database, label, sample=50)}
        missing = [k for k in keys if k != ELEMENT_ID and k not in props]
        if missing:
            have = ", ".join(sorted(props)) or "no properties"
            return (
                f"{what} reads {role} property {', '.join(map(repr, missing))} of :{label}, but "
                f"those nodes have {have}"
            )
    types = {str(r["type"]) for r in read_rows(driver, database, "inspect_relationship_types", {})}
    wanted = [t for t in (schema.mentions_type, schema.part_of_type) if t]
    absent = [t for t in wanted if t not in types]
    if absent:
        return (
            f"{what} links chunks through {', '.join(f':{t}' for t in absent)}, which this graph "
            f"does not have"
        )
    return None


def readable_title_property(driver: Source, database: str, schema: SchemaMapping) -> str | None:
    """The document property to show as a title when the mapped one is absent from the graph's
    documents (a LangChain or LlamaIndex source without ``title`` metadata would show its md5 or
    uuid id instead): its ``source``/``file_name``/``path``/... (``None``: the mapped one is
    there, or nothing better is)."""
    props = by_key(label_properties(driver, database, schema.document_label, sample=50))
    if not props or schema.document_title in props:
        return None
    names = (*TITLE_NAMES[:-1], schema.document_source, "source", "fileName")
    found = first_property(props, tuple(n for n in names if n != schema.document_id), True)
    return found


def missing_fulltext_hint(driver: Source, database: str, index_name: str) -> str | None:
    """Why unknown names get no "did you mean": no full-text index (``None``: it exists)."""
    names = {str(r["name"]) for r in read_rows(driver, database, "schema_indexes", {})}
    if index_name in names:
        return None
    return (
        f"no suggestions: the full-text index {index_name!r} over entity names does not exist "
        f"(run `guidedrag kb adopt`, or set GUIDEDRAG_ENTITY_FULLTEXT_INDEX_NAME to yours)"
    )


def vector_index_over(
    indexes: Iterable[Mapping[str, Any]], label: str, prop: str, wanted: str
) -> Mapping[str, Any] | None:
    """The vector index over ``label(prop)`` among ``SHOW INDEXES`` rows (the one named
    ``wanted`` when there are several; Neo4j allows one per property), else None. Adoption and
    ``kb embed-entities`` both reuse what a builder already made rather than build a second."""
    over = [
        i
        for i in indexes
        if i["type"] == "VECTOR"
        and list(i["labels"] or []) == [label]
        and list(i["properties"] or [])[:1] == [prop]
    ]
    return next((i for i in over if i["name"] == wanted), over[0] if over else None)
