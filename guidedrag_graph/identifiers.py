"""The one quoting function for Cypher names, and the read-time check of names a person writes.

Split out of ``schema/presets.py`` so the rule every identifier passes through stands alone, below
the
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

    >>> escape_identifier("Chunk\\\\u0060) RETURN 1 //")
    '`Chunk\\\\u005cu0060) RETURN 1 //`'
    >>> escape_identifier("Chunk`) RETURN 1 //")
    '`Chunk``) RETURN 1 //`'
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


# What a terminal or a Cypher comment must never receive raw: C0/C1 controls (newlines, ESC that
# starts ANSI/OSC sequences), the line and paragraph separators, bidirectional overrides and
# isolates (trojan source) and lone surrogates (unprintable, unencodable).
UNPRINTABLE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` safe for a terminal and for one line: every control character (newline, ESC
    of an ANSI/OSC sequence, C1), line separator, bidirectional override and lone surrogate
    written as its ``\\xNN``/``\\uNNNN`` escape. What the database or a user supplies passes
    through here before it is printed (``kb inspect``, every ``error:`` line), so no name can
    move the cursor, retitle the terminal or fake a line of output.

    >>> printable("a\\nfitting preset: x\\x1b]0;t\\x07")
    'a\\\\x0afitting preset: x\\\\x1b]0;t\\\\x07'
    """
    return UNPRINTABLE.sub(_escaped, text)


# A credential written as key=value anywhere (``bolt://h;password=x``, ``bolt://h password=x``,
# a connection string): the value is masked whatever precedes the key.
_KEY_VALUE = re.compile(
    r"(?i)\b(password|passwd|pwd|secret|token|api[_-]?key|credentials?)"
    r"(\s*=\s*)(?:'[^']*'|\"[^\"]*\"|[^\s;&,'\")]+)"
)


def mask_credentials(text: str) -> str:
    """``text`` with the value of every ``password=...`` (and ``token=``, ``secret=`` ...)
    masked: a URI written ``bolt://h;password=x`` or ``bolt://h password=x`` must not echo
    its secret into an error line or a traceback (``redact_uri`` and the CLI's ``redact``
    handle ``user:pass@`` and ``?query`` and then this).

    >>> mask_credentials("bolt://h:7687;password=s3cret x")
    'bolt://h:7687;password=**** x'
    """
    return _KEY_VALUE.sub(r"\1\2****", text)


def quote_name(name: str) -> str:
    """A name from the database or the user as printed inside a Cypher comment, a Browser
    script or a suggestion list: single-quoted, backslashes and quotes escaped, and every
    character that could end the comment's line (``printable``) escaped. The counterpart of
    ``escape_identifier`` for names that are shown rather than run.

    >>> quote_name("IS_CURRENCY_OF\\nCREATE (:Pwned);")
    "'IS_CURRENCY_OF\\\\x0aCREATE (:Pwned);'"
    """
    return "'" + printable(name.replace("\\", "\\\\").replace("'", "\\'")) + "'"


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
