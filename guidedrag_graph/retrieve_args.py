"""``retrieve()``'s arguments, validated once by a pydantic model (as neo4j-graphrag does).

A bad value is a ``ConfigurationError`` naming the argument and the fix, never a silent default:
``k=0`` is an error, not "the settings' top_k" (``None`` means that).
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.vocabulary import PATHS, RANKERS, STEERINGS, Path, Ranker, Steering, one_of


class RetrieveArgs(BaseModel):
    """``k`` ≥ 1, a finite ``threshold`` in [-1, 1] (raw cosine), known steering/ranker/path."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    k: int | None = Field(None, ge=1)
    ranker: Ranker | None = None
    steering: Steering | None = None
    path: Path | None = None
    threshold: float | None = Field(None, ge=-1.0, le=1.0)

    @field_validator("threshold")
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        if value is not None and not math.isfinite(value):
            raise ValueError("must be a finite number")
        return value

    @classmethod
    def check(
        cls,
        *,
        k: int | None,
        ranker: str | None,
        steering: str | None,
        path: str | None,
        threshold: float | None,
    ) -> RetrieveArgs:
        try:
            return cls.model_validate(
                {
                    "k": k,
                    "ranker": ranker,
                    "steering": steering,
                    "path": path,
                    "threshold": threshold,
                }
            )
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(x) for x in e['loc'])}={e.get('input')!r}: {e['msg']}"
                for e in exc.errors()
            )
            raise ConfigurationError(
                f"invalid retrieve() argument ({problems}); use k >= 1, threshold in [-1, 1], "
                f"steering {one_of(STEERINGS)}, ranker {one_of(RANKERS)}, path {one_of(PATHS)}"
            ) from None
