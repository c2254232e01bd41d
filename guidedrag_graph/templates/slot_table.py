"""The slots of the two-way Cypher templates: the one table of slot names, and reading a slot.

Split out of ``template_lexer`` so everything about a slot stands in one place: its name and kind
(``KINDS``; the schema slots are read from the ``SchemaMapping`` field annotations, so this module
imports the schema and nothing imports it back), and the default text that follows it in a
template, checked to be what the default schema (or the default setting) renders, arrow
included, so a template cannot drift from what Browser runs. ``template_lexer`` tokenises a
file and hands each code line's tokens to ``pieces``; it re-exports the public names here.
Mistakes are ``ConfigurationError``s naming the file and line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Literal

from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.schema.presets import SchemaMapping, template_slot


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
    **dict.fromkeys(("tiers", "members", "sizes", "flags", "operands"), "list"),
}


@dataclass(frozen=True)
class Slot:
    """``/*name*/`` and the default text it replaces (``var`` where it names a variable; for a
    list, the first element's pieces and the index of its variable)."""

    name: str
    var: str | None = None
    element: tuple[Piece, ...] = ()
    element_var: int = -1


Piece = tuple[Literal["text", "word", "param", "slot"], "str | Slot"]

Token = tuple[str, str, int]  # kind, text, line number (made by template_lexer.tokens)
_SLOT = re.compile(r"/\*(\w+)\*/\Z")


# --- pieces and slots --------------------------------------------------------------------------
def pieces(toks: list[Token], origin: str) -> Iterator[Piece]:
    """One code line's tokens as pieces: text, words (variables), parameters and slots."""
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
    element = tuple(pieces(_trim(inner), where))
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
