"""``GuidedRetriever``: GuidedRAG's selection-then-rank as a ``neo4j_graphrag`` retriever, and
``GuidedGraphRAG``: neo4j-graphrag's ``GraphRAG`` that does not call its LLM when the KB abstains.

>>> from neo4j_graphrag.llm import OpenAILLM
>>> retriever = GuidedRetriever(driver, settings)
>>> rag = GuidedGraphRAG(retriever=retriever, llm=OpenAILLM(model_name="gpt-4o-mini", base_url=...))
>>> result = rag.search("Where was Ada Lovelace born?",
...                     retriever_config={"semantics": {"entities": ["Ada Lovelace"]}})
>>> result.abstained, result.llm_called, result.answer
>>> aretriever = await GuidedRetriever.aopen(settings)          # on a neo4j.AsyncDriver
>>> found = await aretriever.asearch(query_text="Where was Ada Lovelace born?", top_k=3)

``search`` runs exactly what ``GuidedRAG.retrieve`` runs for the same inputs: ``auto`` (graded
tiers from the stated entities, or from the entities linked from the question when none are
stated) unless a ``selection`` or ``steering="hard"|"soft"`` is given. A stated entity the KB
does not know returns no items and says why in ``metadata["abstained"]``/``metadata["empty"]``.
``GuidedGraphRAG`` then answers with that reason and never calls its LLM (neo4j-graphrag's own
``GraphRAG`` would ask the LLM with an empty context), as ``GuidedRAG.ask`` does.

The rest of neo4j-graphrag's retriever contract (as ``VectorRetriever`` has it) works too:
``result_formatter``, ``query_vector`` (no embedding), ``filters`` in neo4j-graphrag's filter
syntax (they restrict the candidates, compiled into the ranking query) and
``effective_search_ratio`` (accepted, see ``get_search_results``). See docs/neo4j-graphrag.md.

``asearch``/``aget_search_results`` are the async forms (neo4j-graphrag has no async retriever
API): they await ``GuidedRAG.aretrieve`` on a pipeline opened with ``GuidedRAG.aopen``
(``GuidedRetriever.aopen``, or ``async_rag=`` beside a sync ``rag``); ``search`` needs one on a
``neo4j.Driver``. A form whose kind is missing is refused in one line naming the fix.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import neo4j
from neo4j_graphrag.retrievers.base import Retriever
from neo4j_graphrag.tool import (
    ArrayParameter,
    IntegerParameter,
    ObjectParameter,
    StringParameter,
)
from neo4j_graphrag.types import RawSearchResult, RetrieverResult, RetrieverResultItem
from pydantic import Field

from guidedrag_graph.config import Settings
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.integrations._calls import (
    CallOptions,
    aretrieve,
    one_k,
    pick,
    retrieve,
    scoped,
)
from guidedrag_graph.integrations.embedder import GuidedEmbedder
from guidedrag_graph.integrations.graphrag_answer import (
    ABSTENTION_ANSWER,
    GuidedGraphRAG,
    GuidedRagResult,
)
from guidedrag_graph.pipeline import GuidedRAG, RetrievalResult
from guidedrag_graph.semantics import Semantics
from guidedrag_graph.vocabulary import STEERINGS

__all__ = [
    "ABSTENTION_ANSWER",
    "GuidedEmbedder",
    "GuidedGraphRAG",
    "GuidedRagResult",
    "GuidedRetriever",
    "GuidedSearchResult",
]

ResultFormatter = Callable[[neo4j.Record], RetrieverResultItem]
_DOOR = "GuidedRetriever"


class GuidedRetriever(Retriever):
    """A ``neo4j_graphrag`` retriever whose search takes the question and its semantics.

    ``result_formatter`` turns each record into a ``RetrieverResultItem`` (as in
    ``VectorRetriever``); records carry ``id``, ``text``, ``document_id``, ``document_title``,
    ``score``, ``cosine``, ``in_selection`` and, for formatters written against
    ``VectorRetriever``, ``node`` (the chunk's id and text under the schema's property names) and
    ``nodeLabels``.
    """

    # we gate features on the server version ourselves (db/connection.py)
    VERIFY_NEO4J_VERSION = False

    def __init__(
        self,
        driver: neo4j.Driver | neo4j.AsyncDriver,
        settings: Settings | None = None,
        *,
        rag: GuidedRAG | None = None,
        async_rag: GuidedRAG | None = None,
        neo4j_database: str | None = None,
        result_formatter: ResultFormatter | None = None,
        scope: Any = None,
    ) -> None:
        """``scope`` (trusted, server-side): narrows the pipelines (``GuidedRAG.scoped``); no
        search argument can widen it (docs/security.md, Scopes)."""
        given = rag or async_rag
        settings = settings or (given.settings if given is not None else Settings())
        if rag is None and async_rag is None and isinstance(driver, neo4j.AsyncDriver):
            raise ConfigurationError(
                "GuidedRetriever on a neo4j.AsyncDriver: open it with "
                "await GuidedRetriever.aopen(settings, driver)"
            )
        super().__init__(driver, neo4j_database or settings.neo4j_database)  # type: ignore[arg-type]
        self.rag: GuidedRAG = scoped(rag or async_rag or GuidedRAG(settings, driver=driver), scope)  # type: ignore[assignment]
        self.async_rag = scoped(async_rag, scope)
        self.result_formatter = result_formatter

    def scoped(self, scope: Any) -> GuidedRetriever:
        """A copy of this retriever whose pipelines are narrowed to ``scope`` (trusted)."""
        view = copy.copy(self)
        view.rag = scoped(self.rag, scope)  # type: ignore[assignment]
        view.async_rag = scoped(self.async_rag, scope)
        return view

    @classmethod
    async def aopen(
        cls,
        settings: Settings | None = None,
        driver: neo4j.AsyncDriver | None = None,
        **kwargs: Any,
    ) -> GuidedRetriever:
        """A retriever on a ``GuidedRAG`` opened with ``GuidedRAG.aopen`` (on ``driver``, else
        its own ``neo4j.AsyncDriver``: close it with ``await retriever.rag.aclose()``), for
        ``asearch``/``aget_search_results``."""
        rag = await GuidedRAG.aopen(settings, driver)
        return cls(rag.graph.driver, rag=rag, **kwargs)

    def get_search_results(
        self,
        query_text: str | None = None,
        semantics: Semantics | dict[str, Any] | None = None,
        selection: str | None = None,
        top_k: int | None = None,
        steering: str | None = None,
        ranker: str | None = None,
        query_vector: list[float] | None = None,
        effective_search_ratio: int = 1,
        filters: dict[str, Any] | None = None,
        entities: list[str] | None = None,
        relations: list[str] | None = None,
        link: bool | None = None,
        k: int | None = None,
    ) -> GuidedSearchResult:
        """Rank inside Neo4j exactly as ``GuidedRAG.retrieve`` does for the same inputs, and
        return one record per chunk (best first).

        Args:
            query_text: the question (embedded with the configured embedder's query side).
            semantics: ``{"entities": [...], "relations": [...], ...}``; relations make the
                question relational unless ``"relational"`` says otherwise.
            selection: a selection in the DSL; it runs hard (as in ``GuidedRAG.retrieve``).
            top_k, steering, ranker: as in ``GuidedRAG.retrieve`` (steering default ``auto``:
                graded tiers over every chunk; ``hard``/``soft``: the paper's mapping);
                ``k`` is ``top_k``'s other spelling.
            query_vector: the question already embedded; ``query_text`` is then optional.
            effective_search_ratio: accepted for ``VectorRetriever`` compatibility and ignored:
                small selections are ranked exactly, and the index paths widen their candidate
                pool themselves until ``top_k`` members are found.
            filters: neo4j-graphrag metadata filters on chunk properties (``{"position":
                {"$lte": 2}}``): they restrict the candidates, compiled into the ranking query
                (any number of chunks may pass); no chunk outside them is returned.
            entities, relations: shorthands for the same keys of ``semantics`` (all kept).
            link: under ``auto``, link entities from the question when none are stated
                (default: on, settings ``link``).
        """
        _check_search_args(query_text, query_vector, effective_search_ratio)
        options = _options(**locals())
        rag = pick((self.rag, self.async_rag), asynchronous=False, door=_DOOR, call="search")
        return self._raw(retrieve(rag, query_text or "", options), filtered=bool(filters))

    async def aget_search_results(
        self,
        query_text: str | None = None,
        semantics: Semantics | dict[str, Any] | None = None,
        selection: str | None = None,
        top_k: int | None = None,
        steering: str | None = None,
        ranker: str | None = None,
        query_vector: list[float] | None = None,
        effective_search_ratio: int = 1,
        filters: dict[str, Any] | None = None,
        entities: list[str] | None = None,
        relations: list[str] | None = None,
        link: bool | None = None,
        k: int | None = None,
    ) -> GuidedSearchResult:
        """``get_search_results`` awaited (same arguments, same records): ``GuidedRAG.aretrieve``
        on the pipeline opened with ``aopen``, every read awaited on the caller's event loop."""
        _check_search_args(query_text, query_vector, effective_search_ratio)
        options = _options(**locals())
        rag = pick((self.async_rag, self.rag), asynchronous=True, door=_DOOR, call="asearch")
        return self._raw(await aretrieve(rag, query_text or "", options), filtered=bool(filters))

    async def asearch(self, *args: Any, **kwargs: Any) -> RetrieverResult:
        """``search`` awaited (neo4j-graphrag has no async retriever API; this one mirrors
        ``Retriever.search``): the records of ``aget_search_results``, formatted."""
        raw = await self.aget_search_results(*args, **kwargs)
        formatter = self.get_result_formatter()
        metadata = {**(raw.metadata or {}), "__retriever": self.__class__.__name__}
        return RetrieverResult(items=[formatter(r) for r in raw.records], metadata=metadata)

    def _raw(self, result: RetrievalResult, *, filtered: bool) -> GuidedSearchResult:
        return GuidedSearchResult(
            records=self._records(result),
            metadata=_metadata(result, filtered=filtered),
            retrieval=result,
        )

    def get_parameters(
        self, parameter_descriptions: dict[str, str] | None = None
    ) -> ObjectParameter:
        """The tool parameters (``convert_to_tool``), typed and described: an LLM calling the
        tool sees what each one means (neo4j-graphrag's inference reads ``int | None`` as a
        string called "Parameter top_k")."""
        described = {**TOOL_PARAMETER_DESCRIPTIONS, **(parameter_descriptions or {})}
        words = StringParameter(description="a name", required=False)
        properties: dict[str, Any] = {
            "query_text": StringParameter(description=described["query_text"], required=True),
            "entities": ArrayParameter(
                items=words, description=described["entities"], required=False
            ),
            "relations": ArrayParameter(
                items=words, description=described["relations"], required=False
            ),
            "top_k": IntegerParameter(
                description=described["top_k"], minimum=1, maximum=1000, required=False
            ),
            "steering": StringParameter(
                description=described["steering"], enum=list(STEERINGS), required=False
            ),
            "selection": StringParameter(description=described["selection"], required=False),
            "filters": ObjectParameter(
                description=described["filters"],
                properties={},
                additional_properties=True,
                required=False,
            ),
        }
        return ObjectParameter(
            description="Parameters for GuidedRetriever (GuidedRAG's default ranking)",
            properties=properties,
            required_properties=["query_text"],
            additional_properties=False,
        )

    def _records(self, result: RetrievalResult) -> list[neo4j.Record]:
        """One record per chunk, with ``node``/``nodeLabels`` for formatters written against
        ``VectorRetriever``."""
        schema = self.rag.schema
        return [
            neo4j.Record(  # type: ignore[no-untyped-call]
                {
                    "id": c.id,
                    "text": c.text,
                    "document_id": c.document_id,
                    "document_title": c.document_title,
                    "score": c.score,
                    "cosine": c.cosine,
                    "in_selection": c.in_selection,
                    "node": {schema.chunk_id: c.id, schema.chunk_text: c.text},
                    "nodeLabels": [schema.chunk_label],
                }
            )
            for c in result.chunks
        ]

    def default_record_formatter(self, record: neo4j.Record) -> RetrieverResultItem:
        """Context as ``[chunk-id] (document: title) text`` so the LLM can cite chunk ids."""
        source = record.get("document_title") or record.get("document_id") or "unknown document"
        return RetrieverResultItem(
            content=f"[{record['id']}] (document: {source})\n{record['text']}",
            metadata={
                "id": record["id"],
                "document_id": record.get("document_id"),
                "score": record.get("score"),
                "cosine": record.get("cosine"),
            },
        )


class GuidedSearchResult(RawSearchResult):
    """``get_search_results``' answer: the records and metadata neo4j-graphrag formats, and this
    call's whole ``RetrievalResult`` beside them (Cypher, timings, chunks; never serialised)."""

    retrieval: Any = Field(exclude=True, repr=False)


def _options(
    semantics: Semantics | dict[str, Any] | None,
    entities: list[str] | None,
    relations: list[str] | None,
    k: int | None,
    top_k: int | None,
    steering: str | None,
    selection: str | None,
    filters: dict[str, Any] | None,
    ranker: str | None,
    link: bool | None,
    query_vector: list[float] | None,
    **_: Any,
) -> CallOptions:
    """A search's arguments as the options every door passes (``k`` and ``top_k`` one)."""
    return CallOptions(
        semantics=semantics,
        entities=entities,
        relations=relations,
        k=one_k(k, top_k),
        steering=steering,
        selection=selection,
        filters=filters,
        ranker=ranker,
        link=link,
        query_vector=query_vector,
    )


def _check_search_args(
    query_text: str | None, query_vector: list[float] | None, effective_search_ratio: int
) -> None:
    if query_text is None and query_vector is None:
        raise ConfigurationError(
            "GuidedRetriever.search needs query_text or query_vector: pass the question"
        )
    if int(effective_search_ratio) < 1:
        raise ConfigurationError(
            f"effective_search_ratio must be 1 or more, got {effective_search_ratio}"
        )


_METADATA_KEYS = (
    "selection",
    "tier_sizes",
    "linked",
    "selection_size",
    "abstained",
    "empty",
    "ranker",
    "path",
    "steering",
    "cypher",
    "timings",
    "notes",
)


def _metadata(result: RetrievalResult, *, filtered: bool) -> dict[str, Any]:
    """What the retrieval did, as ``RawSearchResult.metadata`` (JSON-ready); with filters,
    ``filters_matched`` is how many chunks passed them (auto: tier U; hard: the selection)."""
    data = result.to_dict()
    matched: int | None = None
    if filtered:
        matched = result.tier_sizes.get("U", result.selection_size)
    return {**{key: data[key] for key in _METADATA_KEYS}, "filters_matched": matched}


TOOL_PARAMETER_DESCRIPTIONS: dict[str, str] = {
    "query_text": "The user's question, as written.",
    "entities": "Entities the question is about, as named in the knowledge graph (optional: "
    "left out, they are linked from the question). An entity the graph does not know makes "
    "the search return nothing, on purpose.",
    "relations": "Relation types the answer is reached over, e.g. ORBITS (optional).",
    "top_k": "How many chunks to return (1 to 1000; default from the settings).",
    "steering": "auto (default): every chunk ranked, boosted by graph evidence about the "
    "entities; hard: only chunks of the selection; soft: the selection boosted.",
    "selection": "An explicit selection in the GuidedRAG DSL, e.g. entity('Mars') (optional).",
    "filters": "Metadata filters on chunk properties in neo4j-graphrag's syntax, e.g. "
    '{"position": {"$lte": 2}} (optional).',
}
