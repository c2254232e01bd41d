"""Fragments of the ``cypher/`` files, rewritten for a schema mapping: the compiler's only Cypher.

Convention (documented in README "Selections"): a template file runs as-is in Neo4j Browser with
its ``:param`` lines; the compiler takes only the text between ``// @fragment <name>`` and
``// @end``. Inside a fragment, ``// @step`` ... ``// @end-step`` marks the part repeated once per
hop. The files are written for the default schema preset, and ``render`` maps its names to the
configured ``SchemaMapping``, always backtick-escaped:

- labels ``:Chunk``, ``:Entity``, ``:Document`` and the generic relation ``:RELATED_TO``;
- the patterns ``(c:Chunk)-[:MENTIONS]->(e)`` (direction from the mapping) and
  ``(c:Chunk)-[:PART_OF]->(d:Document)``;
- properties by variable: ``c.*`` chunk, ``d.*`` document, ``e.* e2.* x.* y.*`` entity, ``r.*``
  relation; a property the mapping does not know is an error, so a template cannot drift;
- ``IS_CURRENCY_OF`` in ``[r:IS_CURRENCY_OF]`` is the example relation type (it exists in the
  sample KB, so the file answers in Browser); the compiler replaces it with
  validated, escaped types as the very last step, so no later rewrite can touch them.

No value ever enters the text: values are ``$sel_*`` parameters.
"""

from __future__ import annotations

import re
from functools import cache

from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.resources import cypher_template
from guidedrag_graph.schema import SchemaMapping

REL_TYPES_SLOT = "\x00REL_TYPES\x00"

_FRAGMENT = re.compile(r"^[ \t]*// @fragment (\w+)[ \t]*\n(.*?)^[ \t]*// @end[ \t]*$", re.S | re.M)
_STEP = re.compile(r"^[ \t]*// @step[ \t]*\n(.*?)^[ \t]*// @end-step[ \t]*\n", re.S | re.M)

_VARIABLE_KIND = {
    "c": "chunk",
    "d": "document",
    "e": "entity",
    "e2": "entity",
    "x": "entity",
    "y": "entity",
    "h": "entity",
    "t": "entity",
    "a": "entity",
    "r": "relation",
}
_PROPERTIES: dict[str, dict[str, str]] = {
    "chunk": {
        "id": "chunk_id",
        "text": "chunk_text",
        "embedding": "chunk_embedding",
        "position": "chunk_position",
    },
    "document": {
        "id": "document_id",
        "title": "document_title",
        "source": "document_source",
        "date": "document_date",
    },
    "entity": {
        "id": "entity_id",
        "name": "entity_name",
        "name_key": "entity_key",
        "type": "entity_type",
        "description": "entity_description",
        "aliases": "entity_aliases",
        "alias_keys": "entity_alias_keys",
        "name_embedding": "entity_name_embedding",
    },
    "relation": {
        "type": "relation_type_property",
        "predicate": "relation_text_property",
        "source_chunk": "relation_chunk_property",
    },
}
_LABELS = {
    "Chunk": "chunk_label",
    "Entity": "entity_label",
    "Document": "document_label",
    "RELATED_TO": "generic_relation_type",
}

# Names may be written bare (selection fragments) or backticked (whole query templates).
_MENTIONS = re.compile(
    r"\((\w+)(:`?Chunk`?)?\)-\[:`?MENTIONS`?\]->\((\w+)(:`?Entity`?)?\)"
)
_PART_OF = re.compile(
    r"\((\w+)(:`?Chunk`?)?\)-\[:`?PART_OF`?\]->\((\w+)(:`?Document`?)?\)"
)
_LABEL = re.compile(r":`?(Chunk|Entity|Document|RELATED_TO)\b`?")
_PROPERTY = re.compile(r"(?<![\w.$`])(c|d|e|e2|x|y|h|t|a|r)\.([A-Za-z_]\w*)")
_EXAMPLE_TYPE = re.compile(r"\[(r?):IS_CURRENCY_OF\]")


@cache
def fragment(file: str, name: str) -> str:
    """The raw text of fragment ``name`` in ``cypher/<file>.cypher`` (markers excluded)."""
    text = cypher_template(file)
    for match in _FRAGMENT.finditer(text):
        if match.group(1) == name:
            return match.group(2)
    raise ConfigurationError(
        f"cypher/{file}.cypher has no '// @fragment {name}' section; reinstall the package"
    )


def expand_steps(text: str, times: int) -> str:
    """Repeat the ``// @step`` section ``times`` times (hops are unrolled, never enumerated)."""
    return _STEP.sub(lambda m: m.group(1) * times, text)


def render(text: str, schema: SchemaMapping) -> str:
    """Map the default-schema names of a fragment to ``schema``'s escaped names."""
    q = schema.q

    def labelled(var: str, label: str | None, field: str) -> str:
        return var + (":" + q(getattr(schema, field)) if label else "")

    def mentions(m: re.Match[str]) -> str:
        return schema.mentions_pattern(
            labelled(m.group(1), m.group(2), "chunk_label"),
            labelled(m.group(3), m.group(4), "entity_label"),
        )

    def part_of(m: re.Match[str]) -> str:
        return schema.part_of_pattern(
            labelled(m.group(1), m.group(2), "chunk_label"),
            labelled(m.group(3), m.group(4), "document_label"),
        )

    def prop(m: re.Match[str]) -> str:
        var, name = m.group(1), m.group(2)
        table = _PROPERTIES[_VARIABLE_KIND[var]]
        if name not in table:
            raise ConfigurationError(
                f"template property {var}.{name} has no SchemaMapping field; add it to "
                f"selection/templates.py _PROPERTIES"
            )
        return f"{var}.{q(getattr(schema, table[name]))}"

    out = _MENTIONS.sub(mentions, text)
    out = _PART_OF.sub(part_of, out)
    out = _EXAMPLE_TYPE.sub(lambda m: f"[{m.group(1)}:{REL_TYPES_SLOT}]", out)
    out = _LABEL.sub(lambda m: ":" + q(getattr(schema, _LABELS[m.group(1)])), out)
    return _PROPERTY.sub(prop, out)


def rename_params(text: str, prefix: str) -> str:
    """``$sel_ids`` -> ``$sel_<prefix>_ids`` so every term of an expression has its own values."""
    return re.sub(r"\$sel_(\w+)", lambda m: f"$sel_{prefix}_{m.group(1)}", text)


def rename_vars(text: str, mapping: dict[str, str]) -> str:
    """Rename whole-word variables (templates avoid these names for anything else)."""
    if not mapping:
        return text
    pattern = re.compile(r"(?<![\w$.`])(" + "|".join(map(re.escape, mapping)) + r")\b")
    return pattern.sub(lambda m: mapping[m.group(1)], text)


def query(file: str, name: str, schema: SchemaMapping) -> str:
    """A whole stand-alone query (resolution, suggestions) from one fragment."""
    return render(fragment(file, name), schema).strip()
