"""Semantics: what a user states beside the question (the paper's configuration stage).

They are the raw material of a selection (entities, relations) and of steering (question type,
complexity, whether the question is relational). Kept as plain data so bundles, the CLI, the
Python API and the evaluation harness all speak the same shape.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.vocabulary import QuestionType

__all__ = ["QuestionType", "Semantics", "merge_stated"]

# Bounds on what a caller states (docs/selection-limits.md): a person or an LLM names a handful
# of entities; 10,000 of them, or one 50 MB name, is input to refuse before any work, at every
# door (Python, CLI, MCP, LangChain/LlamaIndex) alike. Names are bounded again, tighter, by
# GUIDEDRAG_MAX_STRING when they are resolved.
MAX_ITEMS = 1_000
MAX_CHARS = 100_000


class Semantics(BaseModel):
    """``{"entities": [...], "relations": [...], "question_type", "complexity", "relational"}``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    entities: tuple[str, ...] = ()
    relations: tuple[str, ...] = ()
    question_type: QuestionType = "factoid"
    complexity: Literal[1, 2] = Field(1, description="C1: one entity; C2: two or more")
    relational: bool = False
    categories: tuple[str, ...] = ()
    documents: tuple[str, ...] = ()
    date_from: str | None = None
    date_to: str | None = None

    @field_validator("entities", "relations", "categories", "documents")
    @classmethod
    def _bounded(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        if len(values) > MAX_ITEMS:
            raise ValueError(
                f"has {len(values):,} items; the limit is {MAX_ITEMS:,}: state the few that matter"
            )
        for value in values:
            if len(value) > MAX_CHARS:
                raise ValueError(
                    f"holds a name of {len(value):,} characters; the limit is {MAX_CHARS:,}"
                )
        return values

    @property
    def is_empty(self) -> bool:
        return not (self.entities or self.relations or self.categories or self.documents) and (
            self.date_from is None and self.date_to is None
        )


def describe_semantics_error(exc: ValidationError) -> str:
    """A rejected semantics as one line naming each bad field (never echoing its value: a
    refused value may be 10,000 names long)."""
    problems = "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'semantics'}: "
        f"{str(e['msg']).removeprefix('Value error, ')}"
        for e in exc.errors()
    )
    return f"invalid semantics ({problems})"


def merge_stated(
    semantics: Semantics | Mapping[str, Any] | None,
    entities: Sequence[str] | None = None,
    relations: Sequence[str] | None = None,
) -> Semantics | None:
    """The semantics a door was given, with its ``entities``/``relations`` shorthands merged in.

    One rule for every door (GuidedRetriever, LangChain, LlamaIndex, MCP), so the same inputs
    steer the same way: relations make the question relational and two or more entities make it
    C2 (as the CLI's ``--entity a --entity b``), unless the caller set those fields.
    """
    try:
        if isinstance(semantics, Mapping):
            semantics = Semantics.model_validate(dict(semantics))
        if entities or relations:
            base = semantics or Semantics()
            semantics = Semantics.model_validate(
                {
                    **base.model_dump(exclude_unset=True),
                    "entities": tuple(base.entities) + tuple(entities or ()),
                    "relations": tuple(base.relations) + tuple(relations or ()),
                }
            )
    except ValidationError as exc:
        raise ConfigurationError(describe_semantics_error(exc)) from None
    if semantics is None:
        return None
    fields = semantics.model_fields_set
    update: dict[str, Any] = {}
    if semantics.relations and "relational" not in fields:
        update["relational"] = True
    if len(semantics.entities) > 1 and "complexity" not in fields:
        update["complexity"] = 2
    return semantics.model_copy(update=update) if update else semantics
