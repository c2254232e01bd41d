"""Turn a ``cypher/*.cypher`` template into the query we run: schema names, selection splice.

Templates are written for the default ``guidedrag`` schema so they run as-is in Neo4j Browser
(after their ``:param`` lines). To run them on another layout we rename, never concatenate user
text: backticked labels/relationship types and the properties of a few conventional variables
(``c`` chunk, ``d`` document, ``e``/``h``/``t`` entity, ``r`` relation) are mapped through the
``SchemaMapping``, and the mentions pattern is re-drawn in the mapping's direction. The example
selection between ``// selection:begin`` and ``// selection:end`` is replaced by the compiled
selection (a fragment that binds ``c`` to each selected chunk once).
"""

from __future__ import annotations

import re

from guidedrag_graph.resources import cypher_template
from guidedrag_graph.schema import SchemaMapping

_SELECTION_RE = re.compile(
    r"^[ \t]*// selection:begin[^\n]*\n.*?^[ \t]*// selection:end[^\n]*$", re.M | re.S
)
_MENTIONS_RE = re.compile(r"\((\w+)(:`[^`]+`)?\)-\[:`MENTIONS`\]->\((\w+)(:`[^`]+`)?\)")
_PROPERTY_RE = re.compile(r"(?<![\w$.])([a-z]\w*)\.(\w+)\b")

# variable -> {default property -> SchemaMapping field naming it}
_VARIABLE_PROPERTIES: dict[str, dict[str, str]] = {
    "c": {
        "id": "chunk_id",
        "text": "chunk_text",
        "embedding": "chunk_embedding",
        "position": "chunk_position",
    },
    "d": {
        "id": "document_id",
        "title": "document_title",
        "source": "document_source",
        "date": "document_date",
    },
    "r": {
        "type": "relation_type_property",
        "predicate": "relation_text_property",
        "source_chunk": "relation_chunk_property",
    },
}
_ENTITY_PROPERTIES = {
    "id": "entity_id",
    "name": "entity_name",
    "name_key": "entity_key",
    "type": "entity_type",
    "description": "entity_description",
    "aliases": "entity_aliases",
    "alias_keys": "entity_alias_keys",
    "name_embedding": "entity_name_embedding",
}
for _var in ("e", "h", "t", "a"):
    _VARIABLE_PROPERTIES[_var] = _ENTITY_PROPERTIES

_IDENTIFIERS = {
    "`Chunk`": "chunk_label",
    "`Document`": "document_label",
    "`Entity`": "entity_label",
    "`PART_OF`": "part_of_type",
    "`RELATED_TO`": "generic_relation_type",
}


def executable(text: str) -> str:
    """Drop Browser-only lines (``:param``) and full-line comments; keep the Cypher."""
    lines = [
        line
        for line in text.splitlines()
        if not line.lstrip().startswith((":param", "//")) and line.strip()
    ]
    return "\n".join(lines)


def rename(text: str, schema: SchemaMapping) -> str:
    """Map the default schema's names in ``text`` onto ``schema`` (escaped identifiers only)."""

    def mentions(match: re.Match[str]) -> str:
        chunk_var, chunk_label, entity_var, entity_label = match.groups()
        left = f"({chunk_var}{chunk_label or ''})"
        right = f"({entity_var}{entity_label or ''})"
        rel = f"[:{schema.q(schema.mentions_type)}]"
        if schema.mentions_direction == "out":
            return f"{left}-{rel}->{right}"
        return f"{left}<-{rel}-{right}"

    def prop(match: re.Match[str]) -> str:
        var, name = match.groups()
        field = _VARIABLE_PROPERTIES.get(var, {}).get(name)
        if field is None:
            return match.group(0)
        value = getattr(schema, field, None)
        if not isinstance(value, str) or value == name:
            return match.group(0)
        return f"{var}.{schema.q(value)}"

    out = _MENTIONS_RE.sub(mentions, text)
    for token, field in _IDENTIFIERS.items():
        out = out.replace(token, schema.q(getattr(schema, field)))
    return _PROPERTY_RE.sub(prop, out)


def splice_selection(text: str, selection_cypher: str) -> str:
    """Replace the template's example selection with a compiled one."""
    if not _SELECTION_RE.search(text):
        raise ValueError("template has no `// selection:begin` ... `// selection:end` block")
    return _SELECTION_RE.sub(lambda _m: selection_cypher.strip(), text, count=1)


def render(
    name: str,
    schema: SchemaMapping,
    *,
    selection_cypher: str | None = None,
    prefix: str = "",
    replacements: dict[str, str] | None = None,
) -> str:
    """The runnable query of template ``name``; ``selection_cypher`` is spliced in after renaming
    the template (the selection compiler already speaks the schema's names)."""
    text = cypher_template(name)
    for token, value in (replacements or {}).items():
        text = text.replace(token, value)
    text = rename(text, schema)
    if selection_cypher is not None:
        text = splice_selection(text, selection_cypher)
    return prefix + executable(text)
