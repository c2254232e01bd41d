"""The primitives: each leaf kind of the algebra, defined in one place.

A primitive's class declares everything about it, and the consumers dispatch on it (sqlglot's
habit), never on ``isinstance`` ladders:

- ``op``: its JSON ``op`` and its DSL name (``in_dsl``: whether the DSL calls it by that name);
- ``args``: its arguments in DSL order, each ``(JSON type, default)`` (``...`` when required):
  the parser's signatures and the JSON schemas are built from them (sqlglot's ``arg_types``);
- ``template`` (``cypher/<template>.cypher``) and ``variant`` (its chosen ``// @variant``
  values, e.g. khop's ``{"types": "any"}`` of ``select_hop``), ``params(resolved, cap)`` (its
  ``$sel_<i>_*`` values), ``slots(resolved)`` (what the template needs spliced: relation
  types, the arrow) and ``hops`` (how often its ``@step`` section repeats; it also takes
  ``$sel_cap``);
- ``entity_names()`` and ``resolve(by)``: what it needs resolved against the database
  (``selection/resolution.py`` does the resolving and says what is unknown);
- ``evaluate(ev)``: its pure-Python rule over ``evaluator.InMemoryGraph``.

Similar leaves share a base: ``Named`` (one name), entity-anchored (entity, hop, khop, near)
and entity-property (type, category) in ``entity_primitives.py``, document-scoped (document,
source, date) in ``document_primitives.py``. This module holds ``Leaf``, ``all()`` and
``chunks()``; ``ast.py`` registers every kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from guidedrag_graph.errors import SelectionError
from guidedrag_graph.selection.core import Expr, quote
from guidedrag_graph.selection.limits import CEILING

if TYPE_CHECKING:
    from guidedrag_graph.selection.evaluator import Evaluator
    from guidedrag_graph.selection.resolution import Answers

Args = dict[str, tuple[Any, Any]]


@dataclass(frozen=True)
class Resolved:
    """What a leaf means in this database: ids, validated relation types, or nothing."""

    ids: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    empty: bool = False


@dataclass(frozen=True, eq=False, repr=False)
class Leaf(Expr):
    """A primitive (see the module docstring for what each one declares)."""

    in_dsl: ClassVar[bool] = True
    args: ClassVar[Args] = {}
    variadic: ClassVar[bool] = False  # the DSL takes its one list argument as the call's values
    template: ClassVar[str] = ""
    variant: ClassVar[Mapping[str, str]] = {}  # the template's variant choice (none: defaults)
    entity_list: ClassVar[bool] = False  # its chunks are those mentioning its ids (a | b merges)

    def entity_names(self) -> tuple[str, ...]:
        """The names it needs resolved to entity ids (resolved in one batch per question)."""
        return ()

    def resolve(self, by: Answers) -> Resolved:
        """What it means in this database; ``by`` records why it is empty, if it is."""
        return by.nothing()

    def params(self, res: Resolved, cap: int) -> dict[str, Any]:
        """Its template's parameters (``$sel_<key>`` in the file, ``$sel_<i>_<key>`` compiled)."""
        values = self.template_values(res)
        return values if self.hops is None else {"cap": cap, **values}

    def template_values(self, res: Resolved) -> dict[str, Any]:
        return {}

    def slots(self, res: Resolved) -> dict[str, Any]:
        """What its template needs spliced rather than passed: none but hop's."""
        return {}


@dataclass(frozen=True, eq=False, repr=False)
class All(Leaf):
    """U: every chunk (base RAG)."""

    op: ClassVar[str] = "all"
    template: ClassVar[str] = "select_all"

    def _text(self, kids: list[str]) -> str:
        return "all()"

    def evaluate(self, ev: Evaluator) -> set[str]:
        return set(ev.graph.chunks)


@dataclass(frozen=True, eq=False, repr=False)
class Named(Leaf):
    """A primitive of one name: ``op('name')``."""

    name: str
    args: ClassVar[Args] = {"name": (str, ...)}

    def _text(self, kids: list[str]) -> str:
        return f"{self.op}({quote(self.name)})"


@dataclass(frozen=True, eq=False, repr=False)
class Chunks(Leaf):
    """A manual selection of chunk ids."""

    ids: tuple[str, ...]
    op: ClassVar[str] = "chunks"
    template: ClassVar[str] = "select_chunks"
    args: ClassVar[Args] = {"ids": (list[str], ...)}
    variadic: ClassVar[bool] = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "ids", tuple(self.ids))

    def template_values(self, res: Resolved) -> dict[str, Any]:
        return {"ids": list(self.ids)}

    def evaluate(self, ev: Evaluator) -> set[str]:
        return {c for c in self.ids if c in ev.graph.chunks}

    def _text(self, kids: list[str]) -> str:
        return f"chunks({', '.join(quote(i) for i in self.ids)})"


def check_depth(value: int, what: str) -> None:
    """Structural check only; the configured bound (default 5) is ``limits.check_hop_depth``."""
    if (
        not isinstance(value, int)
        or isinstance(value, bool)
        or not 1 <= value <= CEILING.max_hop_depth
    ):
        raise SelectionError(
            f"{what} depth must be an integer from 1 to {CEILING.max_hop_depth}, not {value!r}"
        )
