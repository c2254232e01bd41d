"""Reading a bundle's JSON Lines files line by line, and collecting ``file:line`` problems.

Every problem is recorded, not raised, so one read reports them all (up to a limit) and a
broken bundle is fixed in one pass, not one error at a time.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from guidedrag_graph.errors import BundleError

MAX_REPORTED_ERRORS = 20
_UTF8_BOM = b"\xef\xbb\xbf"

M = TypeVar("M", bound=BaseModel)


class Problems:
    """Collects ``file:line: message`` problems; raises them together, up to a limit."""

    def __init__(self) -> None:
        self.items: list[str] = []
        # Files with lines we could not even parse (bad UTF-8, bad JSON): references into them
        # may point at those lines, so "unknown id" errors would be false knock-ons.
        self.unreadable: set[str] = set()

    def add(self, where: str, message: str) -> None:
        self.items.append(f"{where}: {message}")

    def add_reference(self, where: str, message: str, target: str) -> None:
        """A dangling reference into ``target``; dropped when ``target`` had unreadable lines."""
        if target not in self.unreadable:
            self.add(where, message)

    def raise_if_any(self) -> None:
        if not self.items:
            return
        shown = self.items[:MAX_REPORTED_ERRORS]
        more = len(self.items) - len(shown)
        tail = f"\n... and {more} more problem(s)" if more else ""
        raise BundleError("\n".join(shown) + tail)


def json_lines(path: Path, errors: Problems) -> Iterator[tuple[str, dict[str, Any]]]:
    """(``file:line``, object) for every non-blank line; bad lines are recorded, not raised.

    Each line is decoded on its own (bytes, split on ``\\n``), so a bad UTF-8 byte or a stray
    byte-order mark is reported at its own line and the lines after it are still read: no
    false knock-on errors. A BOM at the very start of the file is accepted (Windows editors
    write one); at the start of any later line it is reported.
    """
    if not path.exists():
        return
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            parsed = parse_line(raw, first=number == 1)
            if parsed is None:
                continue
            where = f"{path.name}:{number}"
            if isinstance(parsed, str):
                errors.add(where, parsed)
                errors.unreadable.add(path.name)
                continue
            yield where, parsed


def parse_line(raw: bytes, *, first: bool) -> dict[str, Any] | str | None:
    """One line as a JSON object; None for a blank line, or why it cannot be read.

    ``first``: the file's first line, where a byte-order mark is accepted. Any problem makes
    the file *unreadable* in :class:`Problems`' sense (references into it may be knock-ons).
    """
    if first and raw.startswith(_UTF8_BOM):
        raw = raw[len(_UTF8_BOM) :]
    if raw.startswith(_UTF8_BOM):
        # U+FEFF inside a JSON string is text; at the start of a later line it is a
        # byte-order mark left by concatenating files.
        return "byte-order mark (U+FEFF) at the start of the line; remove it"
    if not raw.strip():
        return None
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as bad:
            return f"not UTF-8 ({bad.reason} at byte {bad.start + 1}); re-save the file as UTF-8"
        return _json_problem(text, exc)
    if not isinstance(obj, dict):
        return f"expected a JSON object, got {type(obj).__name__}"
    return obj


def _json_problem(text: str, exc: Exception) -> str:
    """The standard library's wording (message and column) for a line orjson rejected."""
    try:
        json.loads(text)
    except json.JSONDecodeError as std:
        return f"invalid JSON ({std.msg} at column {std.colno})"
    except RecursionError:
        return "invalid JSON (nested too deeply)"
    return f"invalid JSON ({exc})"


def explain(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "row"
        if err["type"] == "missing":
            parts.append(f"missing field {loc!r}")
        elif err["type"] == "extra_forbidden":
            parts.append(f"unknown field {loc!r} (put extra data under 'metadata')")
        else:
            parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)


def validated_rows(path: Path, model: type[M], errors: Problems) -> Iterator[tuple[str, M]]:
    """(``file:line``, row) for every line that is a valid ``model``; the others are recorded."""
    for where, obj in json_lines(path, errors):
        try:
            yield where, model.model_validate(obj)
        except ValidationError as exc:
            errors.add(where, explain(exc))


def is_duplicate(
    errors: Problems, where: str, what: str, key: str, first_seen: dict[str, str]
) -> bool:
    """True (and recorded) when ``key`` was already read at the line ``first_seen`` holds."""
    if key in first_seen:
        errors.add(where, f"duplicate {what} id {key!r} (first at {first_seen[key]})")
        return True
    return False
