"""Steering policy: semantics → ranker, top-k and prompt template (paper §3.3–3.4).

A small table users can edit: rules are tried in order, the first whose conditions all hold
wins. Defaults follow the paper: factoid questions rank by cosine, open questions by MMR (more
diverse context), and relational questions get the template that foregrounds the triplets.

>>> policy = SteeringPolicy.default()
>>> policy.decide(Semantics(question_type="open")).ranker
'mmr'
>>> custom = SteeringPolicy.from_json('[{"question_type": "factoid", "ranker": "mmr", "top_k": 3}]')
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.semantics import QuestionType, Semantics


class SteeringRule(BaseModel):
    """One row: conditions (``None`` = any) and what to do when they hold."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    question_type: QuestionType | None = None
    complexity: Literal[1, 2] | None = None
    relational: bool | None = None
    ranker: Literal["cosine", "mmr"] = "cosine"
    top_k: int | None = None
    template: Literal["factoid", "open", "relational"] | None = None

    def matches(self, semantics: Semantics) -> bool:
        return (
            (self.question_type is None or self.question_type == semantics.question_type)
            and (self.complexity is None or self.complexity == semantics.complexity)
            and (self.relational is None or self.relational == semantics.relational)
        )


class SteeringDecision(BaseModel):
    """What the policy chose for one question (``top_k`` None = the settings' default)."""

    model_config = ConfigDict(frozen=True)

    ranker: Literal["cosine", "mmr"]
    top_k: int | None
    template: Literal["factoid", "open", "relational"]
    rule: int | None


DEFAULT_RULES: tuple[SteeringRule, ...] = (
    SteeringRule(question_type="open", ranker="mmr", template="open"),
    SteeringRule(relational=True, ranker="cosine", template="relational"),
    SteeringRule(question_type="factoid", ranker="cosine", template="factoid"),
)


class SteeringPolicy(BaseModel):
    """An ordered list of rules; the first match decides, else cosine + the question's template."""

    model_config = ConfigDict(frozen=True)

    rules: tuple[SteeringRule, ...] = DEFAULT_RULES

    @classmethod
    def default(cls) -> SteeringPolicy:
        return cls()

    @classmethod
    def from_json(cls, text: str) -> SteeringPolicy:
        """Rules as a JSON list of objects (the same fields as ``SteeringRule``)."""
        try:
            data = json.loads(text)
            return cls(rules=tuple(SteeringRule.model_validate(row) for row in data))
        except (json.JSONDecodeError, ValidationError, TypeError) as exc:
            raise ConfigurationError(
                f"steering policy is not a JSON list of rules ({exc}); example: "
                '[{"question_type": "open", "ranker": "mmr", "top_k": 8}]'
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
        return cls.from_json(text)

    def to_json(self) -> str:
        return json.dumps([rule.model_dump(exclude_none=True) for rule in self.rules], indent=2)

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
