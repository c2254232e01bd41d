"""What retrieval needs of a selection: a Cypher fragment binding ``c`` to each chunk once.

The selection stage's ``CompiledSelection`` satisfies these protocols; ``AllChunks`` (U, base
RAG) and ``ChunkIdSelection`` (a manual list of chunk ids) are the two selections retrieval
builds itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from guidedrag_graph.schema.presets import SchemaMapping, schema_for
from guidedrag_graph.templates import queries as templates


class CompiledSelectionLike(Protocol):
    """What retrieval needs of a compiled selection (the selection stage's ``CompiledSelection``).

    ``cypher`` binds ``c`` to each selected chunk exactly once; its parameters start with ``sel_``.
    """

    @property
    def cypher(self) -> str: ...

    @property
    def params(self) -> dict[str, Any]: ...

    @property
    def is_all(self) -> bool: ...


class CompiledTierLike(Protocol):
    """One tier of a compiled boost: the Cypher list variable of its chunks and its weight."""

    @property
    def list_variable(self) -> str: ...

    @property
    def weight(self) -> float: ...

    @property
    def name(self) -> str | None: ...

    @property
    def member_variable(self) -> str:
        """The variable holding the tier's entities when its chunks are not listed (else it is
        null): ``cypher/select_mentioned.cypher``."""
        ...


class CompiledTiersLike(Protocol):
    """A compiled boost (``CompiledSelection.is_boost``): ``prelude`` binds one chunk list per
    tier, ``tiers`` weight-descending (the selection stage's ``CompiledTier``)."""

    @property
    def prelude(self) -> str: ...

    @property
    def params(self) -> dict[str, Any]: ...

    @property
    def tiers(self) -> Sequence[CompiledTierLike]: ...


@dataclass(frozen=True)
class ChunkIdSelection:
    """A manual selection by chunk ids (the same shape as a compiled selection)."""

    ids: tuple[str, ...]
    schema: SchemaMapping = field(default_factory=lambda: schema_for("guidedrag"))

    @property
    def cypher(self) -> str:
        return templates.fragment("selection_given", "ids", self.schema)

    @property
    def params(self) -> dict[str, Any]:
        return {"sel_chunk_ids": list(self.ids)}

    @property
    def is_all(self) -> bool:
        return False


@dataclass(frozen=True)
class AllChunks:
    """U: every chunk (base RAG)."""

    schema: SchemaMapping = field(default_factory=lambda: schema_for("guidedrag"))

    @property
    def cypher(self) -> str:
        return templates.fragment("select_all", "alone", self.schema)

    @property
    def params(self) -> dict[str, Any]:
        return {}

    @property
    def is_all(self) -> bool:
        return True
