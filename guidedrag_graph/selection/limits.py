"""Resource limits on selections, checked before anything is resolved, compiled or sent.

A selection is user input: its size decides how long Neo4j plans and runs the query, so every
dimension has a bound with a setting. ``Limits()`` are the defaults (generous for real
use); ``CEILING`` is the most a setting may allow, and also what ``parse`` and
``from_json`` enforce on their own, so input is bounded even before settings are known.
The settings are applied by ``Selector.prepare`` with ``check(expr, Limits.from_settings(s))``.

Every walk here is iterative and memoised by node identity: a tree a Python caller built by
sharing sub-expressions (``e = e | e`` sixty times) is counted, not enumerated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from guidedrag_graph.errors import SelectionError

if TYPE_CHECKING:
    from guidedrag_graph.config import Settings
    from guidedrag_graph.selection import core as A


@dataclass(frozen=True)
class Limits:
    """Bounds on one selection; each names the setting that raises it."""

    max_terms: int = 200  # GUIDEDRAG_MAX_TERMS: leaves (entity(), hop(), ...) in the expression
    max_depth: int = 32  # GUIDEDRAG_MAX_DEPTH: nesting of operators and parentheses
    max_string: int = 1_000  # GUIDEDRAG_MAX_STRING: characters in any one string
    max_list: int = 1_000  # GUIDEDRAG_MAX_LIST: items in any one list (types, ids, names)
    max_hop_depth: int = 5  # GUIDEDRAG_MAX_HOP_DEPTH: depth of hop(), khop(), near()

    @staticmethod
    def from_settings(settings: Settings) -> Limits:
        return Limits(
            max_terms=settings.max_terms,
            max_depth=settings.max_depth,
            max_string=settings.max_string,
            max_list=settings.max_list,
            max_hop_depth=settings.max_hop_depth,
        )


# The most any setting may allow (config.py uses these as upper bounds).
CEILING = Limits(
    max_terms=2_000, max_depth=256, max_string=100_000, max_list=100_000, max_hop_depth=10
)
# Digits in an integer literal: depths are 1..10, so anything longer is an error, not a number.
MAX_INT_DIGITS = 6
MAX_FLOAT_CHARS = 40


def check_text(value: str, what: str, limits: Limits) -> None:
    """A string may reach the driver: bounded length, and encodable (no lone surrogates)."""
    if len(value) > limits.max_string:
        raise SelectionError(
            f"{what} is {len(value):,} characters long; the limit is {limits.max_string:,} "
            f"(GUIDEDRAG_MAX_STRING)"
        )
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise SelectionError(
            f"{what} is not valid text: {value[exc.start]!r} at index {exc.start} is a lone "
            f"surrogate (undecodable input bytes?); pass UTF-8 text"
        ) from None


def check_list(values: tuple[Any, ...] | list[Any], what: str, limits: Limits) -> None:
    if len(values) > limits.max_list:
        raise SelectionError(
            f"{what} has {len(values):,} items; the limit is {limits.max_list:,} "
            f"(GUIDEDRAG_MAX_LIST)"
        )


def check_hop_depth(value: int, what: str, limits: Limits) -> None:
    if not 1 <= value <= limits.max_hop_depth:
        raise SelectionError(
            f"{what} depth must be an integer from 1 to {limits.max_hop_depth}, not {value!r} "
            f"(GUIDEDRAG_MAX_HOP_DEPTH)"
        )


def too_many_terms(count: int, limits: Limits) -> SelectionError:
    return SelectionError(
        f"the selection has more than {limits.max_terms:,} terms ({count:,} so far; "
        f"GUIDEDRAG_MAX_TERMS): name several entities in one term, entity(['a', 'b', ...])"
    )


def too_deep(depth: int, limits: Limits) -> SelectionError:
    return SelectionError(
        f"the selection is nested {depth} deep; the limit is {limits.max_depth} "
        f"(GUIDEDRAG_MAX_DEPTH): flatten it, e.g. a | b | c needs no parentheses"
    )


def check_leaf(node: A.Expr, limits: Limits) -> None:
    """Strings, lists and hop depth of one node (a leaf's arguments, a boost's tier names)."""
    for what, value in node.limited_values():
        if isinstance(value, str):
            check_text(value, what, limits)
        elif isinstance(value, tuple):
            check_list(value, what, limits)
            for item in value:
                if isinstance(item, str):
                    check_text(item, f"an item of {what}", limits)
    if node.hops is not None:
        check_hop_depth(node.hops, node.op, limits)


def check(expr: A.Expr, limits: Limits) -> None:
    """Raise ``SelectionError`` naming the first limit ``expr`` exceeds."""
    terms: dict[int, int] = {}
    depth: dict[int, int] = {}
    stack: list[tuple[A.Expr, bool]] = [(expr, False)]
    while stack:
        node, ready = stack.pop()
        key = id(node)
        if key in terms:
            continue
        kids = node.children()
        if not ready:
            check_leaf(node, limits)
            if kids:
                stack.append((node, True))
                stack.extend((k, False) for k in kids if id(k) not in terms)
                continue
        if not kids:
            terms[key], depth[key] = 1, 1
        else:
            terms[key] = sum(terms[id(k)] for k in kids)
            # A left-nested chain of one operator (a | b | c) is written without parentheses:
            # it counts as one level, whatever its length.
            levels = [
                depth[id(k)] + (0 if i == 0 and node.infix and type(k) is type(node) else 1)
                for i, k in enumerate(kids)
            ]
            depth[key] = max(levels)
        if terms[key] > limits.max_terms:
            raise too_many_terms(terms[key], limits)
        if depth[key] > limits.max_depth:
            raise too_deep(depth[key], limits)
