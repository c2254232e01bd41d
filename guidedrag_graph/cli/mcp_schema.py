"""The MCP tools' typed inputs and outputs (guidedrag_graph/cli/mcp_server.py serves them).

Inputs are annotated parameters, each described; the server refuses any argument they do not
name. Outputs are pydantic models, so each tool's output schema lists its fields and a client
can validate what comes back. ``from_retrieval``/``from_answer`` are the only places results
become these models: every tool says abstention, linked names, tiers and steering the same way.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AliasChoices, BaseModel, Field

from guidedrag_graph.pipeline import Answer, RetrievalResult
from guidedrag_graph.selection import EmptySelection

# ----------------------------------------------------------------------------------- inputs
# Bounds the core enforces itself (a blank question, k up to GUIDEDRAG_MAX_TOP_K) are checked
# there, so the refusal reads the same as at every other door.
Question = Annotated[str, Field(min_length=1, description="the question, in natural language")]
Entities = Annotated[
    list[str] | None,
    Field(
        default=None,
        max_length=50,
        description="entity names the question is about, as the KB names them (see "
        "suggest_entities); steering boosts their chunks, their relation hops and their "
        "neighbourhood. Omit to let the server link them from the question",
    ),
]
Relations = Annotated[
    list[str] | None,
    Field(
        default=None,
        max_length=50,
        description="relation types the question asks about (e.g. IS_CURRENCY_OF); they make "
        "the question relational",
    ),
]
TopK = Annotated[
    int | None,
    Field(
        default=None,
        ge=1,
        validation_alias=AliasChoices("k", "top_k"),
        description="how many chunks to return (default from the settings; top_k also works)",
    ),
]
Steering = Annotated[
    Literal["auto", "hard", "soft"] | None,
    Field(
        default=None,
        description="auto (default): rank every chunk with graded boosts from the graph; hard: "
        "only chunks inside the selection (the paper); soft: the selection boosted over all",
    ),
]
SelectionText = Annotated[
    str | None,
    Field(
        default=None,
        max_length=10_000,
        description="a selection in the DSL, e.g. \"entity('Euro') & hop('Euro', "
        "['IS_CURRENCY_OF'])\"; instead of the one the entities imply (runs hard under auto)",
    ),
]
Filters = Annotated[
    dict[str, Any] | None,
    Field(
        default=None,
        description="metadata filters on chunk properties in neo4j-graphrag's syntax, e.g. {\""
        'document_id": {"$in": ["d1", "d2"]}}; they restrict the candidates',
    ),
]
Expression = Annotated[
    str,
    Field(
        min_length=1,
        max_length=10_000,
        description="a selection in the DSL: entity('X'), hop('X', ['REL']), khop('X', 2), "
        "near(...), document('T'), combined with | & - ^",
    ),
]


# ---------------------------------------------------------------------------------- outputs
class Chunk(BaseModel):
    """One ranked chunk."""

    chunk_id: str
    document_id: str | None
    document_title: str | None
    text: str
    score: float = Field(description="(1 + cosine) / 2")
    cosine: float
    boost: float = Field(description="the weight of the best tier holding it (auto)")
    tier: str | None = Field(description="the best tier holding it (None: only U)")
    tiers: list[str] = Field(description="every tier holding it")


class Empty(BaseModel):
    """Why a selection (or a term of it) holds no chunk."""

    kind: str
    term: str
    message: str
    suggestions: list[str]


class Linked(BaseModel):
    """An entity linked from the question (auto, when none was stated)."""

    span: str
    entity: str
    match: str


class Retrieval(BaseModel):
    """What a retrieval found and decided."""

    question: str
    chunks: list[Chunk] = Field(description="best first")
    selection: str | None = Field(description="the selection ranked (auto: its tiers)")
    selection_size: int | None
    steering: str
    abstained: bool = Field(description="true: the KB does not know a name; do not guess")
    reason: str | None = Field(description="why it abstained")
    empty: Empty | None
    linked: list[Linked]
    tier_sizes: dict[str, int] = Field(description="chunks in each of auto's tiers")
    notes: list[str]


class SizeNode(BaseModel):
    """A term of a selection and its size."""

    text: str
    size: int | None
    truncated: bool
    children: list[SizeNode]


class Selected(BaseModel):
    """A selection's sizes, term by term, and the chunk ids it selects."""

    selection: str
    size: int
    tree: SizeNode
    chunk_ids: list[str]
    truncated: bool
    empty: Empty | None
    warnings: list[Empty]


class Citation(BaseModel):
    chunk_id: str
    document_id: str | None
    document_title: str | None


class Answered(Retrieval):
    """An answer and the retrieval it stands on."""

    text: str | None = Field(description="the answer (None: abstained, or no LLM configured)")
    llm_called: bool
    citations: list[Citation]
    prompt: str | None = Field(description="the augmented prompt, when no LLM answered")


def _empty(empty: EmptySelection | None) -> Empty | None:
    return None if empty is None else Empty.model_validate(empty.to_json())


def _retrieval_fields(result: RetrievalResult) -> dict[str, Any]:
    return {
        "question": result.question,
        "chunks": [
            Chunk(
                chunk_id=c.id,
                document_id=c.document_id,
                document_title=c.document_title,
                text=c.text,
                score=c.score,
                cosine=c.cosine,
                boost=c.boost,
                tier=c.tier,
                tiers=list(c.tiers),
            )
            for c in result.chunks
        ],
        "selection": result.selection_text,
        "selection_size": result.selection_size,
        "steering": result.steering,
        "abstained": result.abstained,
        "reason": None if result.empty is None else result.empty.message,
        "empty": _empty(result.empty),
        "linked": [Linked.model_validate(n) for n in result.linked],
        "tier_sizes": dict(result.tier_sizes),
        "notes": list(result.notes),
    }


def from_retrieval(result: RetrievalResult) -> Retrieval:
    return Retrieval(**_retrieval_fields(result))


def from_answer(answer: Answer) -> Answered:
    fields = _retrieval_fields(answer.retrieval)
    fields.update(abstained=answer.abstained, reason=answer.reason if answer.abstained else None)
    return Answered(
        **fields,
        text=answer.text,
        llm_called=answer.llm_called,
        citations=[Citation(**c.__dict__) for c in answer.citations],
        prompt=None if answer.prompt is None or answer.llm_called else answer.prompt.text,
    )


def from_selection(
    text: str,
    ids: list[str],
    tree: dict[str, Any],
    *,
    max_ids: int,
    truncated: bool,
    empty: EmptySelection | None,
    warnings: tuple[EmptySelection, ...],
) -> Selected:
    return Selected(
        selection=text,
        size=len(ids),
        tree=SizeNode.model_validate(tree),
        chunk_ids=ids[:max_ids],
        truncated=truncated or len(ids) > max_ids,
        empty=_empty(empty),
        warnings=[Empty.model_validate(w.to_json()) for w in warnings],
    )
