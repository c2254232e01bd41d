"""Which rows two ``results.json`` files disagree on, timing aside.

A change meant to leave results alone (a refactor, a faster query, a new plugin jar) is checked
by running ``guidedrag eval`` before and after it on the same store and comparing the two files
here (``guidedrag eval-diff``). Rows are matched by (set, question, variant, approach) and
compared field by field, cosines included; latency and per-stage timings are left out, since
they differ between any two runs. A field only one file has (a column added since the other was
written) is listed apart and not counted as a difference: a new column is not a changed result.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from guidedrag_graph.errors import GuidedRAGError

TIMING_FIELDS = frozenset({"latency_s", "timings"})
RowKey = tuple[str, str, int, str]


class ResultsFileError(GuidedRAGError):
    """A file that is not a ``results.json`` ``guidedrag eval`` wrote, or one with a row twice."""


def row_key(row: Mapping[str, Any]) -> RowKey:
    """A row's identity: its question set, question, variant (0 = as written) and approach."""
    try:
        return (str(row["set"]), str(row["question_id"]), int(row["variant"]), str(row["approach"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise ResultsFileError(
            f"a row lacks its set, question_id, variant or approach ({exc!r}): "
            "pass results.json files that guidedrag eval wrote"
        ) from None


@dataclass(frozen=True)
class RowDiff:
    """The outcome: rows compared, rows one file lacks, and per differing row its fields."""

    compared: int
    only_in_a: tuple[RowKey, ...]
    only_in_b: tuple[RowKey, ...]
    differing: dict[RowKey, tuple[str, ...]]
    fields_only_in_a: frozenset[str]
    fields_only_in_b: frozenset[str]

    @property
    def same(self) -> bool:
        """Every row in both files, and equal in every field both have (timing aside)."""
        return not (self.only_in_a or self.only_in_b or self.differing)

    def lines(self, shown: int = 10) -> list[str]:
        """A summary for a terminal: the counts, then up to ``shown`` differing rows."""
        out = [
            f"{len(self.differing)} of {self.compared} rows differ"
            f" (timing aside; {len(self.only_in_a)} only in A, {len(self.only_in_b)} only in B)"
        ]
        for side, only in (("A", self.fields_only_in_a), ("B", self.fields_only_in_b)):
            if only:
                out.append(f"fields only in {side} (not compared): {', '.join(sorted(only))}")
        for key, fields in list(self.differing.items())[:shown]:
            out.append(f"  {'/'.join(map(str, key))}: {', '.join(fields)}")
        return out


def _by_key(rows: Iterable[Mapping[str, Any]], side: str) -> dict[RowKey, Mapping[str, Any]]:
    keyed: dict[RowKey, Mapping[str, Any]] = {}
    for row in rows:
        key = row_key(row)
        if key in keyed:
            raise ResultsFileError(
                f"results {side} holds the row {'/'.join(map(str, key))} twice: "
                "pass one run's results.json per side"
            )
        keyed[key] = row
    return keyed


def row_diff(a: Iterable[Mapping[str, Any]], b: Iterable[Mapping[str, Any]]) -> RowDiff:
    """Compare two runs' rows (``results.json``'s ``rows``) as described in the module doc."""
    left, right = _by_key(a, "A"), _by_key(b, "B")
    fields_a = {f for row in left.values() for f in row} - TIMING_FIELDS
    fields_b = {f for row in right.values() for f in row} - TIMING_FIELDS
    both = sorted(fields_a & fields_b)
    shared = sorted(left.keys() & right.keys())
    differing = {
        key: bad
        for key in shared
        if (bad := tuple(f for f in both if left[key].get(f) != right[key].get(f)))
    }
    return RowDiff(
        compared=len(shared),
        only_in_a=tuple(sorted(left.keys() - right.keys())),
        only_in_b=tuple(sorted(right.keys() - left.keys())),
        differing=differing,
        fields_only_in_a=frozenset(fields_a - fields_b),
        fields_only_in_b=frozenset(fields_b - fields_a),
    )


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a ``results.json`` that ``guidedrag eval`` wrote."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ResultsFileError(
            f"{path} is not JSON ({exc.msg}, line {exc.lineno}): pass a results.json"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
        raise ResultsFileError(
            f"{path} has no 'rows' list: pass a results.json from guidedrag eval"
        )
    rows: list[dict[str, Any]] = data["rows"]
    return rows
