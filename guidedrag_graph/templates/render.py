"""Fill a parsed template's slots: whole queries, fragments and migration statements.

Split out of ``templates/queries.py``, which keeps the memoised ``query`` and ``fragment`` by name,
so
the slot filling reads on its own: one pass over the parsed lines, each slot replaced by the
schema's (or the caller's) name escaped once with ``escape_identifier``, variables and
parameters renamed, steps repeated, variant blocks kept or dropped, includes rendered in place.
``templates`` re-exports ``Relation``, ``render``, ``statements`` and ``checksum``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.schema.presets import ELEMENT_ID, SchemaMapping, escape_identifier
from guidedrag_graph.templates import lexer as L
from guidedrag_graph.templates.files import chosen, load


@dataclass(frozen=True)
class Relation:
    """What a ``/*relation*/`` slot matches: validated relationship types (relation mode
    "types"; mode "property" uses the mapping's generic type) and the direction from the
    pattern's left node (``both``, ``out``, ``in``)."""

    types: tuple[str, ...]
    direction: str = "both"


Names = Mapping[str, str]
Lists = Mapping[str, Sequence[str]]


def render(
    template: L.Template,
    schema: SchemaMapping | None = None,
    *,
    part: str | None = None,
    selection: str | None = None,
    names: Names | None = None,
    lists: Lists | None = None,
    relation: Relation | None = None,
    variables: Names | None = None,
    params: Names | None = None,
    steps: int | None = None,
    variant: Names | None = None,
) -> str:
    """Fill ``template``'s slots: the whole file (``:param`` lines, full-line comments and blank
    lines dropped, code lines joined by newlines) or, with ``part``, the fragment between
    ``// @fragment <part>`` and ``// @end``, stripped.

    ``selection`` replaces the example between ``// selection:begin`` and ``// selection:end``
    with an already-final compiled selection; ``variables`` and ``params`` rename variables and
    ``$parameters`` (``{"s": "s3"}``, ``{"sel_ids": "sel_3_ids"}``) outside strings, comments,
    backticks, property and map keys; ``steps`` repeats the ``// @step`` section; ``names``,
    ``lists`` and ``relation`` fill the name, list and relation slots; ``variant`` chooses a
    value per declared axis (``{"rank": "plugin"}``; an axis left out takes its default) and
    keeps only the ``// @variant`` blocks of the chosen values.
    """
    nodes = template.body
    if part is not None:
        if part not in template.fragments:
            raise ConfigurationError(
                f"{template.origin} has no '// @fragment {part}' section; reinstall the package"
            )
        nodes = template.fragments[part]
    if selection is not None and not template.has_selection:
        raise ConfigurationError(
            f"{template.origin} has no `// selection:begin` ... `// selection:end` block"
        )
    context = _Context(
        template.origin,
        schema,
        dict(names or {}),
        {k: tuple(v) for k, v in (lists or {}).items()},
        relation,
        dict(variables or {}),
        dict(params or {}),
        chosen(template, variant),
    )
    text = "\n".join(_render(nodes, context, selection=selection, steps=steps))
    return text if part is None else text.strip()


def statements(text: str, origin: str, schema: SchemaMapping, names: Names) -> list[str]:
    """A migration file's statements (split at ``;``), rendered for ``schema`` and ``names``.

    A statement with a property slot whose id field is mapped to ``elementId()`` is left out:
    there is no property to constrain or index."""
    return list(_statements(text, origin, schema, name_items(names)))


def checksum(text: str, origin: str, schema: SchemaMapping, names: Names) -> str:
    """sha256 of a migration's canonical form: its ``requires`` lines and its statements."""
    requires = [line.strip() for line in text.splitlines() if L.REQUIRES.match(line.strip())]
    canonical = "\n".join([*requires, *statements(text, origin, schema, names)])
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def name_items(mapping: Names | None) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((mapping or {}).items()))


def list_items(lists: Lists | None) -> tuple[tuple[str, tuple[str, ...]], ...]:
    return tuple(sorted((k, tuple(v)) for k, v in (lists or {}).items()))


@lru_cache(maxsize=256)
def _statements(
    text: str, origin: str, schema: SchemaMapping, names: tuple[tuple[str, str], ...]
) -> tuple[str, ...]:
    out: list[str] = []
    for body in L.parse_statements(text, origin):
        context = _Context(origin, schema, dict(names), {}, None)
        rendered = "\n".join(_render(body, context)).strip()
        if rendered and not context.element_id:
            out.append(rendered)
    return tuple(out)


class _Context:
    """What one render call fills the slots with."""

    def __init__(
        self,
        origin: str,
        schema: SchemaMapping | None,
        names: dict[str, str],
        lists: dict[str, tuple[str, ...]],
        relation: Relation | None,
        variables: dict[str, str] | None = None,
        params: dict[str, str] | None = None,
        variant: dict[str, str] | None = None,
    ) -> None:
        self.origin = origin
        self._schema = schema
        self.names = names
        self.lists = lists
        self.relation = relation
        self.variables = variables or {}
        self.params = params or {}
        self.variant = variant or {}
        self.element_id = False  # a property slot rendered elementId(): migrations skip it

    def fail(self, line: int, message: str) -> ConfigurationError:
        return ConfigurationError(f"{self.origin}:{line}: {message}")

    def var(self, name: str | None) -> str:
        return self.variables.get(name, name) if name else ""

    @property
    def schema(self) -> SchemaMapping:
        if self._schema is None:
            raise ConfigurationError(f"{self.origin} has schema slots: pass a schema mapping")
        return self._schema


def _render(
    nodes: Iterable[L.Node],
    context: _Context,
    *,
    selection: str | None = None,
    steps: int | None = None,
) -> list[str]:
    """Code lines of ``nodes``; the first selection block becomes ``selection`` (if given)."""
    out: list[str] = []
    spliced = False
    for node in nodes:
        if isinstance(node, L.Line):
            out.append("".join(_piece(p, context, node.number) for p in node.pieces))
        elif isinstance(node, L.Include):
            out += _render(load(node.file).fragments[node.part], context)
        elif node.kind == "variant":
            if context.variant.get(node.axis) in node.values:
                out += _render(node.nodes, context, selection=selection, steps=steps)
        elif node.kind == "selection" and selection is not None and not spliced:
            out.append(selection.strip())
            spliced = True
        else:
            times = steps if node.kind == "step" and steps is not None else 1
            for _ in range(times):
                out += _render(node.nodes, context)
    return out


def _piece(piece: L.Piece, context: _Context, line: int) -> str:
    kind, value = piece
    if isinstance(value, L.Slot):
        return _slot(value, context, line)
    if kind == "word":
        return context.var(value)
    if kind == "param":
        return "$" + context.params.get(value, value)
    return value


def _slot(slot: L.Slot, context: _Context, line: int) -> str:
    kind = L.KINDS[slot.name]
    if kind == "label":
        return _identifier(getattr(context.schema, slot.name), slot.name, context, line)
    if kind == "name":
        if slot.name not in context.names:
            raise context.fail(line, f"slot /*{slot.name}*/ needs names={{'{slot.name}': ...}}")
        return _identifier(context.names[slot.name], slot.name, context, line)
    if kind == "property":
        return _property(slot, context, line)
    if kind == "relationship":
        return _relationship(slot, context, line)
    if kind == "expression":
        var = context.var(slot.var)
        if context.schema.relation_mode == "property":
            key = context.schema.relation_type_property
            return f"{var}.{_identifier(key, 'relation_type_property', context, line)}"
        return f"type({var})"
    return _list(slot, context, line)


def _identifier(value: object, what: str, context: _Context, line: int) -> str:
    """``value`` as one backticked identifier; refused when it cannot be one."""
    if not isinstance(value, str) or not value:
        raise context.fail(line, f"{what} = {value!r} must be a non-empty name")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        shown = value.encode("utf-8", "backslashreplace").decode()
        raise context.fail(
            line, f"{what} = {shown!r} is not valid text (a lone surrogate); set it to UTF-8 text"
        ) from None
    try:
        return escape_identifier(value, what)
    except ConfigurationError as error:
        raise context.fail(line, str(error)) from None


def _property(slot: L.Slot, context: _Context, line: int) -> str:
    value = getattr(context.schema, slot.name)
    if value == ELEMENT_ID and slot.name in L.ID_FIELDS:
        context.element_id = True
        if slot.var is None:
            raise context.fail(line, f"{slot.name} is elementId(): no property key to write here")
        return f"elementId({context.var(slot.var)})"
    key = _identifier(value, slot.name, context, line)
    return key if slot.var is None else f"{context.var(slot.var)}.{key}"


def _relationship(slot: L.Slot, context: _Context, line: int) -> str:
    schema = context.schema
    var = context.var(slot.var)
    if slot.name == "relation":
        if context.relation is None:
            raise context.fail(line, "slot /*relation*/ needs relation=Relation(types, direction)")
        direction: str = context.relation.direction
        if schema.relation_mode == "property":
            types = [schema.generic_relation_type]
        else:
            types = list(context.relation.types)
        if not types:
            raise context.fail(line, "slot /*relation*/ needs at least one relationship type")
    else:
        type_field, direction_field = L.RELATIONSHIPS[slot.name]
        value = getattr(schema, type_field)
        if value is None:
            if slot.name == "part_of":  # a zero-length path: the chunk is its own document
                return "-[*0..0]->"
            raise context.fail(line, f"{type_field} is not set in this schema mapping")
        types = [value]
        direction = getattr(schema, direction_field) if direction_field else "out"
    rel = "|".join(_identifier(t, slot.name, context, line) for t in types)
    body = f"[{var}:{rel}]"
    if direction == "out":
        return f"-{body}->"
    if direction == "in":
        return f"<-{body}-"
    if direction == "both":
        return f"-{body}-"
    raise context.fail(line, f"direction {direction!r} is not one of both, out, in")


_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _list(slot: L.Slot, context: _Context, line: int) -> str:
    if slot.name not in context.lists:
        raise context.fail(line, f"slot /*{slot.name}*/ needs lists={{'{slot.name}': [...]}}")
    items: list[str] = []
    for variable in context.lists[slot.name]:
        if not _VARIABLE.match(variable):
            raise context.fail(line, f"{variable!r} in /*{slot.name}*/ is not a variable name")
        items.append(
            "".join(
                variable if i == slot.element_var else _piece(p, context, line)
                for i, p in enumerate(slot.element)
            )
        )
    return "[" + ", ".join(items) + "]"
