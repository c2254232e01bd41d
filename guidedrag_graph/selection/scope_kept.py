"""Which of the names a request asks about a trusted scope may show, decided from facts (issue
37): pure, the reads are ``ScopeNames``'s (``selection/scope_names.py``).

A scope's names are held in-process when it mentions at most ``MAX_SCOPE_ENTITIES`` entities:
the answer is then the asked names found in the held set, with no read. A scope too large to
hold is asked per request (``cypher/scope_names_check.cypher``): which of the names it keeps.
``kept`` decides from ``ScopeAsk`` — the names asked (each once, in order, a null never), the
held set or none, and the check's answer once read — and raises ``MissingScopeFact`` naming the
names to check when it needs that answer; the edge (``ScopeNames._keep``) reads it through
``selection/fact_rounds.py`` and asks again. Nothing is let through unchecked: a name is kept
only when the held set or the check's answer has it. This module imports no driver, database
layer or context (the "Planning is pure" contract in ``pyproject.toml``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Literal

# What a scope is asked about (``scope_names_check``'s fragments, and its parameter names).
ScopeKind = Literal["ids", "names", "types", "documents"]


class MissingScopeFact(LookupError):
    """The decision needed the scope's answer for ``ask`` (the ``kind`` of names asked): the
    edge reads it (``scope_names_check``) and asks again (``selection/fact_rounds.py``)."""

    def __init__(self, kind: ScopeKind, ask: tuple[str, ...]) -> None:
        # the names are not shown: a message must not carry an out-of-scope name anywhere
        super().__init__(f"scope names decided without the check of {len(ask)} {kind}")
        self.kind = kind
        self.ask = ask


@dataclass(slots=True)
class ScopeAsk:
    """One question to a scope: ``kind`` and the names ``wanted`` (``asked``'s list);
    ``held``: the scope's whole set of that kind when it is held in-process, else None;
    ``checked``: read at the edge, the names among ``wanted`` the check kept."""

    kind: ScopeKind
    wanted: list[str]
    held: Collection[str] | None
    checked: Collection[str] | None = None


def asked(values: Iterable[object]) -> list[str]:
    """``values`` as a scope is asked about them: as text, each once, in order, a null never."""
    return [str(v) for v in dict.fromkeys(values) if v is not None]


def kept(ask: ScopeAsk) -> list[str]:
    """The names of ``ask.wanted`` the scope may show, in their order: those in the held set;
    for a scope not held, those the check kept (``MissingScopeFact`` until it is read). Nothing
    asked needs no check."""
    within = ask.held
    if within is None and ask.wanted:
        within = ask.checked
        if within is None:
            raise MissingScopeFact(ask.kind, tuple(ask.wanted))
    if not within:
        return []
    return [v for v in ask.wanted if v in within]
