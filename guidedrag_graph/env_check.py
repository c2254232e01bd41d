"""Misspelt ``GUIDEDRAG_*`` variables: a one-line warning naming the close match.

Settings ignore variables they do not know (``extra="ignore"``: a ``.env`` shared with other
tools must not break us), so ``GUIDEDRAG_TOPK=3`` or ``GUIDEDRAG_NEO4J_URI=...`` would be silently
without effect. The CLI calls ``unknown_variables`` once at start and prints what it finds.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping

from guidedrag_graph.config import Settings, env_name

PREFIX = "GUIDEDRAG_"
# Variables read outside Settings: the CLI's debug switch, Java homes per major version, and
# the test suite's and benchmarks' own.
_OTHER = frozenset({"GUIDEDRAG_DEBUG", "GUIDEDRAG_UPDATE_GOLDEN"})
_OTHER_PATTERNS = (
    re.compile(r"^GUIDEDRAG_JAVA\d+_HOME$"),
    re.compile(r"^GUIDEDRAG_TEST_"),
    re.compile(r"^GUIDEDRAG_BENCH_"),
)


def known_variables() -> frozenset[str]:
    """Every variable a setting is read from (its alias, such as ``NEO4J_URI``, or
    ``GUIDEDRAG_<FIELD>``), and the other ``GUIDEDRAG_*`` variables the package reads."""
    names = {env_name(field) for field in Settings.model_fields}
    return frozenset(names | _OTHER)


def unknown_variables(environ: Mapping[str, str]) -> list[str]:
    """One warning per ``GUIDEDRAG_*`` variable of ``environ`` that nothing reads."""
    known = known_variables()
    warnings = []
    for name in sorted(environ):
        if not name.startswith(PREFIX) or name in known:
            continue
        if any(p.match(name) for p in _OTHER_PATTERNS):
            continue
        warnings.append(_warning(name, known))
    return warnings


def _warning(name: str, known: Iterable[str]) -> str:
    match = _closest(name, known)
    hint = f"; did you mean {match}?" if match else "; `guidedrag config` lists the variables"
    return f"{name} is not a guidedrag setting and is ignored{hint}"


def _closest(name: str, known: Iterable[str]) -> str | None:
    """The known variable ``name`` most likely meant: the same letters without ``_`` first
    (``GUIDEDRAG_TOPK``), then a prefix-free one (``GUIDEDRAG_NEO4J_URI`` -> ``NEO4J_URI``),
    then the closest spelling."""
    candidates = sorted(known)
    squashed = name.replace("_", "")
    for candidate in candidates:
        if candidate.replace("_", "") == squashed:
            return candidate
    bare = name.removeprefix(PREFIX)
    if bare in candidates:
        return bare
    close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.75)
    return close[0] if close else None
