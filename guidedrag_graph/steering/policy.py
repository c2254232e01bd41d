"""Steering policy: semantics → ranker, top-k, prompt template and ``auto``'s tier boosts.

A small table users can edit: rules are tried in order, the first whose conditions all hold
wins. Defaults follow the paper: factoid questions rank by cosine, open questions by MMR (more
diverse context), and relational questions get the template that foregrounds the triplets.

The policy also holds the boosts of ``steering="auto"``'s graded tiers (:mod:`tiers`), per Table 2
configuration with a default. A policy file is either the original JSON list of rules, or an
object ``{"rules": [...], "tiers": {"default": {...}, "C2 entity": {...}}, "calibration": {...}}``
(what ``guidedrag calibrate`` writes; ``calibration`` is a free-form record of how it was fitted).
The built-in tier weights are a ``guidedrag calibrate`` run on MuSiQue (docs/steering.md).

>>> policy = SteeringPolicy.default()
>>> policy.decide(Semantics(question_type="open")).ranker
'mmr'
>>> custom = SteeringPolicy.from_json('[{"question_type": "factoid", "ranker": "mmr", "top_k": 3}]')
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.semantics import QuestionType, Semantics
from guidedrag_graph.steering.mapping import configuration_of
from guidedrag_graph.steering.tiers import TierWeights
from guidedrag_graph.vocabulary import PromptTemplate, Ranker


class SteeringRule(BaseModel):
    """One row: conditions (``None`` = any) and what to do when they hold."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    question_type: QuestionType | None = None
    complexity: Literal[1, 2] | None = None
    relational: bool | None = None
    ranker: Ranker = "cosine"
    top_k: int | None = Field(None, ge=1)
    template: PromptTemplate | None = None

    def matches(self, semantics: Semantics) -> bool:
        return (
            (self.question_type is None or self.question_type == semantics.question_type)
            and (self.complexity is None or self.complexity == semantics.complexity)
            and (self.relational is None or self.relational == semantics.relational)
        )


def _brief(exc: Exception) -> str:
    """One line per problem, ``where: what`` (pydantic's multi-line text does not fit a CLI)."""
    if isinstance(exc, ValidationError):
        return "; ".join(
            f"{'.'.join(str(x) for x in e['loc']) or 'policy'}: {e['msg']}" for e in exc.errors()
        )
    return " ".join(str(exc).split())


class SteeringDecision(BaseModel):
    """What the policy chose for one question (``top_k`` None = the settings' default)."""

    model_config = ConfigDict(frozen=True)

    ranker: Ranker
    top_k: int | None
    template: PromptTemplate
    rule: int | None


DEFAULT_RULES: tuple[SteeringRule, ...] = (
    SteeringRule(question_type="open", ranker="mmr", template="open"),
    SteeringRule(relational=True, ranker="cosine", template="relational"),
    SteeringRule(question_type="factoid", ranker="cosine", template="factoid"),
)


TierKey = Literal["default", "C1 entity", "C2 entity", "C1 relation", "C2 relation"]

# Built-in boosts of ``auto``: `guidedrag calibrate` on MuSiQue (100 questions, 5 folds, seed 0),
# the "default" key of its median-over-folds policy, unedited. Held-out relevant@5 54.0% vs base
# RAG 40.0% (docs/steering.md). E and ∩ fitted to 0 there (MuSiQue's answers sit one hop from the
# named entity); chunks of E are inside N, so they still get N's boost.
DEFAULT_TIER_WEIGHTS = TierWeights(intersection=0.0, entity=0.0, relation=0.1, hop=0.0, near=0.02)


def _default_tiers() -> dict[TierKey, TierWeights]:
    return {"default": DEFAULT_TIER_WEIGHTS}


class SteeringPolicy(BaseModel):
    """An ordered list of rules; the first match decides, else cosine + the question's template.

    ``tiers``: ``auto``'s boosts, keyed ``"default"`` or by a Table 2 configuration
    (``"C1 entity"``, ``"C2 entity"``, ``"C1 relation"``, ``"C2 relation"``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    rules: tuple[SteeringRule, ...] = DEFAULT_RULES
    tiers: dict[TierKey, TierWeights] = Field(default_factory=lambda: _default_tiers())
    calibration: dict[str, Any] | None = None

    @classmethod
    def default(cls) -> SteeringPolicy:
        return cls()

    @classmethod
    def from_json(cls, text: str) -> SteeringPolicy:
        """A JSON list of rules (the fields of ``SteeringRule``), or the object form."""
        try:
            data = json.loads(text)
            if isinstance(data, list):
                return cls(rules=tuple(SteeringRule.model_validate(row) for row in data))
            if not isinstance(data, dict):
                raise TypeError(f"expected a list or an object, got {type(data).__name__}")
            return cls.model_validate(data)
        except (json.JSONDecodeError, ValidationError, TypeError) as exc:
            detail = _brief(exc)
            raise ConfigurationError(
                f"steering policy is invalid ({detail}); expected a JSON list of rules such as "
                '[{"question_type": "open", "ranker": "mmr", "top_k": 8}] or an object '
                '{"rules": [...], "tiers": {"default": {"entity": 0.1, "near": 0.05}}}'
            ) from exc

    @classmethod
    def from_file(cls, path: str | Path) -> SteeringPolicy:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigurationError(
                f"{path}: not valid UTF-8 (byte 0x{exc.object[exc.start]:02x} at offset "
                f"{exc.start}): save the policy file as UTF-8"
            ) from exc
        except OSError as exc:
            raise ConfigurationError(
                f"cannot read steering policy {str(path)!r} ({exc.strerror}); "
                "check the path given to --policy / GUIDEDRAG_STEERING_POLICY"
            ) from exc
        return cls.from_json(text)

    def to_json(self) -> str:
        """The object form (round-trips through ``from_json``)."""
        data: dict[str, Any] = {
            "rules": [rule.model_dump(exclude_none=True) for rule in self.rules],
            "tiers": {str(key): w.model_dump() for key, w in self.tiers.items()},
        }
        if self.calibration is not None:
            data["calibration"] = self.calibration
        return json.dumps(data, indent=2, ensure_ascii=False)

    def tier_weights(self, semantics: Semantics | None) -> TierWeights:
        """``auto``'s boosts for the question's Table 2 configuration (else the default)."""
        config: TierKey = configuration_of(semantics or Semantics()).value
        return self.tiers.get(config) or self.tiers.get("default") or DEFAULT_TIER_WEIGHTS

    def decide(self, semantics: Semantics | None) -> SteeringDecision:
        semantics = semantics or Semantics()
        for index, rule in enumerate(self.rules):
            if rule.matches(semantics):
                template = rule.template or (
                    "relational" if semantics.relational else semantics.question_type
                )
                return SteeringDecision(
                    ranker=rule.ranker, top_k=rule.top_k, template=template, rule=index
                )
        return SteeringDecision(
            ranker="cosine", top_k=None, template=semantics.question_type, rule=None
        )
