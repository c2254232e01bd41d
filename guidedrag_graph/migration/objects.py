"""Which indexes and constraints are the project's own: their definitions, expected and live.

A name alone proves nothing (issue 34): a user's ``myapp_entity_type`` on ``:Customer(tier)``
has the name ``GUIDEDRAG_INDEX_PREFIX=myapp`` asks for, and ``IF NOT EXISTS`` would keep it as if
it were the project's. So ``migrate`` and ``kb adopt`` record the *definition* of every object
they create — kind, type, labels and properties — and treat an object as theirs only while a
record names it AND its live definition is still the recorded one. Options (vector dimensions,
quantization) are not part of the comparison: they are settings the project itself changes.

A definition is parsed from the rendered ``CREATE`` statement (what the object will be) and read
from ``SHOW INDEXES`` / ``SHOW CONSTRAINTS`` (what it is); both give the same normalised form.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from typing import Any

from neo4j import Driver

from guidedrag_graph.templates import queries as templates

_NAME = r"(`(?:[^`]|``)+`|\w+)"
_CREATE_RE = re.compile(
    r"^\s*(?:CYPHER\s+\d+\s+)?CREATE\s+(?:(\w+)\s+)?(INDEX|CONSTRAINT)\s+" + _NAME,
    re.IGNORECASE,
)
_DROP_RE = re.compile(r"^\s*DROP\s+(INDEX|CONSTRAINT)\s+" + _NAME, re.IGNORECASE)
_NODE_RE = re.compile(r"\bFOR\s*\(\s*(\w+)\s*:\s*" + _NAME + r"\s*\)", re.IGNORECASE)
_REL_RE = re.compile(
    r"\bFOR\s*\(\s*\)\s*<?-\s*\[\s*(\w+)\s*:\s*" + _NAME + r"\s*\]\s*->?\s*\(\s*\)", re.IGNORECASE
)
_OPTIONS_RE = re.compile(r"\bOPTIONS\b", re.IGNORECASE)


def _unquote(raw: str) -> str:
    return raw[1:-1].replace("``", "`") if raw.startswith("`") else raw


@dataclass(frozen=True)
class Definition:
    """One index or constraint as the comparison sees it (``type``: RANGE, FULLTEXT, VECTOR,
    ... for an index; UNIQUENESS or Neo4j's own type name for a constraint)."""

    name: str
    kind: str
    type: str
    entity_type: str
    labels: tuple[str, ...]
    properties: tuple[str, ...]

    def same_as(self, other: Definition) -> bool:
        """Same object apart from its name: what ``IF NOT EXISTS`` would treat as equivalent."""
        return (self.kind, self.type, self.entity_type, self.labels, self.properties) == (
            other.kind,
            other.type,
            other.entity_type,
            other.labels,
            other.properties,
        )

    def matches(self, other: Definition) -> bool:
        return self.name == other.name and self.same_as(other)

    def where(self) -> str:
        """``:Customer(tier)`` (``[:TYPE](p)`` for a relationship) — for one-line errors."""
        labels = "|".join(self.labels)
        target = f":{labels}" if self.entity_type == "NODE" else f"[:{labels}]"
        return f"{target}({', '.join(self.properties)})"

    def describe(self) -> str:
        """``RANGE index on :Customer(tier)``."""
        return f"{self.type} {self.kind} on {self.where()}"

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @staticmethod
    def from_json(text: str) -> Definition | None:
        try:
            data = json.loads(text)
            return Definition(
                name=str(data["name"]),
                kind=str(data["kind"]),
                type=str(data["type"]),
                entity_type=str(data["entity_type"]),
                labels=tuple(data["labels"]),
                properties=tuple(data["properties"]),
            )
        except (ValueError, KeyError, TypeError):
            return None


def _constraint_type(raw: str) -> str:
    return "UNIQUENESS" if "UNIQUE" in raw.upper() else raw.upper()


def created_definition(statement: str) -> Definition | None:
    """What a rendered ``CREATE INDEX`` / ``CREATE CONSTRAINT`` statement makes (None for any
    other statement, or one whose shape this parser does not know)."""
    match = _CREATE_RE.match(statement)
    if match is None:
        return None
    kind = match.group(2).lower()
    name = _unquote(match.group(3))
    rest = statement[match.end() :]
    node = _NODE_RE.search(rest)
    rel = _REL_RE.search(rest) if node is None else None
    found = node or rel
    if found is None:
        return None
    var, label = found.group(1), _unquote(found.group(2))
    tail = rest[found.end() :]
    options = _OPTIONS_RE.search(tail)
    if options is not None:
        tail = tail[: options.start()]
    properties = tuple(
        _unquote(p) for p in re.findall(r"(?<![\w`])" + re.escape(var) + r"\." + _NAME, tail)
    )
    if kind == "constraint":
        type_ = _constraint_type(tail if "UNIQUE" in tail.upper() else "")
    else:
        type_ = (match.group(1) or "RANGE").upper()
    return Definition(name, kind, type_, "NODE" if node else "RELATIONSHIP", (label,), properties)


def dropped_object(statement: str) -> tuple[str, str] | None:
    """(kind, name) of a ``DROP INDEX`` / ``DROP CONSTRAINT`` statement, else None."""
    match = _DROP_RE.match(statement)
    return (match.group(1).lower(), _unquote(match.group(2))) if match else None


def live_definitions(driver: Driver, database: str) -> dict[str, Definition]:
    """Every index and constraint by name. A constraint's own index shares its name and is
    reported as the constraint."""
    out: dict[str, Definition] = {}
    for kind in ("index", "constraint"):
        template = "schema_indexes" if kind == "index" else "schema_constraints"
        for r in driver.execute_query(templates.query(template), database_=database).records:
            raw_type = str(r["type"])
            out[str(r["name"])] = Definition(
                name=str(r["name"]),
                kind=kind,
                type=_constraint_type(raw_type) if kind == "constraint" else raw_type,
                entity_type=str(r["entity_type"]),
                labels=tuple(str(x) for x in (r["labels"] or [])),
                properties=tuple(str(x) for x in (r["properties"] or [])),
            )
    return out


def owned(recorded: list[Definition], live: Definition) -> bool:
    """Whether ``live`` is the project's: a record has its name and its very definition."""
    return any(r.matches(live) for r in recorded)


def from_records(values: Any) -> list[Definition]:
    """The definitions in a record's list of JSON strings (unreadable entries skipped)."""
    out: list[Definition] = []
    for value in values or []:
        definition = Definition.from_json(str(value))
        if definition is not None:
            out.append(definition)
    return out
