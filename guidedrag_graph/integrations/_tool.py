"""What an agent's tool call into GuidedRAG looks like, for every door that offers one.

``SearchInput`` is the typed, strict argument schema of the LangChain tool (``question``,
``entities``, ``relations``, ``filters``, ``k``); ``one_line`` turns a rejected call into the
one line an LLM (or a person) can act on — the MCP server words its refusals with it too — and
``as_context`` is what the tool hands the model back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, model_validator

from guidedrag_graph.config import Settings
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.integrations._calls import Retrieved, one_k
from guidedrag_graph.retrieve_args import check_k, check_question, k_problem

__all__ = ["SearchInput", "as_context", "core_checks", "one_line"]


class SearchInput(BaseModel):
    """The LangChain tool's arguments; any other name is refused (a typo is never ignored)."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(description="The user's question, as written.")
    entities: list[str] | None = Field(
        None,
        description="Entities the question is about, as named in the knowledge graph (optional: "
        "left out, they are linked from the question). A name the graph does not know makes the "
        "search abstain, on purpose.",
    )
    relations: list[str] | None = Field(
        None, description="Relation types the answer is reached over, e.g. ORBITS (optional)."
    )
    filters: dict[str, Any] | None = Field(
        None,
        description="Metadata filters on chunk properties in neo4j-graphrag's syntax, e.g. "
        '{"position": {"$lte": 2}} (optional).',
    )
    k: int | None = Field(
        None,
        ge=1,
        validation_alias=AliasChoices("k", "top_k"),
        description="How many chunks to return (default from the settings; top_k also works).",
    )

    @model_validator(mode="before")
    @classmethod
    def _one_k(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "k" in data and "top_k" in data:
            one_k(data["k"], data["top_k"])
            return {key: value for key, value in data.items() if key != "top_k"}
        return data

    @staticmethod
    def arguments(validated: Mapping[str, Any]) -> dict[str, Any]:
        """The tool's validated arguments as the retriever's ``invoke`` takes them."""
        given = {name: value for name, value in validated.items() if value is not None}
        return {"input": given.pop("question"), **given}


def one_line(
    exc: ValidationError,
    *,
    door: str,
    known: Sequence[str],
    core: Mapping[str, Callable[[Any], str | None]] | None = None,
) -> str:
    """``exc`` in one line: an unknown argument named with the known ones, a bad value named
    with what it must be, no pydantic URL. ``core`` maps argument names to the core's own check
    of that argument, so a value the core would refuse is refused in the core's words at every
    door (``k``, a blank question): each returns the core's refusal of a value, or None."""
    problems: list[str] = []
    for error in exc.errors():
        name = ".".join(str(part) for part in error["loc"]) or "arguments"
        if error["type"] == "extra_forbidden":
            problems.append(f"{door} got an unknown argument {name!r}; known: {', '.join(known)}")
            continue
        check = (core or {}).get(name)
        refused = None if check is None else check(error.get("input"))
        if refused is not None:
            problems.append(refused)
            continue
        if error["type"] == "missing":
            problems.append(f"{door} needs the argument {name!r}")
        else:
            problems.append(f"invalid {name}={error.get('input')!r}: {_short(error['msg'])}")
    return "; ".join(dict.fromkeys(problems))


def core_checks(settings: Settings) -> dict[str, Callable[[Any], str | None]]:
    """The core's refusals of ``question`` and ``k`` (``top_k``), for ``one_line``."""

    def question(value: Any) -> str | None:
        return _refusal(lambda: check_question(value, settings))

    def k(value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            return k_problem(value)
        return _refusal(lambda: check_k(value, settings))

    return {"question": question, "k": k, "top_k": k}


def _refusal(check: Callable[[], object]) -> str | None:
    try:
        check()
    except ConfigurationError as exc:
        return str(exc)
    return None


def _short(message: str) -> str:
    return message[:1].lower() + message[1:]


def as_context(docs: Retrieved[Any]) -> str:
    """The retrieved chunks as ``[chunk-id] (document: title)`` and text, best first (what an
    LLM can cite), or the abstention and its reason."""
    result = docs.result
    if result.abstained:
        return f"The knowledge base abstained: {docs.reason}"
    if not result.chunks:
        return "No passage was found for this question."
    return "\n\n".join(
        f"[{c.id}] (document: {c.document_title or c.document_id or 'unknown document'})\n{c.text}"
        for c in result.chunks
    )
