"""Read a two-way Cypher template once: tokens, code lines, slots, fragments, steps, selection,
variant blocks and includes.

``templates/queries.py`` renders what this module parses; it is split out so the renderer stays
short.
The slots themselves (the one table of slot names, ``KINDS``, and the check that a slot's
default text is what the default schema renders) are in ``template_slots``, re-exported here.
Variant blocks must name an axis and values the file declares. Mistakes are
``ConfigurationError``s naming the file and line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.templates.slot_table import ID_FIELDS as ID_FIELDS
from guidedrag_graph.templates.slot_table import KINDS as KINDS
from guidedrag_graph.templates.slot_table import LABELS as LABELS
from guidedrag_graph.templates.slot_table import NAME_DEFAULTS as NAME_DEFAULTS
from guidedrag_graph.templates.slot_table import PROPERTIES as PROPERTIES
from guidedrag_graph.templates.slot_table import RELATIONSHIPS as RELATIONSHIPS
from guidedrag_graph.templates.slot_table import Kind as Kind
from guidedrag_graph.templates.slot_table import Piece as Piece
from guidedrag_graph.templates.slot_table import Slot as Slot
from guidedrag_graph.templates.slot_table import Token as Token
from guidedrag_graph.templates.slot_table import pieces

REQUIRES = re.compile(r"^//\s*requires:\s*neo4j\s*(>=|<)\s*([\d.]+)\s*$")


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
        yield Line(tuple(pieces(line_tokens, origin)), number)


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
