"""Document-scoped primitives: the chunks of the documents that satisfy a condition."""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from guidedrag_graph.errors import SelectionError
from guidedrag_graph.selection.core import quote
from guidedrag_graph.selection.primitives import Args, Leaf, Named, Resolved

if TYPE_CHECKING:
    from guidedrag_graph.selection.evaluator import Evaluator, InMemoryGraph
    from guidedrag_graph.selection.resolution import Answers


@dataclass(frozen=True, eq=False, repr=False)
class DocumentScoped(Leaf):
    def documents(self, graph: InMemoryGraph) -> set[str]:
        """The ids of the documents whose chunks it selects."""
        raise NotImplementedError

    def evaluate(self, ev: Evaluator) -> set[str]:
        docs = self.documents(ev.graph)
        return {c for c, d in ev.graph.chunks.items() if d in docs}


@dataclass(frozen=True, eq=False, repr=False)
class Document(Named, DocumentScoped):
    """Chunks of the document with this id or, failing that, this exact title."""

    op: ClassVar[str] = "document"
    template: ClassVar[str] = "select_document"

    def resolve(self, by: Answers) -> Resolved:
        return by.document(self)

    def template_values(self, res: Resolved) -> dict[str, Any]:
        return {"ids": list(res.ids)}

    def documents(self, graph: InMemoryGraph) -> set[str]:
        docs = graph.documents.values()
        return {d.id for d in docs if d.id == self.name} or {
            d.id for d in docs if d.title == self.name
        }


@dataclass(frozen=True, eq=False, repr=False)
class Source(Named, DocumentScoped):
    """Chunks of every document whose source equals ``name``."""

    op: ClassVar[str] = "source"
    template: ClassVar[str] = "select_source"

    def template_values(self, res: Resolved) -> dict[str, Any]:
        return {"source": self.name}

    def documents(self, graph: InMemoryGraph) -> set[str]:
        return {d.id for d in graph.documents.values() if d.source == self.name}


@dataclass(frozen=True, eq=False, repr=False)
class Date(DocumentScoped):
    """Chunks whose document date lies in [start, end]; ``None`` leaves a side open.

    Bounds are ISO dates, ``YYYY-MM`` or years: a year ``2002`` as a start means 2002-01-01 and
    as an end 2002-12-31, so ``date(2002, 2026)`` is the paper's "2002–2026 AD".
    """

    start: str | None = None
    end: str | None = None
    op: ClassVar[str] = "date"
    template: ClassVar[str] = "select_date"
    args: ClassVar[Args] = {"start": (str | int | None, None), "end": (str | int | None, None)}

    def __post_init__(self) -> None:
        for name in ("start", "end"):
            value = getattr(self, name)
            if isinstance(value, int) and not isinstance(value, bool):
                object.__setattr__(self, name, str(value))
            elif value is not None and not isinstance(value, str):
                raise SelectionError(f"date bounds are strings, years or null, not {value!r}")
        self.bounds()  # fail at construction, where the parser can point at it

    def bounds(self) -> tuple[str, str]:
        """Inclusive ISO bounds; open sides become 0001-01-01 and 9999-12-31 (index-friendly)."""
        return (
            _iso_bound(self.start, first=True) if self.start is not None else "0001-01-01",
            _iso_bound(self.end, first=False) if self.end is not None else "9999-12-31",
        )

    def template_values(self, res: Resolved) -> dict[str, Any]:
        start, end = self.bounds()
        return {"from": start, "to": end}

    def documents(self, graph: InMemoryGraph) -> set[str]:
        lo, hi = (dt.date.fromisoformat(b) for b in self.bounds())
        docs = graph.documents.values()
        return {d.id for d in docs if d.date is not None and lo <= d.date <= hi}

    def _text(self, kids: list[str]) -> str:
        def bound(value: str | None) -> str:
            return "null" if value is None else quote(value)

        return f"date({bound(self.start)}, {bound(self.end)})"


def _iso_bound(value: str, *, first: bool) -> str:
    """``2002`` -> 2002-01-01 / 2002-12-31; ``2002-02`` -> 2002-02-01 / 2002-02-28; ISO as is."""
    text = value.strip()
    try:
        if re.fullmatch(r"-?\d{1,4}", text):
            year = int(text)
            return dt.date(year, 1, 1).isoformat() if first else dt.date(year, 12, 31).isoformat()
        if re.fullmatch(r"\d{4}-\d{2}", text):
            year, month = (int(p) for p in text.split("-"))
            day = 1 if first else calendar.monthrange(year, month)[1]
            return dt.date(year, month, day).isoformat()
        return dt.date.fromisoformat(text).isoformat()
    except ValueError:
        raise SelectionError(
            f"bad date bound {value!r}: write a year (2002), a month (2002-05) or a date "
            f"(2002-05-17)"
        ) from None
