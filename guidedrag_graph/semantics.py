"""Semantics: what a user states beside the question (the paper's configuration stage).

They are the raw material of a selection (entities, relations) and of steering (question type,
complexity, whether the question is relational). Kept as plain data so bundles, the CLI, the
Python API and the evaluation harness all speak the same shape.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from guidedrag_graph.vocabulary import QuestionType

__all__ = ["QuestionType", "Semantics", "merge_stated"]


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

    @property
    def is_empty(self) -> bool:
        return not (self.entities or self.relations or self.categories or self.documents) and (
            self.date_from is None and self.date_to is None
        )


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
    if semantics is None:
        return None
    fields = semantics.model_fields_set
    update: dict[str, Any] = {}
    if semantics.relations and "relational" not in fields:
        update["relational"] = True
    if len(semantics.entities) > 1 and "complexity" not in fields:
        update["complexity"] = 2
    return semantics.model_copy(update=update) if update else semantics
