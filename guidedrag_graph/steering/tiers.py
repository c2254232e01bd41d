"""The ``auto`` default: graded tiers of graph evidence, as boosts over every chunk.

Hard steering (the paper) ranks only inside one selection, so when the answer sits one step away
from the named entity (a multi-hop question), or the intersection of two entities is empty, it
retrieves worse than plain RAG. ``auto`` keeps every chunk (U) in play and adds to each chunk's
(1+cos)/2 score the weight of the *best* tier it falls in, strongest evidence first:

====  ==========================================  =======================================
tier  selection                                    when
====  ==========================================  =======================================
∩     ``entity(E1) & entity(E2) & ...``            C2 questions (two or more entities)
E     ``entity(E1) | entity(E2) | ...``            any named entity
A_rel ``hop(E1, R) | hop(E2, R) | ...``            relation types stated
A_hop ``khop(E1, 1) | khop(E2, 1) | ...``          any named entity
N     ``near(E1) | near(E2) | ...``                any named entity (co-mention)
U     every chunk, no boost
====  ==========================================  =======================================

An empty tier simply boosts nothing (an empty ∩ *relaxes* to E instead of abstaining). The
weights come from a steering policy (``TierWeights``, per Table 2 configuration); the built-in
ones are a ``guidedrag calibrate`` run on MuSiQue (docs/steering.md). A weight ≥ 1 puts a tier's
members above every chunk outside it (the cosine score lies in [0, 1]); small weights only
re-order close calls. A zero weight drops the tier from the query.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property, lru_cache, reduce

from pydantic import BaseModel, ConfigDict, Field, field_validator

from guidedrag_graph.schema.presets import SchemaMapping, relation_type_name
from guidedrag_graph.selection.compiled_forms import CompiledPlan
from guidedrag_graph.selection.compiler import compile_plan
from guidedrag_graph.selection.nodes import Boost, Expr, Tier, entity, hop, khop, near
from guidedrag_graph.selection.primitives import Resolved
from guidedrag_graph.semantics import Semantics
from guidedrag_graph.steering.mapping import Configuration, configuration_of

# Tier names, strongest first (the order ties are broken in).
TIER_NAMES: tuple[str, ...] = ("∩", "E", "A_rel", "A_hop", "N")
_FIELDS: dict[str, str] = {
    "∩": "intersection",
    "E": "entity",
    "A_rel": "relation",
    "A_hop": "hop",
    "N": "near",
}


class TierWeights(BaseModel):
    """Boost per tier, added to the (1+cos)/2 score of a chunk whose best tier it is."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    intersection: float = Field(0.0, ge=0.0, le=10.0)
    entity: float = Field(0.0, ge=0.0, le=10.0)
    relation: float = Field(0.0, ge=0.0, le=10.0)
    hop: float = Field(0.0, ge=0.0, le=10.0)
    near: float = Field(0.0, ge=0.0, le=10.0)

    @field_validator("*")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError("a tier weight must be a finite number")
        return value

    def of(self, tier: str) -> float:
        return float(getattr(self, _FIELDS[tier]))

    def as_tuple(self) -> tuple[float, ...]:
        return tuple(self.of(t) for t in TIER_NAMES)

    @classmethod
    def from_tuple(cls, values: tuple[float, ...]) -> TierWeights:
        return cls(**{_FIELDS[t]: float(v) for t, v in zip(TIER_NAMES, values, strict=True)})

    @property
    def intersects(self) -> bool:
        """Whether ∩ is graded above the union E (else ∩ adds nothing: the policy is ∪)."""
        return self.intersection > self.entity


@dataclass(frozen=True)
class AutoTier:
    """One graded tier: its name (``E``, ``N``, ...), selection and boost."""

    name: str
    expr: Expr
    weight: float


@dataclass(frozen=True)
class AutoPlan:
    """What ``auto`` runs for one question: the configuration, its tiers (weight-descending)."""

    configuration: Configuration
    tiers: tuple[AutoTier, ...]
    entities: tuple[str, ...]
    relations: tuple[str, ...]

    @property
    def is_all(self) -> bool:
        return not self.tiers

    @cached_property
    def _boost(self) -> Boost | None:
        if not self.tiers:
            return None
        return Boost(tuple(Tier(t.expr, t.weight, t.name) for t in self.tiers))

    def boost(self) -> Boost | None:
        """The tiers as a selection expression (None when there is no tier: U); one object per
        plan, so a plan asked again hashes and compares by identity (``prepare_tiers``' cache)."""
        return self._boost

    def text(self) -> str:
        """The DSL text: ``boost(entity('x'): 0.3, near('x'): 0.05)``, or ``all()``."""
        expr = self.boost()
        return "all()" if expr is None else expr.to_text()

    def compiled(
        self,
        resolved: Mapping[Expr, Resolved],
        schema: SchemaMapping,
        *,
        hop_cap: int,
        walk: str = "cypher",
    ) -> CompiledPlan | None:
        """The tiers compiled into ONE body from what their leaves resolved to (None: no tier,
        U ranks by cosine); its entity-only tiers listed only when that pays (``by_entities``),
        walked by the plugin's functions or Cypher (``walk``). No I/O: ``prepare_tiers``
        resolves the names and checks the cost around it."""
        expr = self.boost()
        if expr is None:
            return None
        return compile_plan(expr, resolved, schema, hop_cap=hop_cap, by_entities=True, walk=walk)


def _union(exprs: list[Expr]) -> Expr:
    return reduce(lambda a, b: a | b, exprs)


def tier_candidates(semantics: Semantics) -> list[tuple[str, Expr]]:
    """Every tier the semantics support, strongest first (before weights are applied)."""
    names = list(dict.fromkeys(semantics.entities))
    if not names:
        return []
    relations = list(dict.fromkeys(relation_type_name(r) for r in semantics.relations))
    out: list[tuple[str, Expr]] = []
    if semantics.complexity == 2 and len(names) >= 2:
        out.append(("∩", reduce(lambda a, b: a & b, [entity(n) for n in names])))
    out.append(("E", _union([entity(n) for n in names])))
    if relations:
        out.append(("A_rel", _union([hop(n, relations) for n in names])))
    out.append(("A_hop", _union([khop(n, 1) for n in names])))
    out.append(("N", _union([near(n) for n in names])))
    return out


def plan_auto(semantics: Semantics | None, weights: TierWeights) -> AutoPlan:
    """The tiers ``auto`` ranks with; tiers of weight 0 are left out (they boost nothing).

    A pure function of two frozen values, kept for the last ``PLANS_KEPT`` pairs: a question
    asked again gets the same plan object (and its expressions' cached hashes)."""
    semantics = semantics or Semantics()
    try:
        return _plan_auto(semantics, weights)
    except TypeError:  # a field set to a list by model_copy (no validation): not hashable
        return _plan_auto.__wrapped__(semantics, weights)


PLANS_KEPT = 1024


@lru_cache(maxsize=PLANS_KEPT)
def _plan_auto(semantics: Semantics, weights: TierWeights) -> AutoPlan:
    candidates = tier_candidates(semantics)
    tiers = [AutoTier(n, e, weights.of(n)) for n, e in candidates if weights.of(n) > 0.0]
    if not weights.intersects:  # ∩ ⊆ E: graded no higher than E, it changes no chunk's boost
        tiers = [t for t in tiers if t.name != "∩"]
    order = {name: i for i, name in enumerate(TIER_NAMES)}
    tiers.sort(key=lambda t: (-t.weight, order[t.name]))
    return AutoPlan(
        configuration=configuration_of(semantics),
        tiers=tuple(tiers),
        entities=tuple(dict.fromkeys(semantics.entities)),
        relations=tuple(dict.fromkeys(relation_type_name(r) for r in semantics.relations)),
    )
