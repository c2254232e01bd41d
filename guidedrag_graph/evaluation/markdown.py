"""How the report writes a number or a table: one convention for every section."""

from __future__ import annotations

import math
from collections.abc import Sequence


def pct(x: float | None) -> str:
    """A share as a percentage; ``–`` where there is nothing to measure (None or NaN)."""
    return "–" if x is None or math.isnan(x) else f"{100 * x:.1f}%"


def num(x: float | None, digits: int = 2) -> str:
    return "–" if x is None or math.isnan(x) else f"{x:.{digits}f}"


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    # A pipe inside a cell (the union operator) would end the cell in GitHub's tables.
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join(lines)
