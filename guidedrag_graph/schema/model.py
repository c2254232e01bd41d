"""What a schema mapping is: the ``SchemaMapping`` model and the template slot of each field.

Split out of ``schema/presets.py`` so the model (its fields, their slot annotations, the checks
every
mapping passes when built) reads apart from where a run's mapping comes from (the presets and
mapping files ``schema`` holds). ``schema`` re-exports every public name here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.identifiers import ELEMENT_ID, identifier_problem


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
