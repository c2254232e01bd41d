"""Our compiler for neo4j-graphrag's metadata filter syntax: a filter becomes a term of the
ranking query, never a list of ids shipped to Python and back.

>>> f = compile_filter({"position": {"$lte": 2}, "$or": [{"lang": "en"}, {"lang": "fr"}]})
>>> f.condition
'(c.`position` <= $flt_0) AND ((c.`lang` = $flt_1) OR (c.`lang` = $flt_2))'
>>> f.params
{'flt_0': 2, 'flt_1': 'en', 'flt_2': 'fr'}

The syntax is neo4j-graphrag's (``VectorRetriever(filters=...)``): a field maps to a value
(equality) or to ``{operator: value}`` with ``$eq $ne $lt $lte $gt $gte $between $in $nin $like
$ilike``; several fields in one object are ANDed; ``$and``/``$or`` take a list of filters. A
filter is a WHERE condition on the chunk variable; ``cypher/retrieve_filter.cypher`` holds the
clauses around it. Why our own: every property key is quoted by the project's one quoting
function (``schema.escape_identifier``; neo4j-graphrag's only doubles backticks), values are
``$flt_N`` parameters, nesting depth and the number of terms are bounded, and each value's type
is checked, so bad input is one line naming the problem (never a RecursionError or TypeError).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.schema.presets import SchemaMapping, escape_identifier
from guidedrag_graph.templates import queries as templates

# Bounds on a filter (every input bounded): nesting of $and/$or, terms, values of one $in, key
# length, string value length. A filter a person or an LLM writes is a handful of terms.
MAX_DEPTH = 16
MAX_TERMS = 256
MAX_LIST = 1000
MAX_KEY = 256
# Characters in one string value ($eq, $in items, $like ...): a value compared with a property is
# a word or a title, never 50 MB sent to Neo4j to scan every chunk with.
MAX_VALUE = 10_000

_COMPARE = {"$eq": "=", "$ne": "<>", "$lt": "<", "$lte": "<=", "$gt": ">", "$gte": ">="}
_OPERATORS = (*_COMPARE, "$between", "$in", "$nin", "$like", "$ilike")
_Scalar = (str, int, float)


_TIERS = "retrieve_filter_tiers"


class FilterError(ConfigurationError):
    """A filter that cannot be compiled; the message names the place and the fix."""


@dataclass(frozen=True)
class ChunkFilter:
    """A compiled filter: ``condition`` on the chunk variable ``alias``, its ``$flt_N``
    parameters, and the property keys it reads."""

    condition: str
    params: dict[str, Any]
    fields: tuple[str, ...]
    source: Mapping[str, Any] = field(compare=False, repr=False, default_factory=dict)

    def any_query(self, schema: SchemaMapping) -> str:
        """One chunk that passes, or no row: whether the filter leaves anything to rank."""
        return templates.query("retrieve_filter", schema, selection=self.condition)

    def narrow(self, schema: SchemaMapping) -> str:
        """``WITH c WHERE <condition>``: appended to a selection body that binds ``c``."""
        return templates.fragment("retrieve_filter", "where", schema) + " " + self.condition

    def universe(self, schema: SchemaMapping, variable: str) -> str:
        """A CALL binding ``variable`` to the list of every chunk that passes (auto's U)."""
        head = templates.fragment(_TIERS, "universe_open", schema)
        tail = templates.fragment(_TIERS, "universe_close", schema, variables={"u": variable})
        return f"{head} {self.condition}\n{tail}"

    def tier(self, schema: SchemaMapping, source: str, target: str) -> str:
        """A CALL binding ``target`` to the members of the tier list ``source`` that pass."""
        head = templates.fragment(_TIERS, "tier_open", schema, variables={"s": source})
        tail = templates.fragment(_TIERS, "tier_close", schema, variables={"f": target})
        return f"{head} {self.condition}\n{tail}"


class _Compiler:
    def __init__(self, alias: str, prefix: str = "flt") -> None:
        self.alias = alias
        self.prefix = prefix
        self.params: dict[str, Any] = {}
        self.fields: list[str] = []
        self.terms = 0

    def value(self, value: Any) -> str:
        name = f"{self.prefix}_{len(self.params)}"
        self.params[name] = value
        return "$" + name

    def filter(self, node: Any, where: str, depth: int) -> str:
        if depth > MAX_DEPTH:
            raise FilterError(
                f"filters: {where} nests deeper than {MAX_DEPTH} levels of $and/$or; "
                "flatten the filter"
            )
        if not isinstance(node, Mapping):
            raise FilterError(
                f'filters: {where} must be an object such as {{"position": {{"$lte": 2}}}}, '
                f"got {type(node).__name__}"
            )
        if not node:
            raise FilterError(f"filters: {where} is an empty object; give a field or $and/$or")
        parts: list[str] = []
        for key, value in node.items():
            if not isinstance(key, str):
                raise FilterError(
                    f"filters: {where} has a key of type {type(key).__name__} ({key!r}); "
                    "keys are property names or $and/$or"
                )
            lowered = key.lower()
            if lowered in ("$and", "$or"):
                parts.append(self.logical(lowered, value, f"{where}.{_shown(key)}", depth))
            elif key.startswith("$"):
                raise FilterError(
                    f"filters: {where} has the operator {key!r} where a property name or "
                    '$and/$or belongs; operators go inside a field: {"position": {"$lte": 2}}'
                )
            else:
                parts.append(self.field(key, value, f"{where}.{_shown(key)}"))
        return parts[0] if len(parts) == 1 else " AND ".join(f"({p})" for p in parts)

    def logical(self, op: str, value: Any, where: str, depth: int) -> str:
        if not isinstance(value, list) or not value:
            raise FilterError(
                f"filters: {where} takes a non-empty list of filters, got {type(value).__name__}"
            )
        joined = " AND " if op == "$and" else " OR "
        return joined.join(
            f"({self.filter(item, f'{where}[{i}]', depth + 1)})" for i, item in enumerate(value)
        )

    def field(self, key: str, value: Any, where: str) -> str:
        if not key.strip() or len(key) > MAX_KEY:
            raise FilterError(
                f"filters: {where}: a property name must be 1 to {MAX_KEY} characters"
            )
        self.terms += 1
        if self.terms > MAX_TERMS:
            raise FilterError(f"filters: more than {MAX_TERMS} conditions; simplify the filter")
        if key not in self.fields:
            self.fields.append(key)
        lhs = f"{self.alias}.{escape_identifier(key)}"
        if isinstance(value, Mapping):
            if len(value) != 1:
                raise FilterError(
                    f'filters: {where} must hold exactly one operator such as {{"$lte": 2}}, '
                    f"got {len(value)} keys"
                )
            ((op, operand),) = value.items()
            if not isinstance(op, str) or op.lower() not in _OPERATORS:
                raise FilterError(
                    f"filters: {where}: unknown operator {op!r}; use one of {', '.join(_OPERATORS)}"
                )
            return self.operator(lhs, op.lower(), operand, f"{where}.{op}")
        return self.operator(lhs, "$eq", value, where)

    def operator(self, lhs: str, op: str, operand: Any, where: str) -> str:
        if op in _COMPARE:
            return f"{lhs} {_COMPARE[op]} {self.value(_scalar(operand, where))}"
        if op == "$between":
            if not isinstance(operand, list | tuple) or len(operand) != 2:
                raise FilterError(f"filters: {where} takes [low, high], got {operand!r:.60}")
            low, high = (_scalar(v, where) for v in operand)
            return f"{self.value(low)} <= {lhs} <= {self.value(high)}"
        if op in ("$in", "$nin"):
            if not isinstance(operand, list | tuple):
                raise FilterError(
                    f"filters: {where} takes a list of values, got {type(operand).__name__}"
                )
            if len(operand) > MAX_LIST:
                raise FilterError(f"filters: {where} holds more than {MAX_LIST} values")
            values = [_scalar(v, where) for v in operand]
            test = f"{lhs} IN {self.value(values)}"
            return test if op == "$in" else f"NOT {test}"
        if not isinstance(operand, str):  # $like / $ilike: substring, as neo4j-graphrag's
            raise FilterError(f"filters: {where} takes a string, got {type(operand).__name__}")
        _check_length(operand, where)
        text = operand.rstrip("%")
        if op == "$ilike":
            return f"toLower({lhs}) CONTAINS {self.value(text.lower())}"
        return f"{lhs} CONTAINS {self.value(text)}"


def _shown(key: str) -> str:
    """A key as an error message shows it: as written when printable and short, else its
    ``repr`` cut to 60 characters, so a key with a newline never splits the one-line error."""
    if key.isprintable() and len(key) <= 60:
        return key
    shown = repr(key)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def _check_length(value: str, where: str) -> None:
    if len(value) > MAX_VALUE:
        raise FilterError(
            f"filters: {where}: a string value is {len(value):,} characters; the limit is "
            f"{MAX_VALUE:,} (compare with a word or a title, not a document)"
        )


def _scalar(value: Any, where: str) -> str | int | float | bool:
    """A value a property may equal: string, number or boolean (no null, list or object)."""
    if isinstance(value, (bool, *_Scalar)):
        if isinstance(value, str):
            _check_length(value, where)
        if isinstance(value, float) and not math.isfinite(value):
            raise FilterError(f"filters: {where}: {value} is not a finite number")
        return value
    raise FilterError(
        f"filters: {where}: a value must be a string, number or boolean, got {type(value).__name__}"
    )


def compile_filter(
    filters: Mapping[str, Any], alias: str = "c", *, prefix: str = "flt"
) -> ChunkFilter:
    """Compile neo4j-graphrag ``filters`` into a condition on the chunk variable ``alias``
    (parameters ``$<prefix>_N``: a trusted scope's filter, ``scpf``, meets a request's in one
    query)."""
    compiler = _Compiler(alias, prefix)
    condition = compiler.filter(filters, "filters", 0)
    return ChunkFilter(condition, compiler.params, tuple(compiler.fields), filters)


def check_fields(chunk_filter: ChunkFilter, known: set[str], schema: SchemaMapping) -> None:
    """A filter naming a property no node has is a typo, not an empty result: say so."""
    unknown = [f for f in chunk_filter.fields if f not in known]
    if unknown:
        raise FilterError(
            f"filters name {', '.join(repr(f) for f in unknown)}, which no node in the database "
            f"has; filter on chunk properties such as {schema.chunk_id!r} or "
            f"{schema.chunk_text!r}"
        )
