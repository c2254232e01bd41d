"""How a knowledge graph names its chunks, documents, entities and relations.

Users bring graphs built by other tools, so no label, relationship type or property name is
hard-coded anywhere else: every query takes them from a ``SchemaMapping``. The names come from
this mapping (or are validated against the database) and are always backtick-escaped.

This module says which mapping a run uses (a built-in preset or a mapping file, TOML or JSON,
read and written here) and the name forms derived from text; the model itself is in
``schema_mapping`` and the quoting function in ``identifiers``, both re-exported here, so
``schema`` stays the one place callers import them from.
"""

from __future__ import annotations

import json
import re
import tomllib
import unicodedata
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import ValidationError

from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.identifiers import ELEMENT_ID as ELEMENT_ID
from guidedrag_graph.identifiers import UNPRINTABLE, printable
from guidedrag_graph.identifiers import escape_identifier as escape_identifier
from guidedrag_graph.identifiers import identifier_problem as identifier_problem
from guidedrag_graph.schema.model import Direction as Direction
from guidedrag_graph.schema.model import IdKey as IdKey
from guidedrag_graph.schema.model import Key as Key
from guidedrag_graph.schema.model import Label as Label
from guidedrag_graph.schema.model import SchemaMapping as SchemaMapping
from guidedrag_graph.schema.model import TemplateSlot as TemplateSlot
from guidedrag_graph.schema.model import template_slot as template_slot
from guidedrag_graph.vocabulary import SCHEMA_PRESETS

_NEO4J_GRAPHRAG = SchemaMapping(
    preset="neo4j-graphrag",
    entity_label="__Entity__",
    part_of_type="FROM_DOCUMENT",
    mentions_type="FROM_CHUNK",
    mentions_direction="in",
    next_chunk_type="NEXT_CHUNK",
    chunk_position="index",
    document_source="path",
)

PRESETS: dict[str, SchemaMapping] = {  # one per vocabulary.SchemaPreset (checked below)
    "guidedrag": SchemaMapping(preset="guidedrag"),
    # neo4j-graphrag's lexical graph: (Chunk)-[:FROM_DOCUMENT]->(Document),
    # (Chunk)-[:NEXT_CHUNK]->(Chunk), (__Entity__)-[:FROM_CHUNK]->(Chunk).
    "neo4j-graphrag": _NEO4J_GRAPHRAG,
    # neo4j-graphrag's SimpleKGPipeline / Neo4jWriter as it writes (checked on 1.22): the same
    # lexical graph, but no id property anywhere (nodes are addressed by elementId), the
    # document's name in `path`, entity types as labels, relations as real types.
    "neo4j-graphrag-builder": SchemaMapping(  # validated like any mapping, not a bare copy
        **{
            **_NEO4J_GRAPHRAG.model_dump(),
            "preset": "neo4j-graphrag-builder",
            "document_id": ELEMENT_ID,
            "chunk_id": ELEMENT_ID,
            "entity_id": ELEMENT_ID,
            "document_title": "path",
            "document_date": "createdAt",
        }
    ),
    # LangChain's Neo4jGraph.add_graph_documents(include_source=True, baseEntityLabel=True), the
    # layout of Neo4j's LLM Graph Builder: each source text is a (:Document {id, text, ...metadata})
    # that MENTIONS (:__Entity__ {id}) nodes; the entity's id is its name. The source node is
    # both chunk and document.
    "langchain": SchemaMapping(
        preset="langchain",
        chunk_label="Document",
        document_label="Document",
        entity_label="__Entity__",
        entity_name="id",
        part_of_type=None,
        document_source="source",
    ),
    # LlamaIndex's Neo4jPropertyGraphStore (PropertyGraphIndex): (:__Node__:Chunk {id, text,
    # embedding}) -[:MENTIONS]-> (:__Node__:__Entity__ {id, name}); the chunk keeps its document's
    # metadata (file name, ref_doc_id) as properties, so it is its own document.
    "llamaindex": SchemaMapping(
        preset="llamaindex",
        entity_label="__Entity__",
        part_of_type=None,
        document_id="ref_doc_id",
        document_title="title",
        document_source="file_name",
        entity_type="label",
    ),
}


def check_presets(presets: dict[str, SchemaMapping], names: tuple[str, ...]) -> None:
    """Fail at import when a preset is in one list only: the settings' type and the CLI's
    choices read ``vocabulary.SchemaPreset``, retrieval reads ``PRESETS``."""
    if tuple(presets) != names:
        raise ImportError(
            f"schema.PRESETS {tuple(presets)} and vocabulary.SchemaPreset {names} differ: "
            "add the preset to both"
        )


check_presets(PRESETS, SCHEMA_PRESETS)

# The preset name of a mapping read from a file (GUIDEDRAG_SCHEMA_FILE / --schema).
CUSTOM = "custom"


class _SchemaSettings(Protocol):
    """What ``schema_from_settings`` reads of ``config.Settings`` (a protocol, so this module,
    which the settings import for their name checks, imports nothing back)."""

    @property
    def schema_preset(self) -> str: ...
    @property
    def relation_mode(self) -> Literal["types", "property"] | None: ...


def schema_from_settings(settings: _SchemaSettings) -> SchemaMapping:
    """The mapping a run uses: the mapping file if one is set, else the settings' preset; with
    their relation mode applied."""
    schema_file = getattr(settings, "schema_file", None)
    if schema_file is not None:
        schema = load_schema_file(Path(schema_file))
    elif settings.schema_preset == CUSTOM:
        raise ConfigurationError(
            "GUIDEDRAG_SCHEMA_PRESET=custom needs a mapping file: pass --schema FILE or set "
            "GUIDEDRAG_SCHEMA_FILE (`guidedrag kb inspect` proposes one)"
        )
    else:
        schema = schema_for(settings.schema_preset)
    if settings.relation_mode is not None and settings.relation_mode != schema.relation_mode:
        schema = schema.model_copy(update={"relation_mode": settings.relation_mode})
    return schema


def schema_for(preset: str) -> SchemaMapping:
    try:
        return PRESETS[preset]
    except KeyError:
        raise ConfigurationError(
            f"unknown schema preset {preset!r}; choose one of {', '.join(sorted(PRESETS))}, "
            f"or pass a mapping file with --schema FILE"
        ) from None


# Mapping-file tables -> SchemaMapping fields. The flat form (field = value at the top level)
# is accepted too, so a file can be as short as the fields that differ from a preset.
_SECTIONS: dict[str, dict[str, str]] = {
    "document": {
        "label": "document_label",
        "id": "document_id",
        "title": "document_title",
        "source": "document_source",
        "date": "document_date",
    },
    "chunk": {
        "label": "chunk_label",
        "id": "chunk_id",
        "text": "chunk_text",
        "embedding": "chunk_embedding",
        "position": "chunk_position",
    },
    "entity": {
        "label": "entity_label",
        "id": "entity_id",
        "name": "entity_name",
        "name_key": "entity_key",
        "type": "entity_type",
        "description": "entity_description",
        "aliases": "entity_aliases",
        "alias_keys": "entity_alias_keys",
        "name_embedding": "entity_name_embedding",
    },
    "part_of": {"type": "part_of_type", "direction": "part_of_direction"},
    "mentions": {"type": "mentions_type", "direction": "mentions_direction"},
    "next_chunk": {"type": "next_chunk_type"},
    "relations": {
        "mode": "relation_mode",
        "generic_type": "generic_relation_type",
        "type_property": "relation_type_property",
        "text_property": "relation_text_property",
        "chunk_property": "relation_chunk_property",
    },
}


def mapping_fields(data: dict[str, Any], origin: str) -> dict[str, Any]:
    """Flatten a mapping file's tables into SchemaMapping fields; unknown keys are errors."""
    known = set(SchemaMapping.model_fields)
    fields: dict[str, Any] = {}
    for key, value in data.items():
        if key in _SECTIONS:
            if not isinstance(value, dict):
                raise ConfigurationError(f"{origin}: [{key}] must be a table of names")
            for sub, sub_value in value.items():
                if sub not in _SECTIONS[key]:
                    raise ConfigurationError(
                        f"{origin}: unknown key {key}.{sub}; known: "
                        f"{', '.join(sorted(_SECTIONS[key]))}"
                    )
                fields[_SECTIONS[key][sub]] = sub_value
        elif key in known:
            fields[key] = value
        else:
            raise ConfigurationError(
                f"{origin}: unknown key {key!r}; use the tables "
                f"{', '.join(f'[{s}]' for s in _SECTIONS)} or 'base' (a preset to start from)"
            )
    # "none"/"" in a file means "no such relationship" for the optional relationship types.
    for optional in ("part_of_type", "next_chunk_type"):
        if isinstance(fields.get(optional), str) and fields[optional].lower() in ("", "none"):
            fields[optional] = None
    return fields


def load_schema_file(path: Path) -> SchemaMapping:
    """Read a TOML or JSON mapping file (see docs/existing-kgs.md) into a SchemaMapping.

    ``base = "<preset>"`` starts from a preset (default ``guidedrag``); every other key overrides.
    """
    origin = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigurationError(
            f"cannot read the schema mapping file {origin}: {exc.strerror or exc}; check "
            f"--schema / GUIDEDRAG_SCHEMA_FILE"
        ) from None
    try:
        if path.suffix.lower() == ".json":
            data = json.loads(raw.decode("utf-8"))
        else:
            data = tomllib.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        kind = "JSON" if path.suffix.lower() == ".json" else "TOML"
        raise ConfigurationError(f"{origin} is not valid {kind}: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigurationError(f"{origin}: the mapping must be a table/object of names")
    data = dict(data)
    base = data.pop("base", "guidedrag")
    preset_name = data.pop("preset", None)
    try:
        start = schema_for(str(base))
    except ConfigurationError as exc:
        raise ConfigurationError(f"{origin}: base: {exc}") from None
    fields = mapping_fields(data, origin)
    try:
        merged = {**start.model_dump(), **fields, "preset": preset_name or CUSTOM}
        return SchemaMapping.model_validate(merged)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'mapping'}: {e['msg']}" for e in exc.errors()
        )
        raise ConfigurationError(f"{origin}: {problems}") from None


def mapping_document(schema: SchemaMapping) -> dict[str, Any]:
    """A SchemaMapping as mapping-file tables (what ``guidedrag kb inspect`` writes)."""
    values = schema.model_dump()
    out: dict[str, Any] = {}
    for section, keys in _SECTIONS.items():
        table = {sub: values[field] for sub, field in keys.items()}
        out[section] = {k: ("none" if v is None else v) for k, v in table.items()}
    return out


def _toml_string(value: Any) -> str:
    """A value as a TOML basic string (JSON's escapes are TOML's), with what JSON leaves raw of
    the characters ``printable`` escapes (C1 controls, DEL, line separators, bidirectional
    overrides: a terminal would act on them) written ``\\uXXXX`` too."""
    text = json.dumps(value, ensure_ascii=False)
    return UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def to_toml(document: dict[str, Any], header: str = "") -> str:
    """Mapping-file tables as TOML (string values only; the standard library cannot write it)."""
    # A TOML comment may hold no control character: a note naming a label read from the graph
    # is written escaped (``printable``), so it can neither end the comment nor the file.
    lines = [f"# {printable(line)}" if line else "#" for line in header.splitlines()]
    for section, table in document.items():
        if lines:
            lines.append("")
        lines.append(f"[{section}]")
        for key, value in table.items():
            lines.append(f"{key} = {_toml_string(value)}")
    return "\n".join(lines) + "\n"


def name_key(name: str) -> str:
    """Case- and whitespace-insensitive form of an entity name: NFKC, casefold, single spaces."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


_NON_WORD = re.compile(r"[^0-9A-Za-z]+")


def relation_type_name(predicate: str) -> str:
    """A free-text predicate as a valid UPPER_SNAKE relationship type.

    We keep every word (no stop-word guessing): "was born in" -> ``WAS_BORN_IN``. The original
    text is stored on the relationship, so nothing is lost. Non-ASCII letters are transliterated
    where NFKD can, dropped otherwise; an empty result becomes ``RELATED_TO``.
    """
    ascii_text = unicodedata.normalize("NFKD", predicate).encode("ascii", "ignore").decode()
    name = _NON_WORD.sub("_", ascii_text).strip("_").upper()
    if not name:
        return "RELATED_TO"
    if name[0].isdigit():
        name = "R_" + name
    return name
