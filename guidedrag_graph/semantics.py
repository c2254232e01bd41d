"""Semantics: what a user states beside the question (the paper's configuration stage).

They are the raw material of a selection (entities, relations) and of steering (question type,
complexity, whether the question is relational). Kept as plain data so bundles, the CLI, the
Python API and the evaluation harness all speak the same shape.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from guidedrag_graph.vocabulary import QuestionType

__all__ = ["QuestionType", "Semantics"]


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
