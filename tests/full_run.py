"""CI-sized samples of exhaustive test loops, and the switch that runs them in full.

Some tests walk every case of a loop (a kill after *every* schema change of a migrate): each case
costs seconds against a real server, and CI runs on two cores. Under ``GUIDEDRAG_TESTS_FULL=1``
(``scripts/tests_full.sh``) they walk every case; otherwise a deterministic sample that always
holds the first and last cases and cases spread evenly between them, so CI still checks the loop's
ends and its middle on every run, and a failure names the same case on every machine.
"""

from __future__ import annotations

import os

FULL_ENV = "GUIDEDRAG_TESTS_FULL"


def full_run() -> bool:
    """True when ``GUIDEDRAG_TESTS_FULL=1``: exhaustive loops run every case."""
    return os.environ.get(FULL_ENV) == "1"


def ci_sample(cases: range, size: int) -> list[int]:
    """Every case under a full run; else ``size`` cases (at least 2): the first, the last and
    ones spread evenly between them, in order and without repeats."""
    if size < 2:
        raise ValueError(f"a CI sample needs at least 2 cases (first and last), not {size}")
    items = list(cases)
    if full_run() or len(items) <= size:
        return items
    picks = {round(i * (len(items) - 1) / (size - 1)) for i in range(size)}
    return [items[i] for i in sorted(picks)]
