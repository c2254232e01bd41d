"""How a knowledge graph names its chunks, documents, entities and relations.

Users bring graphs built by other tools, so no label, relationship type or property name is
hard-coded anywhere else: every query takes them from a ``SchemaMapping``. The names come from
this mapping (or are validated against the database) and are always backtick-escaped.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from guidedrag_graph.config import Settings
from guidedrag_graph.db import escape_identifier


class SchemaMapping(BaseModel):
    """Labels, relationship types, directions and property names of one KB layout."""

    model_config = ConfigDict(frozen=True)

    preset: str = "custom"

    document_label: str = "Document"
    chunk_label: str = "Chunk"
    entity_label: str = "Entity"

    document_id: str = "id"
    document_title: str = "title"
    document_source: str = "source"
    document_date: str = "date"

    chunk_id: str = "id"
    chunk_text: str = "text"
    chunk_embedding: str = "embedding"
    chunk_position: str = "position"

    entity_id: str = "id"
    entity_name: str = "name"
    entity_key: str = Field(
        "name_key", description="normalised name for case/whitespace-insensitive matching"
    )
    entity_type: str = "type"
    entity_description: str = "description"
    entity_aliases: str = "aliases"
    entity_alias_keys: str = "alias_keys"
    entity_name_embedding: str = "name_embedding"

    # (chunk)-[part_of]->(document)
    part_of_type: str = "PART_OF"
    # mentions: chunk -> entity when "out", entity -> chunk when "in" (neo4j-graphrag FROM_CHUNK)
    mentions_type: str = "MENTIONS"
    mentions_direction: Literal["out", "in"] = "out"
    next_chunk_type: str | None = None

    # Relations between entities: real relationship types, or one generic type with a property.
    relation_mode: Literal["types", "property"] = "types"
    generic_relation_type: str = "RELATED_TO"
    relation_type_property: str = "type"
    relation_text_property: str = "predicate"
    relation_chunk_property: str = "source_chunk"

    def q(self, name: str) -> str:
        """Escaped identifier; a shorthand used by the query builders."""
        return escape_identifier(name)

    def mentions_pattern(self, chunk_var: str, entity_var: str) -> str:
        rel = f"[:{self.q(self.mentions_type)}]"
        if self.mentions_direction == "out":
            return f"({chunk_var})-{rel}->({entity_var})"
        return f"({chunk_var})<-{rel}-({entity_var})"

    def part_of_pattern(self, chunk_var: str, document_var: str) -> str:
        return f"({chunk_var})-[:{self.q(self.part_of_type)}]->({document_var})"

    @property
    def structural_relationship_types(self) -> frozenset[str]:
        """Relationship types that belong to the lexical graph, never to entity relations."""
        types = {self.part_of_type, self.mentions_type}
        if self.next_chunk_type:
            types.add(self.next_chunk_type)
        return frozenset(types)


PRESETS: dict[str, SchemaMapping] = {
    "guidedrag": SchemaMapping(preset="guidedrag"),
    # neo4j-graphrag's lexical graph: (Chunk)-[:FROM_DOCUMENT]->(Document),
    # (Chunk)-[:NEXT_CHUNK]->(Chunk), (__Entity__)-[:FROM_CHUNK]->(Chunk).
    "neo4j-graphrag": SchemaMapping(
        preset="neo4j-graphrag",
        entity_label="__Entity__",
        part_of_type="FROM_DOCUMENT",
        mentions_type="FROM_CHUNK",
        mentions_direction="in",
        next_chunk_type="NEXT_CHUNK",
        chunk_position="index",
        document_source="path",
    ),
}


def schema_from_settings(settings: Settings) -> SchemaMapping:
    """The mapping a run uses: the settings' preset, with their relation mode applied."""
    schema = schema_for(settings.schema_preset)
    if settings.relation_mode is not None and settings.relation_mode != schema.relation_mode:
        schema = schema.model_copy(update={"relation_mode": settings.relation_mode})
    return schema


def schema_for(preset: str) -> SchemaMapping:
    try:
        return PRESETS[preset]
    except KeyError:
        raise ValueError(
            f"unknown schema preset {preset!r}; choose one of {', '.join(sorted(PRESETS))}"
        ) from None


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
