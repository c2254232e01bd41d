"""How a knowledge graph names its chunks, documents, entities and relations.

Users bring graphs built by other tools, so no label, relationship type or property name is
hard-coded anywhere else: every query takes them from a ``SchemaMapping``. The names come from
this mapping (or are validated against the database) and are always backtick-escaped.
"""

from __future__ import annotations

import json
import re
import tomllib
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.vocabulary import SCHEMA_PRESETS

# An id field mapped to this value addresses nodes by Neo4j's elementId instead of a property
# (graphs written by KG builders, neo4j-graphrag's SimpleKGPipeline, have no id property at all):
# ``/*chunk_id*/c.id`` renders ``elementId(c)``.
ELEMENT_ID = "elementId()"


# --- identifiers: the one quoting function and the read-time check of written names ------------
# Neo4j decodes ``\uXXXX`` inside backtick-quoted names, so ``\u0060`` would close the quotes.
# Every backslash is therefore written as the escape of a backslash: Neo4j reads the name back
# exactly, and no escape in the name survives to be decoded.
_BACKSLASH = "\\u005c"
# Never representable (lone surrogates: not UTF-8) or truncating (NUL) in any identifier.
_UNQUOTABLE = re.compile("[\x00\ud800-\udfff]")
# Refused where a person writes names (mapping files, presets, settings): control characters,
# the bidirectional overrides that make a name display as something else (trojan source), and
# backslashes (a ``\u0060`` there is an attack or a mistake, never a name anyone means).
_UNWRITABLE = re.compile(
    "[\\\\\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def escape_identifier(name: str, source: str = "identifier") -> str:
    """THE quoting function: the only way a label, relationship type, property key, index or
    constraint name enters Cypher text, whoever supplies it (mapping file, preset, setting, a
    name read from the database, a filter key). Backticks are doubled and backslashes become
    ``\\u005c`` so Neo4j's unicode-escape decoding cannot end the quotes; a name with NUL or a
    lone surrogate is refused, naming ``source`` (the field or setting it came from).

    >>> escape_identifier("Chunk\\u0060) RETURN 1 //")
    '`Chunk\\\\u005cu0060) RETURN 1 //`'
    """
    if not isinstance(name, str) or not name:
        raise ConfigurationError(f"{source} = {name!r} must be a non-empty name")
    bad = _UNQUOTABLE.search(name)
    if bad is not None:
        what = "NUL" if bad.group() == "\x00" else "a lone surrogate"
        shown = name.encode("utf-8", "backslashreplace").decode()
        raise ConfigurationError(
            f"{source} = {shown!r} contains {what} and cannot be a Neo4j name; "
            "rename it to plain UTF-8 text"
        )
    return "`" + name.replace("\\", _BACKSLASH).replace("`", "``") + "`"


def identifier_problem(name: str) -> str | None:
    """Why ``name`` may not be written as a label, type, key or index name by a person (a
    mapping file, preset or setting), or ``None``: checked when the name is read, so a bad one
    is refused before any query runs. Names read from the database only meet
    ``escape_identifier``'s narrower refusal (they exist already)."""
    bad = _UNWRITABLE.search(name)
    if bad is None:
        return None
    char = bad.group()
    if char == "\\":
        return "contains a backslash (Neo4j would decode \\uXXXX escapes in it); remove it"
    if char == "\x00":
        kind = "NUL"
    elif "\ud800" <= char <= "\udfff":
        kind = "a lone surrogate"
    elif char <= "\x9f":
        kind = "a control character"
    else:
        kind = "a bidirectional control character"
    return f"contains {kind} (U+{ord(char):04X}); use printable text"


# --- where each mapping field goes in a template -----------------------------------------------
@dataclass(frozen=True)
class TemplateSlot:
    """A ``SchemaMapping`` field's place in the ``cypher/`` templates (``template_lexer`` builds
    its slot tables from these, so a new field is a slot by being declared here, once):
    ``label`` (a label or relationship type name), ``property`` (a property key; ``element_id``
    where the field may be ``elementId()``), ``relationship`` (the type of the relationship slot
    ``slot``) or ``direction`` (that slot's direction)."""

    kind: Literal["label", "property", "relationship", "direction"]
    slot: str = ""
    element_id: bool = False


_LABEL = TemplateSlot("label")
_PROPERTY = TemplateSlot("property")
_ID = TemplateSlot("property", element_id=True)
Label = Annotated[str, _LABEL]
Key = Annotated[str, _PROPERTY]
IdKey = Annotated[str, _ID]
Direction = Literal["out", "in"]


def template_slot(field: str) -> TemplateSlot | None:
    """The template slot of a ``SchemaMapping`` field (``None``: the field is no slot)."""
    info = SchemaMapping.model_fields.get(field)
    found = [m for m in (info.metadata if info else ()) if isinstance(m, TemplateSlot)]
    return found[0] if found else None


class SchemaMapping(BaseModel):
    """Labels, relationship types, directions and property names of one KB layout. Each field's
    annotation says which template slot it fills (``TemplateSlot``)."""

    model_config = ConfigDict(frozen=True)

    preset: str = "custom"

    document_label: Label = "Document"
    chunk_label: Label = "Chunk"
    entity_label: Label = "Entity"

    document_id: IdKey = "id"
    document_title: Key = "title"
    document_source: Key = "source"
    document_date: Key = "date"

    chunk_id: IdKey = "id"
    chunk_text: Key = "text"
    chunk_embedding: Key = "embedding"
    chunk_position: Key = "position"

    entity_id: IdKey = "id"
    entity_name: Key = "name"
    entity_key: Key = Field(
        "name_key", description="normalised name for case/whitespace-insensitive matching"
    )
    entity_type: Key = "type"
    entity_description: Key = "description"
    entity_aliases: Key = "aliases"
    entity_alias_keys: Key = "alias_keys"
    entity_name_embedding: Key = "name_embedding"

    # (chunk)-[part_of]->(document) when "out"; (document)-[part_of]->(chunk) when "in"
    # (``(:Article)-[:HAS_PART]->(:Passage)``). ``None``: a chunk is its own document (LangChain's
    # and LlamaIndex's source nodes carry text and metadata on one node).
    part_of_type: Annotated[str | None, TemplateSlot("relationship", "part_of")] = "PART_OF"
    part_of_direction: Annotated[Direction, TemplateSlot("direction", "part_of")] = "out"
    # mentions: chunk -> entity when "out", entity -> chunk when "in" (neo4j-graphrag FROM_CHUNK)
    mentions_type: Annotated[str, TemplateSlot("relationship", "mentions")] = "MENTIONS"
    mentions_direction: Annotated[Direction, TemplateSlot("direction", "mentions")] = "out"
    next_chunk_type: Annotated[str | None, TemplateSlot("relationship", "next_chunk")] = None

    # Relations between entities: real relationship types, or one generic type with a property.
    relation_mode: Literal["types", "property"] = "types"
    generic_relation_type: Label = "RELATED_TO"
    relation_type_property: Key = "type"
    relation_text_property: Key = "predicate"
    relation_chunk_property: Key = "source_chunk"

    @model_validator(mode="before")
    @classmethod
    def _own_document(cls, data: Any) -> Any:
        """Without a part-of relationship the chunk node is its document: one label for both."""
        if isinstance(data, dict) and "part_of_type" in data and data["part_of_type"] is None:
            chunk_label = data.get("chunk_label", cls.model_fields["chunk_label"].default)
            data = {**data, "document_label": chunk_label}
        return data

    @model_validator(mode="after")
    def _names_are_usable(self) -> SchemaMapping:
        for name, value in self.__dict__.items():
            if isinstance(value, str) and not value.strip():
                raise ValueError(f"{name} is empty")
            # Checked when read, so a hostile mapping is refused before any query runs.
            problem = identifier_problem(value) if isinstance(value, str) else None
            if problem is not None:
                raise ValueError(f"{name} = {_shown(value)} {problem}")
            if value == ELEMENT_ID and name not in _ID_FIELDS:
                raise ValueError(
                    f"{name} = {ELEMENT_ID!r}: only {', '.join(_ID_FIELDS)} may use elementId()"
                )
        return self

    def check_loadable(self) -> None:
        """The loader MERGEs on id properties and links chunks to documents: a mapping for a
        builder's graph (elementId ids, chunks as their own documents) is for reading only."""
        if self.uses_element_ids or self.part_of_type is None:
            why = "maps an id to elementId()" if self.uses_element_ids else "has no part-of type"
            raise ConfigurationError(
                f"schema {self.preset!r} {why}, so `guidedrag load` cannot write bundles with it "
                f"(it MERGEs on id properties); load with a preset that has them, or use the "
                f"graph as it is with `guidedrag kb adopt`"
            )

    @property
    def uses_element_ids(self) -> bool:
        return ELEMENT_ID in (self.document_id, self.chunk_id, self.entity_id)

    @property
    def structural_relationship_types(self) -> frozenset[str]:
        """Relationship types that belong to the lexical graph, never to entity relations."""
        types = {self.mentions_type}
        if self.part_of_type:
            types.add(self.part_of_type)
        if self.next_chunk_type:
            types.add(self.next_chunk_type)
        return frozenset(types)


# The fields that may be ELEMENT_ID (the id keys).
_ID_FIELDS = tuple(
    name for name in SchemaMapping.model_fields if (template_slot(name) or _LABEL).element_id
)


def _shown(value: str) -> str:
    """``value`` quoted with its invisible characters escaped, so the error line stays one line."""
    return repr(value.encode("utf-8", "backslashreplace").decode())


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


def to_toml(document: dict[str, Any], header: str = "") -> str:
    """Mapping-file tables as TOML (string values only; the standard library cannot write it)."""
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    for section, table in document.items():
        if lines:
            lines.append("")
        lines.append(f"[{section}]")
        for key, value in table.items():
            lines.append(f"{key} = {json.dumps(value, ensure_ascii=False)}")
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
