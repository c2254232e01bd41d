"""Ask a pure decision, read the fact it lacks, ask again: the one loop at the edge (issue 37).

Planning decides from facts handed in and raises an exception naming the first fact it lacks
(``resolution.MissingNameFact``, ``entity_matches.MissingEntityFact``,
``retrieval.facts.MissingFact``, ``relations_asked.MissingRelationFact``,
``scope_kept.MissingScopeFact``, ``filter_checks.MissingFilterFact``,
``entity_links.MissingLinkFact``, ``scope_compiled.MissingCompileFact``); its edge reads that
fact and asks again, so a fact costs its read only when a decision needs it, in the order the
decision needs it. ``decided`` is that loop, shared by ``NameResolution.decided``
(``selection/name_reads.py``), ``Resolver._fetch_entity_ids`` (``selection/resolver.py``),
``Planner.planned`` (``retrieval/planner.py``), ``question_relations``
(``pipeline/question_relations.py``), ``ScopeNames._keep`` (``selection/scope_names.py``), the
filter checks (``pipeline/filter_reads.py``), ``EntityLinker.link_by_query``
(``linking/entities.py``) and a scope's compiling (``scope_reads.compiled``,
``selection/scope_reads.py``).

A decision that does not converge ends with ``FactsNotConverging`` instead of spinning: a fact
asked for again after it was read (the reader did not hand it in), or more reads than the
caller's bound (a decision asking without end). Pure: no driver, no database layer, no context
(the "Planning is pure" contract in ``pyproject.toml``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

_F = TypeVar("_F")
_T = TypeVar("_T")
_M = TypeVar("_M", bound=Exception)


class FactsNotConverging(RuntimeError):
    """A decision still lacked a fact after its reads: ``missing`` (the last one it raised),
    ``reads`` (how many were read), ``repeated`` (the fact was read before: its reader does
    not hand it in) or else the bound was reached."""

    def __init__(self, missing: Exception, reads: int, *, repeated: bool) -> None:
        why = (
            "was asked for again after it was read (its reader does not hand it in)"
            if repeated
            else f"is still missing after {reads} reads, the most this decision may make"
        )
        super().__init__(f"a planning decision does not converge: the fact ({missing}) {why}")
        self.missing = missing
        self.reads = reads
        self.repeated = repeated


def decided(
    decide: Callable[[_F], _T],
    facts: _F,
    read: Callable[[_F, _M], _F],
    missing: type[_M],
    key: Callable[[_M], Hashable],
    *,
    rounds: int,
) -> _T:
    """``decide(facts)``; while it raises ``missing``, ``facts = read(facts, lacking)`` and ask
    again. ``key`` names a missing fact: one asked for again after it was read ends the loop,
    as does a ``rounds``-th read's fact still missing (``FactsNotConverging``, chained to the
    last ``missing`` raised). ``read`` may hand the fact in place and return ``facts``."""
    asked: set[Hashable] = set()
    reads = 0
    while True:
        try:
            return decide(facts)
        except missing as lacking:
            name = key(lacking)
            if name in asked or reads >= rounds:
                raise FactsNotConverging(lacking, reads, repeated=name in asked) from lacking
            asked.add(name)
            reads += 1
            facts = read(facts, lacking)
