"""What every adapter does per call: its options checked and merged, then ``GuidedRAG.retrieve``.

The LangChain, LlamaIndex, neo4j-graphrag and MCP adapters take the same per-call options
(semantics, entities, relations, ``k``/``top_k``, steering, a DSL selection, filters) and must run
exactly what ``GuidedRAG.retrieve`` runs — same ids, same abstentions — so they share this one
path instead of each repeating the argument handling. ``retrieve_call`` assembles the arguments
once; ``retrieve`` and ``aretrieve`` only run them, so the sync and async forms of every door
cannot drift apart. The sync forms run on a ``GuidedRAG`` opened on a ``neo4j.Driver``, the
async forms on one opened with ``GuidedRAG.aopen`` on a ``neo4j.AsyncDriver`` (``pick``); an
adapter may hold one of each.

Each call's result travels with its own output (``Retrieved``), never on the adapter: calls that
run at once (LangChain ``batch``, ``asyncio.gather``) each keep their own abstention and tiers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict, TypeVar

from neo4j import AsyncDriver

from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.pipeline import Answer, GuidedRAG, RetrievalResult
from guidedrag_graph.retrieval import RankedChunk
from guidedrag_graph.semantics import Semantics, merge_stated

SemanticsLike = Semantics | Mapping[str, Any] | None
T = TypeVar("T")


@dataclass(frozen=True)
class CallOptions:
    """The per-call options an adapter passes on; unset ones fall back to the adapter's own."""

    semantics: SemanticsLike = None
    entities: Sequence[str] | None = None
    relations: Sequence[str] | None = None
    k: int | None = None
    steering: str | None = None
    selection: str | None = None
    filters: Mapping[str, Any] | None = None
    ranker: str | None = None
    link: bool | None = None
    query_vector: Sequence[float] | None = None

    @classmethod
    def of(cls, options: Mapping[str, object], *, door: str) -> CallOptions:
        """Options given by name (``top_k`` is ``k``'s other spelling); an unknown name is a
        one-line error naming it and the known ones, never silently ignored."""
        known = OPTION_NAMES
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise ConfigurationError(
                f"{door} got an unknown argument {unknown[0]!r}; known: {', '.join(known)}"
            )
        given: dict[str, Any] = {name: v for name, v in options.items() if name != "top_k"}
        given["k"] = one_k(options.get("k"), options.get("top_k"))
        return cls(**given)

    def over(self, defaults: CallOptions) -> CallOptions:
        """These options, each unset one taken from ``defaults``."""
        merged: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            merged[f.name] = getattr(defaults, f.name) if value is None else value
        return CallOptions(**merged)


class CallKeywords(TypedDict, total=False):
    """The per-call options as keywords (``retrieve(question, entities=[...], k=3)``)."""

    semantics: SemanticsLike
    entities: Sequence[str] | None
    relations: Sequence[str] | None
    k: int | None
    top_k: int | None
    steering: str | None
    selection: str | None
    filters: Mapping[str, Any] | None
    ranker: str | None
    link: bool | None
    query_vector: Sequence[float] | None


OPTION_NAMES: tuple[str, ...] = (*(f.name for f in dataclasses.fields(CallOptions)), "top_k")


def one_k(k: object, top_k: object) -> Any:
    """``k`` and ``top_k`` are one argument: either spelling, both only when they agree."""
    if k is not None and top_k is not None and k != top_k:
        raise ConfigurationError(
            f"got k={k!r} and top_k={top_k!r}: they are the same argument, give one"
        )
    return k if k is not None else top_k


@dataclass(frozen=True)
class RetrieveCall:
    """``GuidedRAG.retrieve``'s arguments for one call, as the sync and async forms pass them."""

    question: str
    selection: str | None
    kwargs: dict[str, Any]


def retrieve_call(question: str, options: CallOptions) -> RetrieveCall:
    """The one place an adapter's options become ``retrieve``'s arguments (nothing added)."""
    return RetrieveCall(
        question,
        options.selection,
        {
            "semantics": merge_stated(options.semantics, options.entities, options.relations),
            "k": options.k,
            "steering": options.steering,
            "ranker": options.ranker,
            "filters": options.filters,
            "link": options.link,
            "query_vector": options.query_vector,
        },
    )


def is_async(rag: GuidedRAG) -> bool:
    """Whether ``rag`` was opened on a ``neo4j.AsyncDriver`` (``GuidedRAG.aopen``): its
    ``aretrieve``/``aask`` run, its ``retrieve``/``ask`` refuse."""
    return isinstance(rag.graph.driver, AsyncDriver)


def pick(
    rags: Iterable[GuidedRAG | None], *, asynchronous: bool, door: str, call: str
) -> GuidedRAG:
    """The one of an adapter's pipelines that ``call`` runs on: a sync call on a ``GuidedRAG``
    opened on a ``neo4j.Driver``, an async one on a ``GuidedRAG`` opened with ``aopen`` (a
    ``neo4j.AsyncDriver``). Neither kind stands in for the other (no sync call is hidden on a
    worker thread, no async one blocks the loop): a missing kind is one line naming the fix."""
    for rag in rags:
        if rag is not None and is_async(rag) == asynchronous:
            return rag
    if asynchronous:
        raise ConfigurationError(
            f"{door}.{call} needs a GuidedRAG opened on a neo4j.AsyncDriver: pass "
            f"async_rag=await GuidedRAG.aopen(settings)"
        )
    raise ConfigurationError(
        f"{door}.{call} needs a GuidedRAG opened on a neo4j.Driver: await the async form, or "
        f"pass rag=GuidedRAG(settings) and async_rag= the one opened with GuidedRAG.aopen"
    )


def retrieve(rag: GuidedRAG, question: str, options: CallOptions) -> RetrievalResult:
    """``GuidedRAG.retrieve`` with the options as it takes them."""
    call = retrieve_call(question, options)
    return rag.retrieve(call.question, call.selection, **call.kwargs)


async def aretrieve(rag: GuidedRAG, question: str, options: CallOptions) -> RetrievalResult:
    """The same call, awaited: every async door (LangChain ``ainvoke``, LlamaIndex
    ``aretrieve``, ``GuidedRetriever.asearch``, MCP ``retrieve``) comes through here, with the
    arguments ``retrieve_call`` assembled, on a ``GuidedRAG`` opened with ``aopen``: its reads
    are awaited on the caller's event loop, nothing runs on a worker thread but the question's
    embedding (CPU work)."""
    call = retrieve_call(question, options)
    return await rag.aretrieve(call.question, call.selection, **call.kwargs)


def ask(rag: GuidedRAG, question: str, options: CallOptions) -> Answer:
    """``GuidedRAG.ask`` with the same arguments ``retrieve`` gets (it abstains without an LLM
    call when retrieval does)."""
    call = retrieve_call(question, options)
    return rag.ask(call.question, call.selection, **call.kwargs)


async def aask(rag: GuidedRAG, question: str, options: CallOptions) -> Answer:
    """``ask``, awaited: ``GuidedRAG.aask`` (reads on the loop, the LLM through
    ``openai.AsyncOpenAI``)."""
    call = retrieve_call(question, options)
    return await rag.aask(call.question, call.selection, **call.kwargs)


class Retrieved(list[T]):
    """One call's documents or nodes, with that call's ``RetrievalResult`` beside them.

    A plain list to every caller (``== []`` when the KB abstained), and the place the abstention
    and its reason live when there is no document to carry them: each output of a ``batch`` or a
    ``gather`` holds its own question's result, nothing is kept on the adapter.
    """

    def __init__(self, items: Iterable[T], result: RetrievalResult) -> None:
        super().__init__(items)
        self.result = result

    @property
    def abstained(self) -> bool:
        return self.result.abstained

    @property
    def reason(self) -> str | None:
        """Why the KB abstained (None when it did not)."""
        return abstention_reason(self.result)

    @property
    def tier_sizes(self) -> dict[str, int]:
        return self.result.tier_sizes

    @property
    def linked(self) -> list[str]:
        return linked_names(self.result)

    @property
    def steering(self) -> str:
        return self.result.steering


def abstention_reason(result: RetrievalResult) -> str | None:
    return None if result.empty is None else result.empty.message


def linked_names(result: RetrievalResult) -> list[str]:
    """The entities ``auto`` linked from the question (none when they were stated)."""
    return [n["entity"] for n in result.linked]


def chunk_metadata(chunk: RankedChunk, result: RetrievalResult, rank: int) -> dict[str, Any]:
    """One chunk's provenance and its call's outcome (abstention, linked names, tier sizes,
    steering) as flat JSON-ready metadata: what LangChain and LlamaIndex show per item."""
    return {
        "chunk_id": chunk.id,
        "rank": rank,
        "document_id": chunk.document_id,
        "document_title": chunk.document_title,
        "score": chunk.score,
        "cosine": chunk.cosine,
        "boost": chunk.boost,
        "tier": chunk.tier,
        "tiers": list(chunk.tiers),
        "in_selection": chunk.in_selection,
        "selection": result.selection_text,
        "selection_size": result.selection_size,
        "steering": result.steering,
        "path": result.path,
        "abstained": result.abstained,
        "reason": abstention_reason(result),
        "linked": linked_names(result),
        "tier_sizes": dict(result.tier_sizes),
    }


def scoped(rag: GuidedRAG | None, scope: Any) -> GuidedRAG | None:
    """An adapter's ``scope=`` (trusted, server-side): ``rag`` narrowed to it (a view sharing
    the driver and the warm state; never wider than ``rag``'s own scope); ``None``: ``rag``."""
    return rag if rag is None or scope is None else rag.scoped(scope)
