"""The one quoting function for Cypher names, and the read-time check of names a person writes.

Split out of ``schema.py`` so the rule every identifier passes through stands alone, below the
schema mapping, the settings and the renderer that all use it: nothing here knows where a name
comes from, only whether it can be quoted (``escape_identifier``) and whether a person may write
it (``identifier_problem``). ``schema`` and ``templates`` re-export both names.
"""

from __future__ import annotations

import re

from guidedrag_graph.errors import ConfigurationError

# An id field mapped to this value addresses nodes by Neo4j's elementId instead of a property
# (graphs written by KG builders, neo4j-graphrag's SimpleKGPipeline, have no id property at all):
# ``/*chunk_id*/c.id`` renders ``elementId(c)``.
ELEMENT_ID = "elementId()"


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
