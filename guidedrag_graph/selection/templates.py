"""Fragments of the ``cypher/`` files, rewritten for a schema mapping: the compiler's only Cypher.

Convention (documented in docs/selections.md): a template file runs as-is in Neo4j Browser with
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

from guidedrag_graph.db import escape_identifier
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.resources import cypher_template
from guidedrag_graph.schema import ELEMENT_ID, SchemaMapping

REL_TYPES_SLOT = "\x00REL_TYPES\x00"

# An id mapping of ELEMENT_ID ("elementId()") means "the node's element id": ``c.id`` renders as
# ``elementId(c)``, for graphs whose chunks, entities or documents have no id property.
_ID_FIELDS = frozenset({"chunk_id", "entity_id", "document_id"})

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


def slot(name: str) -> str:
    """A placeholder for identifier ``name`` that no later rewrite can match or cut.

    Each UTF-8 byte becomes a private-use character (never a word character, quote, backtick,
    newline or ``//``) between NULs; ``finalize`` turns it into the backtick-escaped identifier
    as the very last step, so escaping happens exactly once, after every rename, comment strip
    and splice (issue 10, D7).
    """
    if not isinstance(name, str) or not name:
        raise ConfigurationError(f"schema identifier {name!r} must be a non-empty string")
    try:
        data = name.encode("utf-8")
    except UnicodeEncodeError:
        raise ConfigurationError(
            f"schema identifier {name.encode('utf-8', 'backslashreplace').decode()!r} is not "
            f"valid text (a lone surrogate); set it to UTF-8 text"
        ) from None
    return "\x00" + "".join(chr(_SLOT_BASE + b) for b in data) + "\x00"


_SLOT_BASE = 0xE000
_SLOT = re.compile("\x00([\ue000-\ue0ff]+)\x00")


def finalize(text: str) -> str:
    """Replace every identifier slot with its escaped identifier: the last step of rendering."""

    def escaped(m: re.Match[str]) -> str:
        return escape_identifier(bytes(ord(c) - _SLOT_BASE for c in m.group(1)).decode("utf-8"))

    return _SLOT.sub(escaped, text)


_MENTIONS_PLACEHOLDER = "GuidedragMentionsPlaceholder"
_PART_OF_PLACEHOLDER = "GuidedragPartOfPlaceholder"


def _pattern_proxy(schema: SchemaMapping) -> SchemaMapping:
    """``schema`` with plain placeholder relationship types (no validation: a copy)."""
    update: dict[str, str] = {"mentions_type": _MENTIONS_PLACEHOLDER}
    if getattr(schema, "part_of_type", None) is not None:
        update["part_of_type"] = _PART_OF_PLACEHOLDER
    return schema.model_copy(update=update)


def render(text: str, schema: SchemaMapping) -> str:
    """Map the default-schema names of a fragment to ``schema``'s escaped names."""
    return finalize(render_slots(text, schema))


def render_slots(text: str, schema: SchemaMapping) -> str:
    """``render`` with identifiers left as slots (``finalize`` escapes them at the very end):
    what the compiler and the template renderer use, so their later rewrites (variable and
    parameter renaming, comment stripping, splicing) can never touch an identifier."""

    def labelled(var: str, label: str | None, field: str) -> str:
        return var + (":" + slot(getattr(schema, field)) if label else "")

    # The patterns' shape (directions, a missing part-of) is the mapping's own business; it
    # builds them around placeholder type names that are then swapped for slots.
    shaped = _pattern_proxy(schema)

    def mentions(m: re.Match[str]) -> str:
        text = shaped.mentions_pattern(
            labelled(m.group(1), m.group(2), "chunk_label"),
            labelled(m.group(3), m.group(4), "entity_label"),
        )
        return text.replace(f"`{_MENTIONS_PLACEHOLDER}`", slot(schema.mentions_type))

    def part_of(m: re.Match[str]) -> str:
        text = shaped.part_of_pattern(
            labelled(m.group(1), m.group(2), "chunk_label"),
            labelled(m.group(3), m.group(4), "document_label"),
        )
        part_of_type = getattr(schema, "part_of_type", None)
        if part_of_type is None:
            return text
        return text.replace(f"`{_PART_OF_PLACEHOLDER}`", slot(part_of_type))

    def prop(m: re.Match[str]) -> str:
        var, name = m.group(1), m.group(2)
        table = _PROPERTIES[_VARIABLE_KIND[var]]
        if name not in table:
            raise ConfigurationError(
                f"template property {var}.{name} has no SchemaMapping field; add it to "
                f"selection/templates.py _PROPERTIES"
            )
        key = getattr(schema, table[name])
        if key == ELEMENT_ID and table[name] in _ID_FIELDS:
            return f"elementId({var})"  # graphs whose nodes carry no id property
        return f"{var}.{slot(key)}"

    out = _MENTIONS.sub(mentions, text)
    out = _PART_OF.sub(part_of, out)
    out = _EXAMPLE_TYPE.sub(lambda m: f"[{m.group(1)}:{REL_TYPES_SLOT}]", out)
    out = _LABEL.sub(lambda m: ":" + slot(getattr(schema, _LABELS[m.group(1)])), out)
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
    return finalize(render_slots(fragment(file, name), schema)).strip()


def property_of(var: str, name: str, schema: SchemaMapping) -> str:
    """``var.name`` mapped and escaped like a template's (``c.id`` -> ``c.`id```, or
    ``elementId(c)``), for the few RETURN clauses the selector appends."""
    return finalize(render_slots(f"{var}.{name}", schema))
