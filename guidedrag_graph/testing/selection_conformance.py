"""One conformance suite for the selection algebra, run against every backend (Haystack's
document-store test mixin is the model).

``CASES`` and ``TIER_CASES`` pair a small graph with an expression and the chunks it must select
(or, for a ``boost``, each chunk's best tier). The expected values are written by hand from the
graphs below, not computed by any backend, so two backends cannot agree on a wrong answer. A
backend subclasses ``SelectionAlgebraConformance`` and provides a ``backend`` fixture
(``tests/test_selection_conformance.py``: the pure-Python evaluator and the Cypher backend).
Adding a case is adding a line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

import pytest

from guidedrag_graph.selection import Boost, Expr, Tier, entity, khop, parse
from guidedrag_graph.selection.evaluator import DocumentRec, EntityRec, InMemoryGraph
from guidedrag_graph.testing.examples import HOSTILE, roman_graph


def hub_graph() -> InMemoryGraph:
    """A hub with three neighbours that all lead to one more entity: for the hop cap.

    Whichever neighbours a cap of 2 keeps, they are all mentioned in k1 and all lead to M, so
    the chunks a capped hop selects do not depend on which ones were kept.
    """
    g = InMemoryGraph()
    g.documents = {"hd": DocumentRec("hd", "Hub", "lab", None)}
    g.chunks = {"k0": "hd", "k1": "hd", "k2": "hd", "k3": "hd"}
    g.entities = {
        i: EntityRec(i, name)
        for i, name in [("h", "Hub"), ("n1", "N1"), ("n2", "N2"), ("n3", "N3"), ("m", "M")]
    }
    g.entities["lone"] = EntityRec("lone", "Lone")
    g.mentions = {("k0", "h"), ("k1", "n1"), ("k1", "n2"), ("k1", "n3"), ("k2", "m")}
    g.mentions.add(("k3", "lone"))
    g.relations = {("h", "LINKS", n) for n in ("n1", "n2", "n3")}
    g.relations |= {(n, "LINKS", "m") for n in ("n1", "n2", "n3")}
    return g


# roman_graph (testing/examples.py), for reading the expected values:
#   documents d1 "Roman History" wiki 2005-03-01: c1 c2 c3 | d2 "Paris" news 1999-01-01: c4 |
#   d3 "Undated" wiki (no date): c5 c6
#   mentions  c1: Rome, Julius Caesar  c2: Julius Caesar, Gaul  c3: Roman Empire
#             c4: Paris, Gaul  c5: Rome  c6: the hostile name
#   aliases   Rome: Roma, The Eternal City  Julius Caesar: Caesar  Paris: Lutetia  hostile: ` {x}
#   types     Rome, Paris CITY  Julius Caesar PERSON  Gaul PLACE  Roman Empire STATE  hostile ODD
#   relations Caesar -FOUGHT_IN-> Gaul  Caesar -BORN_IN-> Rome  Rome -CAPITAL_OF-> Roman Empire
#             Gaul -NEIGHBOUR_OF-> Paris
GRAPHS: dict[str, Callable[[], InMemoryGraph]] = {"roman": roman_graph, "hub": hub_graph}


@dataclass(frozen=True)
class Case:
    """An expression (DSL text or a built one) on a graph, and the chunks it selects."""

    id: str
    expr: str | Expr
    expected: frozenset[str]
    graph: str = "roman"
    hop_cap: int = 10_000
    truncated: bool = False  # whether the hop cap cut a term (sizes() flags it)

    def expression(self) -> Expr:
        return parse(self.expr) if isinstance(self.expr, str) else self.expr


def case(id: str, expr: str | Expr, expected: str = "", *, cap: int = 10_000) -> Case:
    """A case on roman_graph; ``expected``: the chunk ids, space-separated."""
    return Case(id, expr, frozenset(expected.split()), "roman", cap)


def capped(id: str, expr: str, expected: str = "", *, cap: int = 2, cut: bool = True) -> Case:
    """A case on hub_graph under a hop cap (2 unless said), cutting a term unless ``cut`` is
    False."""
    return Case(id, expr, frozenset(expected.split()), "hub", cap, truncated=cut)


CASES: list[Case] = [
    # --- primitives ------------------------------------------------------------------------
    case("all", "all()", "c1 c2 c3 c4 c5 c6"),
    case("entity-name", "entity('Rome')", "c1 c5"),
    case("entity-id", "entity('caesar')", "c1 c2"),
    case("entity-name-key", "entity('  ROME ')", "c1 c5"),
    case("entity-alias", "entity('Roma')", "c1 c5"),
    case("entity-alias-key", "entity('the eternal city')", "c1 c5"),
    case("entity-hostile", f"entity({HOSTILE!r})", "c6"),
    case("entity-hostile-aliases", "entity('`') | entity('{x}')", "c6"),
    case("entities", "entity(['Rome', 'Gaul'])", "c1 c2 c4 c5"),
    case("entities-naming-one-entity-twice", "entity(['Rome', 'Roma'])", "c1 c5"),
    case("hop", "hop('Julius Caesar', ['FOUGHT_IN'])", "c2 c4"),
    case("hop-predicate-text", "hop('Julius Caesar', ['fought in'])", "c2 c4"),
    case(
        "hop-out", "hop('Julius Caesar', ['FOUGHT_IN', 'BORN_IN'], direction='out')", "c1 c2 c4 c5"
    ),
    case("hop-out-none", "hop('Gaul', ['FOUGHT_IN'], direction='out')"),
    case("hop-in", "hop('Gaul', ['FOUGHT_IN'], direction='in')", "c1 c2"),
    case("hop-depth-2", "hop('Julius Caesar', ['BORN_IN', 'CAPITAL_OF'], depth=2)", "c1 c3 c5"),
    case("khop-1", "khop('Julius Caesar', 1)", "c1 c2 c4 c5"),
    case("khop-2", "khop('Julius Caesar', 2)", "c1 c2 c3 c4 c5"),
    case("khop-start-excluded", "khop('Paris', 3)", "c1 c2 c4 c5"),
    case("near", "near('Gaul')", "c1 c2 c4"),
    case("near-2", "near('Paris', 2)", "c1 c2 c4"),
    case("type", "type('CITY')", "c1 c4 c5"),
    case("type-is-case-sensitive", "type('city')"),
    case("type-odd", "type('ODD')", "c6"),
    case("category", "category('city')", "c1 c4 c5"),
    case("document-id", "document('d1')", "c1 c2 c3"),
    case("document-title", "document('Paris')", "c4"),
    case("document-title-undated", "document('Undated')", "c5 c6"),
    case("source", "source('wiki')", "c1 c2 c3 c5 c6"),
    case("source-news", "source('news')", "c4"),
    case("date-years", "date(2002, 2026)", "c1 c2 c3"),
    case("date-open-start", "date(null, '1999-01-01')", "c4"),
    case("date-open-end", "date('1999-02', null)", "c1 c2 c3"),
    case("date-month-excludes", "date('2005-04', null)"),
    case("date-open", "date(null, null)", "c1 c2 c3 c4"),
    case("chunks", "chunks('c1', 'c4', 'nope')", "c1 c4"),
    case("chunks-none", "chunks()"),
    case(
        "boost-is-every-chunk", "boost(entity('Rome'): 0.3, near('Gaul'): 0.1)", "c1 c2 c3 c4 c5 c6"
    ),
    # --- operators and precedence ----------------------------------------------------------
    case("union", "entity('Rome') | entity('Gaul')", "c1 c2 c4 c5"),
    case("union-of-entities", "entity('Rome') | entity('Paris') | entity(['Gaul'])", "c1 c2 c4 c5"),
    case("intersect", "entity('Julius Caesar') & entity('Gaul')", "c2"),
    case("intersect-empty", "entity('Rome') & entity('Paris')"),
    case("difference", "entity('Julius Caesar') - entity('Gaul')", "c1"),
    case("difference-left-assoc", "all() - entity('Rome') - entity('Gaul')", "c3 c6"),
    case(
        "difference-grouped", "all() - (entity('Julius Caesar') - entity('Gaul'))", "c2 c3 c4 c5 c6"
    ),
    case("symdiff", "entity('Julius Caesar') ^ entity('Rome')", "c2 c5"),
    case("symdiff-self", "entity('Rome') ^ entity('Rome')"),
    case("and-before-or", "entity('Rome') | entity('Gaul') & source('wiki')", "c1 c2 c5"),
    case("xor-before-or", "entity('Rome') ^ entity('Gaul') | entity('Paris')", "c1 c2 c4 c5"),
    case(
        "minus-before-and",
        "(entity('Rome') | entity('Gaul')) & source('wiki') - chunks('c5')",
        "c1 c2",
    ),
    case("entity-and-hop", "entity('Julius Caesar') & hop('Julius Caesar', ['FOUGHT_IN'])", "c2"),
    case(
        "shared-subexpression",
        "(entity('Rome') | near('Gaul')) & (entity('Rome') | near('Gaul'))",
        "c1 c2 c4 c5",
    ),
    # --- unknown names and relation types ----------------------------------------------------
    case("unknown-entity", "entity('Atlantis')"),
    case("unknown-entity-in-union", "entity('Atlantis') | entity('Rome')", "c1 c5"),
    case("unknown-entity-in-intersection", "entity('Atlantis') & entity('Rome')"),
    case("unknown-entity-subtracted", "all() - entity('Atlantis')", "c1 c2 c3 c4 c5 c6"),
    case("unknown-entities-partly", "entity(['Atlantis', 'Paris'])", "c4"),
    case("unknown-entities-all", "entity('Atlantis') | entity('Nowhere')"),
    case("unknown-hop-start", "hop('Atlantis', ['FOUGHT_IN'])"),
    case("unknown-khop-start", "khop('Atlantis', 2)"),
    case("unknown-near-start", "near('Atlantis')"),
    case("unknown-relation-type", "hop('Julius Caesar', ['NOPE'])"),
    case("unknown-one-of-the-types", "hop('Julius Caesar', ['FOUGHT_IN', 'NOPE'])"),
    case("lexical-type-is-no-relation", "hop('Julius Caesar', ['MENTIONS'])"),
    case("hostile-relation-type", f"hop('Rome', [{HOSTILE!r}])"),
    case("unknown-document", "document('nowhere')"),
    case("unknown-source", "source('none')"),
    case("unknown-type-in-union", "type('NOPE') | entity('Rome')", "c1 c5"),
    # --- the hop cap: any neighbours a cap keeps select the same chunks (see hub_graph) ------
    capped("khop-capped", "khop('Hub', 1)", "k1"),
    capped("khop-capped-then-on", "khop('Hub', 2)", "k1 k2"),
    capped("hop-out-capped", "hop('Hub', ['LINKS'], direction='out')", "k1"),
    capped("hop-in-capped", "hop('M', ['LINKS'], direction='in')", "k1"),
    capped("hop-in-none", "hop('Hub', ['LINKS'], direction='in')", cut=False),
    capped("cap-reached-is-not-cut", "khop('Hub', 1)", "k1", cap=3, cut=False),
    capped("cap-default", "khop('Hub', 2)", "k1 k2", cap=10_000, cut=False),
    capped("cut-shows-through-union", "entity('Hub') | khop('Hub', 1)", "k0 k1"),
    capped("cut-shows-through-difference", "khop('Hub', 1) - entity('N1')"),
    capped("no-neighbours", "khop('Lone', 2)", cut=False),
    capped("near-capped", "near('N1')", "k1"),
]


@dataclass(frozen=True)
class TierCase:
    """A ``boost`` on a graph, and each chunk's (best weight, best tier's name)."""

    id: str
    expr: str | Boost
    expected: dict[str, tuple[float, str]] = field(default_factory=dict)
    graph: str = "roman"

    def expression(self) -> Boost:
        expr = parse(self.expr) if isinstance(self.expr, str) else self.expr
        assert isinstance(expr, Boost)
        return expr


ROME, GAUL = "entity('Rome')", "entity('Gaul')"
TIER_CASES: list[TierCase] = [
    TierCase(
        "heaviest-tier-wins",
        f"boost({ROME}: 0.3, near('Rome'): 0.1, all(): 0.0)",
        {"c1": (0.3, ROME), "c5": (0.3, ROME), "c2": (0.1, "near('Rome')")}
        | {c: (0.0, "all()") for c in ("c3", "c4", "c6")},
    ),
    TierCase(
        "ties-go-to-the-first-written",
        f"boost({GAUL}: 0.2, entity('Paris'): 0.2)",
        {"c2": (0.2, GAUL), "c4": (0.2, GAUL)},
    ),
    TierCase(
        "weight-not-position",
        f"boost(entity('Paris'): 0.1, {GAUL}: 0.2)",
        {"c2": (0.2, GAUL), "c4": (0.2, GAUL)},
    ),
    TierCase(
        "named-tiers",
        Boost(
            (
                Tier(entity("Julius Caesar"), 0.5, "E"),
                Tier(khop("Julius Caesar", 1), 0.05, "A_hop"),
            )
        ),
        {"c1": (0.5, "E"), "c2": (0.5, "E"), "c4": (0.05, "A_hop"), "c5": (0.05, "A_hop")},
    ),
    TierCase(
        "unknown-entity-tier-boosts-nothing",
        f"boost(entity('Atlantis'): 0.5, {ROME}: 0.1)",
        {"c1": (0.1, ROME), "c5": (0.1, ROME)},
    ),
    TierCase(
        "unknown-relation-tier-boosts-nothing",
        f"boost(hop('Julius Caesar', ['NOPE']): 1.0, {GAUL}: 0.2)",
        {"c2": (0.2, GAUL), "c4": (0.2, GAUL)},
    ),
    TierCase(
        "zero-weight-tier-still-names-its-chunks",
        f"boost(all(): 0.0, {ROME}: 0.2)",
        {"c1": (0.2, ROME), "c5": (0.2, ROME)}
        | {c: (0.0, "all()") for c in ("c2", "c3", "c4", "c6")},
    ),
    TierCase(
        "tiers-sharing-a-term",
        f"boost({ROME} | {GAUL}: 0.2, {ROME}: 0.3)",
        {"c1": (0.3, ROME), "c5": (0.3, ROME)}
        | {c: (0.2, f"{ROME} | {GAUL}") for c in ("c2", "c4")},
    ),
]


class SelectionBackend(Protocol):
    """What a backend answers for an expression over one of ``GRAPHS``."""

    def select(self, graph: str, expr: Expr, hop_cap: int) -> set[str]:
        """The ids of the chunks ``expr`` selects."""
        ...

    def size(self, graph: str, expr: Expr, hop_cap: int) -> tuple[int, bool]:
        """How many chunks ``expr`` selects, and whether the hop cap cut a term."""
        ...

    def tiers(self, graph: str, expr: Boost, hop_cap: int) -> dict[str, tuple[float, str]]:
        """Chunk id -> (best weight, best tier's name), for every chunk of a tier."""
        ...


class SelectionAlgebraConformance:
    """Every case, against the ``backend`` fixture a subclass provides.

    ``known_gaps``: test names (``test_...[case-id]``) on which this backend is known to differ,
    each with the reason; they must fail (strictly: a gap that closes is removed from here).
    """

    known_gaps: ClassVar[dict[str, str]] = {}

    @pytest.fixture(autouse=True)
    def _known_gap(self, request: pytest.FixtureRequest) -> None:
        if reason := self.known_gaps.get(request.node.name):
            request.applymarker(pytest.mark.xfail(strict=True, reason=reason))

    @pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
    def test_selects_the_expected_chunks(self, backend: SelectionBackend, case: Case) -> None:
        got = backend.select(case.graph, case.expression(), case.hop_cap)
        assert got == case.expected, case.expr

    @pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
    def test_sizes_and_the_hop_cap_flag(self, backend: SelectionBackend, case: Case) -> None:
        got = backend.size(case.graph, case.expression(), case.hop_cap)
        assert got == (len(case.expected), case.truncated), case.expr

    @pytest.mark.parametrize("case", TIER_CASES, ids=[c.id for c in TIER_CASES])
    def test_boost_tiers(self, backend: SelectionBackend, case: TierCase) -> None:
        assert backend.tiers(case.graph, case.expression(), 10_000) == case.expected, case.expr
