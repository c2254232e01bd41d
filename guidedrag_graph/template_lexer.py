"""Read a two-way Cypher template once: tokens, code lines, slots, fragments, steps, selection.

``templates.py`` renders what this module parses; it is split out so the renderer stays short.
Every slot name has exactly one kind (``KINDS``), and a slot's default text must be what the
default schema (or the default setting) renders, so a template cannot drift from what Browser
runs. Mistakes are ``ConfigurationError``s naming the file and line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Literal

from guidedrag_graph.errors import ConfigurationError

# --- the one table of slot names ---------------------------------------------------------------
LABELS = ("chunk_label", "entity_label", "document_label", "generic_relation_type")
PROPERTIES = (
    "chunk_id", "chunk_text", "chunk_embedding", "chunk_position",
    "document_id", "document_title", "document_source", "document_date",
    "entity_id", "entity_name", "entity_key", "entity_type", "entity_description",
    "entity_aliases", "entity_alias_keys", "entity_name_embedding",
    "relation_type_property", "relation_text_property", "relation_chunk_property",
)  # fmt: skip
ID_FIELDS = frozenset({"chunk_id", "entity_id", "document_id"})
# slot -> (SchemaMapping type field, direction field) and the type Browser runs by default
RELATIONSHIPS: dict[str, tuple[str, str | None]] = {
    "mentions": ("mentions_type", "mentions_direction"),
    "part_of": ("part_of_type", "part_of_direction"),
    "next_chunk": ("next_chunk_type", None),
}
_RELATIONSHIP_DEFAULTS = {
    "mentions": "MENTIONS",
    "part_of": "PART_OF",
    "next_chunk": "NEXT_CHUNK",  # the neo4j-graphrag type; the default schema has none
    "relation": "IS_CURRENCY_OF",  # a relation type of the sample KB, so Browser answers
}
# Names the caller passes (index and constraint names from the settings), with their defaults.
_PREFIXED = (
    "migration_version_constraint", "document_id_constraint", "chunk_id_constraint",
    "entity_id_constraint", "entity_name_key_index", "entity_name_index", "entity_type_index",
    "document_title_index", "document_source_index", "document_date_index",
)  # fmt: skip
NAME_DEFAULTS: dict[str, str] = {
    "vector_index": "chunk_embedding",
    "entity_fulltext_index": "entity_names",
    "entity_vector_index": "entity_name_embedding",
    # "<index_prefix>_<what>": the slot name without its _index/_constraint suffix
    **{slot: "guidedrag_" + slot.rsplit("_", 1)[0] for slot in _PREFIXED},
}
Kind = Literal["label", "name", "property", "relationship", "expression", "list"]
KINDS: dict[str, Kind] = {
    **dict.fromkeys(LABELS, "label"),
    **dict.fromkeys(NAME_DEFAULTS, "name"),
    **dict.fromkeys(PROPERTIES, "property"),
    **dict.fromkeys([*RELATIONSHIPS, "relation"], "relationship"),
    "relation_type": "expression",
    **dict.fromkeys(("tiers", "sizes", "flags"), "list"),
}

REQUIRES = re.compile(r"^//\s*requires:\s*neo4j\s*(>=|<)\s*([\d.]+)\s*$")


@dataclass(frozen=True)
class Slot:
    """``/*name*/`` and the default text it replaces (``var`` where it names a variable; for a
    list, the first element's pieces and the index of its variable)."""

    name: str
    var: str | None = None
    element: tuple[Piece, ...] = ()
    element_var: int = -1


Piece = tuple[Literal["text", "word", "param", "slot"], "str | Slot"]


@dataclass(frozen=True)
class Line:
    pieces: tuple[Piece, ...]
    number: int


@dataclass(frozen=True)
class Block:
    kind: Literal["step", "selection"]
    nodes: tuple[Node, ...]


Node = Line | Block


@dataclass(frozen=True)
class Template:
    origin: str
    body: tuple[Node, ...]
    fragments: dict[str, tuple[Node, ...]]
    has_selection: bool


# --- tokens ------------------------------------------------------------------------------------
_TOKEN = re.compile(
    r"""(?P<comment>//[^\n]*)
      | (?P<block>/\*.*?\*/)
      | (?P<string>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
      | (?P<name>`(?:[^`]|``)*`)
      | (?P<param>\$\w+)
      | (?P<word>\w+)
      | (?P<newline>\n)
      | (?P<space>[ \t\r\f\v]+)
      | (?P<open>['"`]|/\*)
      | (?P<other>.)""",
    re.S | re.X,
)
_SLOT = re.compile(r"/\*(\w+)\*/\Z")
Token = tuple[str, str, int]  # kind, text, line number


def tokens(text: str, origin: str) -> list[Token]:
    out: list[Token] = []
    line = 1
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup or "other"
        if kind == "open":
            raise ConfigurationError(f"{origin}:{line}: unterminated {m.group()!r}")
        out.append((kind, m.group(), line))
        line += m.group().count("\n")
    return out


def _lines(toks: list[Token]) -> Iterator[list[Token]]:
    current: list[Token] = []
    for tok in toks:
        if tok[0] == "newline":
            yield current
            current = []
        else:
            current.append(tok)
    if current:
        yield current


# --- lines and markers -------------------------------------------------------------------------
_MARKERS = {
    "@step": ("open", "step"),
    "@end-step": ("close", "step"),
    "@end": ("close", "fragment"),
}
Item = Line | tuple[str, str, str, int]  # a code line, or (open|close, kind, name, line)


def _items(toks: list[Token], origin: str) -> Iterator[Item]:
    for line_tokens in _lines(toks):
        solid = [t for t in line_tokens if t[0] != "space"]
        if not solid:
            continue
        number = solid[0][2]
        if len(solid) == 1 and solid[0][0] == "comment":
            marker = _marker(solid[0][1][2:].strip())
            if marker is not None:
                yield (*marker, number)
            continue
        if solid[0][1] == ":" and len(solid) > 1 and solid[1][1].startswith("param"):
            continue  # Browser's :param lines
        yield Line(tuple(_pieces(line_tokens, origin)), number)


def _marker(comment: str) -> tuple[str, str, str] | None:
    if comment.startswith("@fragment "):
        return ("open", "fragment", comment.split()[1])
    if comment.startswith("selection:begin"):
        return ("open", "selection", "")
    if comment.startswith("selection:end"):
        return ("close", "selection", "")
    if comment in _MARKERS:
        return (*_MARKERS[comment], "")
    return None


def parse(text: str, origin: str) -> Template:
    """Parse one template file (cached by the renderer per file)."""
    items = list(_items(tokens(text, origin), origin))
    fragments: dict[str, tuple[Node, ...]] = {}
    start: tuple[str, int] | None = None
    for i, item in enumerate(items):
        if isinstance(item, Line) or item[1] != "fragment":
            continue
        if item[0] == "open":
            if start is not None or item[2] in fragments:
                raise ConfigurationError(f"{origin}:{item[3]}: nested or repeated fragment")
            start = (item[2], i)
        elif start is None:
            raise ConfigurationError(f"{origin}:{item[3]}: '// @end' without '// @fragment'")
        else:
            fragments[start[0]] = _tree(items[start[1] + 1 : i], origin)
            start = None
    if start is not None:
        raise ConfigurationError(f"{origin}: fragment {start[0]!r} has no '// @end'")
    has_selection = any(not isinstance(it, Line) and it[1] == "selection" for it in items)
    return Template(origin, _tree(items, origin), fragments, has_selection)


def parse_statements(text: str, origin: str) -> list[tuple[Node, ...]]:
    """A migration file as statements, split at each ``;`` outside strings and comments."""
    out: list[tuple[Node, ...]] = []
    current: list[Token] = []
    for tok in [*tokens(text, origin), ("other", ";", 0)]:
        if tok[:2] == ("other", ";"):
            out.append(_tree(list(_items(current, origin)), origin))
            current = []
        else:
            current.append(tok)
    return out


def _tree(items: list[Item], origin: str) -> tuple[Node, ...]:
    stack: list[tuple[str, list[Node]]] = [("", [])]
    for item in items:
        if isinstance(item, Line):
            stack[-1][1].append(item)
        elif item[1] == "fragment":
            continue
        elif item[0] == "open":
            stack.append((item[1], []))
        elif stack[-1][0] != item[1]:
            raise ConfigurationError(f"{origin}:{item[3]}: unbalanced '{item[1]}' marker")
        else:
            kind, nodes = stack.pop()
            stack[-1][1].append(Block(kind, tuple(nodes)))  # type: ignore[arg-type]
    if len(stack) != 1:
        raise ConfigurationError(f"{origin}: '{stack[-1][0]}' section is not closed")
    return tuple(stack[0][1])


# --- pieces and slots --------------------------------------------------------------------------
def _pieces(toks: list[Token], origin: str) -> Iterator[Piece]:
    i = 0
    while i < len(toks):
        kind, text, line = toks[i]
        slot = _SLOT.match(text) if kind == "block" else None
        if slot:
            parsed, i = _slot(slot.group(1), toks, i + 1, f"{origin}:{line}")
            yield ("slot", parsed)
            continue
        if kind == "word" and not (i and toks[i - 1][1] == "."):
            yield ("word", text)
        elif kind == "param":
            yield ("param", text[1:])
        else:
            yield ("text", text)
        i += 1


def _slot(name: str, toks: list[Token], i: int, where: str) -> tuple[Slot, int]:
    if name not in KINDS:
        raise ConfigurationError(
            f"{where}: unknown slot /*{name}*/; known slots: {', '.join(sorted(KINDS))}"
        )
    kind = KINDS[name]
    ahead = [(t[0], t[1]) for t in toks[i : i + 12]] + [("", "")] * 12
    text = [t for _, t in ahead]
    named = [k in ("word", "name") for k, _ in ahead]
    if kind == "list":
        return _list_slot(name, toks, i, where)
    if kind == "relationship":
        return _relationship_slot(name, ahead, i, where)
    if kind == "expression" and text[0:2] == ["type", "("] and named[2] and text[3] == ")":
        return Slot(name, text[2]), i + 4
    if kind in ("label", "name") and named[0]:
        _check_default(name, _unquote(text[0]), where)
        return Slot(name), i + 1
    if kind == "property" and named[0]:
        if text[1] == "." and named[2] and ahead[0][0] == "word":
            _check_default(name, _unquote(text[2]), where)
            return Slot(name, text[0]), i + 3
        _check_default(name, _unquote(text[0]), where)
        return Slot(name), i + 1
    raise ConfigurationError(f"{where}: slot /*{name}*/ is not followed by its default text")


def _relationship_slot(
    name: str, ahead: list[tuple[str, str]], i: int, where: str
) -> tuple[Slot, int]:
    """``-[v:TYPE]->``, ``<-[v:TYPE]-`` or ``-[v:TYPE]-`` (the variable is optional)."""
    text = [t for _, t in ahead]
    j = 1 if text[0] == "<" else 0
    var = None
    if text[j : j + 2] == ["-", "["]:
        j += 2
        if ahead[j][0] == "word":
            var = text[j]
            j += 1
        if (
            text[j] == ":"
            and ahead[j + 1][0] in ("word", "name")
            and text[j + 2 : j + 4]
            == [
                "]",
                "-",
            ]
        ):
            _check_default(name, _unquote(text[j + 1]), where)
            j += 5 if text[j + 4] == ">" else 4
            return Slot(name, var), i + j
    raise ConfigurationError(f"{where}: slot /*{name}*/ must be followed by -[:TYPE]->")


def _list_slot(name: str, toks: list[Token], i: int, where: str) -> tuple[Slot, int]:
    """``[elem, ...]``: kept is the first element, written with exactly one variable."""
    if i >= len(toks) or toks[i][1] != "[":
        raise ConfigurationError(f"{where}: slot /*{name}*/ must be followed by a [list]")
    depth, first_end, j = 0, -1, i
    for j in range(i, len(toks)):
        kind, text, _ = toks[j]
        if kind != "other":
            continue
        if text in "[({":
            depth += 1
        elif text in "])}":
            depth -= 1
        elif text == "," and depth == 1 and first_end < 0:
            first_end = j
        if depth == 0:
            break
    else:
        raise ConfigurationError(f"{where}: slot /*{name}*/: the list is not closed")
    inner = toks[i + 1 : first_end if first_end >= 0 else j]
    element = tuple(_pieces(_trim(inner), where))
    words = [
        k
        for k, (kind, _) in enumerate(element)
        if kind == "word" and element[k + 1 : k + 2] != (("text", "("),)
    ]
    if len(words) != 1 or any(kind == "slot" for kind, _ in element):
        raise ConfigurationError(
            f"{where}: the first element of /*{name}*/ must name exactly one variable"
        )
    return Slot(name, element=element, element_var=words[0]), j + 1


def _trim(toks: list[Token]) -> list[Token]:
    solid = [k for k, t in enumerate(toks) if t[0] != "space"]
    return toks[solid[0] : solid[-1] + 1] if solid else []


def _unquote(token: str) -> str:
    return token[1:-1].replace("``", "`") if token.startswith("`") else token


def _check_default(name: str, written: str, where: str) -> None:
    expected = _default(name)
    if written != expected:
        raise ConfigurationError(
            f"{where}: slot /*{name}*/ is followed by {written!r}, but its default is "
            f"{expected!r} (what Browser must run)"
        )


@cache
def _default(name: str) -> str:
    if name in NAME_DEFAULTS:
        return NAME_DEFAULTS[name]
    if name in _RELATIONSHIP_DEFAULTS:
        return _RELATIONSHIP_DEFAULTS[name]
    # Imported here: the schema module imports the renderer (escaping), not the other way.
    from guidedrag_graph.schema import SchemaMapping

    return str(SchemaMapping.model_fields[name].default)
