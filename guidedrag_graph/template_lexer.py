"""Read a two-way Cypher template once: tokens, code lines, slots, fragments, steps, selection,
variant blocks and includes.

``templates.py`` renders what this module parses; it is split out so the renderer stays short.
Every slot name has exactly one kind (``KINDS``; the schema slots are read from the
``SchemaMapping`` field annotations, so this module imports the schema and nothing imports it
back), and a slot's default text, arrow included, must be what the default schema (or the
default setting) renders, so a template cannot drift from what Browser runs. Variant blocks
must name an axis and values the file declares. Mistakes are ``ConfigurationError``s naming the
file and line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Literal, TypeVar

from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.schema import SchemaMapping, template_slot


# --- the one table of slot names ---------------------------------------------------------------
# The schema slots are the SchemaMapping fields, read from their TemplateSlot annotations.
def _slot_of(name: str) -> str:
    found = template_slot(name)
    return found.slot if found else ""


def _fields(kind: str) -> tuple[str, ...]:
    return tuple(
        f for f in SchemaMapping.model_fields if (s := template_slot(f)) and s.kind == kind
    )


LABELS = _fields("label")
PROPERTIES = _fields("property")
ID_FIELDS = frozenset(f for f in PROPERTIES if (s := template_slot(f)) and s.element_id)
# slot -> (SchemaMapping type field, direction field or None: always "out")
RELATIONSHIPS: dict[str, tuple[str, str | None]] = {
    s.slot: (f, next((d for d in _fields("direction") if _slot_of(d) == s.slot), None))
    for f in _fields("relationship")
    if (s := template_slot(f))
}
# What Browser runs where the default schema has no such relationship or the caller decides
# (a direction of None: the caller's Relation gives it, so the template's example may use any).
_RELATIONSHIP_DEFAULTS: dict[str, tuple[str, str | None]] = {
    "next_chunk": ("NEXT_CHUNK", "out"),  # the neo4j-graphrag type; the default schema has none
    "relation": ("IS_CURRENCY_OF", None),  # a relation type of the sample KB, so Browser answers
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
    """A marked section: ``step`` (repeated per hop), ``selection`` (the example selection the
    caller's compiled one replaces) or ``variant`` (kept when the chosen value of ``axis`` is one
    of ``values``, removed otherwise)."""

    kind: Literal["step", "selection", "variant"]
    nodes: tuple[Node, ...]
    axis: str = ""
    values: tuple[str, ...] = ()


@dataclass(frozen=True)
class Include:
    """``// @include <file> <fragment>``: that fragment of ``cypher/<file>.cypher``, rendered in
    place with the includer's slots (``templates.load`` checks that it exists)."""

    file: str
    part: str
    number: int


Node = Line | Block | Include
_N = TypeVar("_N", Block, Include)


@dataclass(frozen=True)
class Template:
    origin: str
    body: tuple[Node, ...]
    fragments: dict[str, tuple[Node, ...]]
    has_selection: bool
    # ``// @variants axis=a|b ...``: each axis and its values, the first the default
    variants: dict[str, tuple[str, ...]] = field(default_factory=dict)
    includes: tuple[Include, ...] = ()


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
    return _mark_keys(out)


_SUBQUERY = {"call", "exists", "count", "collect"}


def _mark_keys(toks: list[Token]) -> list[Token]:
    """Map keys (``{s: s}``, ``c {.id, score: x}``) become kind ``key``: a key names no
    variable, so renaming must not touch it. A ``{`` opens a map unless it follows ``)`` or
    CALL/EXISTS/COUNT/COLLECT (a subquery); a key is a word right after the map's ``{`` or
    ``,`` and before ``:``."""
    solid = [i for i, t in enumerate(toks) if t[0] not in ("space", "newline", "comment", "block")]
    stack: list[bool] = []  # True: a map
    out = list(toks)
    for n, i in enumerate(solid):
        kind, text, _ = toks[i]
        before = toks[solid[n - 1]][1] if n else ""
        if text == "{" and kind == "other":
            stack.append(before != ")" and before.lower() not in _SUBQUERY)
        elif text in "([" and kind == "other":
            stack.append(False)
        elif text in ")]}" and kind == "other":
            if stack:
                stack.pop()
        elif (
            kind == "word"
            and stack
            and stack[-1]
            and before in ("{", ",")
            and n + 1 < len(solid)
            and toks[solid[n + 1]][1] == ":"
        ):
            out[i] = ("key", text, toks[i][2])
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
    "@end-variant": ("close", "variant"),
}
Item = Line | tuple[str, str, str, int]  # a code line, or (open|close|mark, kind, text, line)
_NAME = r"[a-z][a-z0-9_]*"
_CHOICE = re.compile(rf"({_NAME})=({_NAME}(?:\|{_NAME})*)\Z")
_INCLUDE = re.compile(rf"({_NAME}) ({_NAME})\Z")


def _items(toks: list[Token], origin: str) -> Iterator[Item]:
    for line_tokens in _lines(toks):
        solid = [t for t in line_tokens if t[0] != "space"]
        if not solid:
            continue
        number = solid[0][2]
        if len(solid) == 1 and solid[0][0] == "comment":
            marker = _marker(solid[0][1][2:].strip(), f"{origin}:{number}")
            if marker is not None:
                yield (*marker, number)
            continue
        if solid[0][1] == ":" and len(solid) > 1 and solid[1][1].startswith("param"):
            continue  # Browser's :param lines
        yield Line(tuple(_pieces(line_tokens, origin)), number)


def _marker(comment: str, where: str) -> tuple[str, str, str] | None:
    if comment.startswith("@fragment "):
        return ("open", "fragment", comment.split()[1])
    if comment.startswith("selection:begin"):
        return ("open", "selection", "")
    if comment.startswith("selection:end"):
        return ("close", "selection", "")
    if comment in _MARKERS:
        return (*_MARKERS[comment], "")
    for word, kind, pattern, form in (
        ("@variants", "variants", None, "axis=a|b ..."),
        ("@variant", "variant", _CHOICE, "axis=a|b"),
        ("@include", "include", _INCLUDE, "<file> <fragment>"),
    ):
        if comment == word or comment.startswith(word + " "):
            spec = comment[len(word) :].strip()
            ok = all(_CHOICE.match(p) for p in spec.split()) if pattern is None else None
            if not (pattern.match(spec) if pattern else spec and ok):
                raise ConfigurationError(f"{where}: write '// {word} {form}', not {comment!r}")
            return ("open" if kind == "variant" else "mark", kind, spec)
    if comment.startswith("@"):
        raise ConfigurationError(f"{where}: unknown marker '// {comment.split()[0]}'")
    return None


def _choices(spec: str) -> list[tuple[str, tuple[str, ...]]]:
    return [(a, tuple(v.split("|"))) for a, v in (p.split("=") for p in spec.split())]


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
    variants = _declared(items, origin)
    body = _tree(items, origin)
    _check_variants(body, variants, origin)
    includes = tuple(_walk(body, Include))
    return Template(origin, body, fragments, has_selection, variants, includes)


def _declared(items: list[Item], origin: str) -> dict[str, tuple[str, ...]]:
    """The ``// @variants`` line: once, before any variant block."""
    marks = [it for it in items if not isinstance(it, Line) and it[1] == "variants"]
    if len(marks) > 1:
        raise ConfigurationError(f"{origin}:{marks[1][3]}: a second '// @variants' line")
    declared: dict[str, tuple[str, ...]] = {}
    for axis, values in _choices(marks[0][2]) if marks else []:
        if axis in declared or len(set(values)) != len(values) or len(values) < 2:
            raise ConfigurationError(
                f"{origin}:{marks[0][3]}: '// @variants' names each axis once, with two or "
                f"more distinct values ({axis}={'|'.join(values)})"
            )
        declared[axis] = values
    return declared


def _check_variants(
    body: tuple[Node, ...], declared: dict[str, tuple[str, ...]], origin: str
) -> None:
    """Every block names a declared axis and values; every declared axis has a block."""
    used: set[str] = set()
    for block in _walk(body, Block):
        if block.kind != "variant":
            continue
        known = declared.get(block.axis)
        if known is None or not set(block.values) <= set(known):
            shown = " ".join(f"{a}={'|'.join(v)}" for a, v in declared.items()) or "none"
            raise ConfigurationError(
                f"{origin}: '// @variant {block.axis}={'|'.join(block.values)}' is not declared "
                f"by the file's '// @variants' line (declared: {shown})"
            )
        used.add(block.axis)
    unused = sorted(set(declared) - used)
    if unused:
        raise ConfigurationError(f"{origin}: variant axis {unused[0]!r} has no '// @variant' block")


def _walk(nodes: tuple[Node, ...], kind: type[_N]) -> Iterator[_N]:
    for node in nodes:
        if isinstance(node, kind):
            yield node
        if isinstance(node, Block):
            yield from _walk(node.nodes, kind)


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
    stack: list[tuple[str, str, list[Node]]] = [("", "", [])]
    for item in items:
        if isinstance(item, Line):
            stack[-1][2].append(item)
        elif item[1] in ("fragment", "variants"):
            continue
        elif item[1] == "include":
            file, part = item[2].split()
            stack[-1][2].append(Include(file, part, item[3]))
        elif item[0] == "open":
            stack.append((item[1], item[2], []))
        elif stack[-1][0] != item[1]:
            raise ConfigurationError(f"{origin}:{item[3]}: unbalanced '{item[1]}' marker")
        else:
            kind, spec, nodes = stack.pop()
            axis, values = _choices(spec)[0] if spec else ("", ())
            stack[-1][2].append(Block(kind, tuple(nodes), axis, values))  # type: ignore[arg-type]
    if len(stack) != 1:
        raise ConfigurationError(f"{origin}: '{stack[-1][0]}' section is not closed")
    return tuple(stack[0][2])


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
    named = [k in ("word", "name", "key") for k, _ in ahead]
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
    """``-[v:TYPE]->``, ``<-[v:TYPE]-`` or ``-[v:TYPE]-`` (the variable is optional), written
    in the direction the default schema renders: the renderer applies the mapping's direction,
    so any other arrow would make Browser run a different query than the library."""
    text = [t for _, t in ahead]
    left = text[0] == "<"
    j = 1 if left else 0
    var = None
    if text[j : j + 2] == ["-", "["]:
        j += 2
        if ahead[j][0] == "word":
            var = text[j]
            j += 1
        if (
            text[j] == ":"
            and ahead[j + 1][0] in ("word", "name")
            and text[j + 2 : j + 4] == ["]", "-"]
        ):
            written_type = _unquote(text[j + 1])
            _check_default(name, written_type, where)
            right = text[j + 4] == ">"
            if left and right:
                raise ConfigurationError(
                    f"{where}: slot /*{name}*/ is followed by <-[...]->, which has no direction; "
                    f"write {_arrow(_default_direction(name) or 'out', written_type)}"
                )
            written = "in" if left else "out" if right else "both"
            expected = _default_direction(name) or written
            if written != expected:
                raise ConfigurationError(
                    f"{where}: slot /*{name}*/ is followed by {_arrow(written, written_type)}, but "
                    f"the default schema renders {_arrow(expected, written_type)} (what Browser "
                    f"must run; the mapping's direction replaces it when rendered)"
                )
            j += 5 if right else 4
            return Slot(name, var), i + j
    raise ConfigurationError(f"{where}: slot /*{name}*/ must be followed by -[:TYPE]->")


def _arrow(direction: str, rel_type: str) -> str:
    body = f"[:{rel_type}]"
    return {"out": f"-{body}->", "in": f"<-{body}-"}.get(direction, f"-{body}-")


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
        return _RELATIONSHIP_DEFAULTS[name][0]
    field_name = RELATIONSHIPS[name][0] if name in RELATIONSHIPS else name
    return str(SchemaMapping.model_fields[field_name].default)


def _default_direction(name: str) -> str | None:
    """The arrow Browser runs for a relationship slot: the default schema's direction."""
    if name in _RELATIONSHIP_DEFAULTS:
        return _RELATIONSHIP_DEFAULTS[name][1]
    direction_field = RELATIONSHIPS[name][1]
    return str(SchemaMapping.model_fields[direction_field].default) if direction_field else "out"
