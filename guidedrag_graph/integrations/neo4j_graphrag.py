"""``GuidedRetriever``: GuidedRAG's selection-then-rank as a ``neo4j_graphrag`` retriever, and
``GuidedGraphRAG``: neo4j-graphrag's ``GraphRAG`` that does not call its LLM when the KB abstains.

>>> from neo4j_graphrag.llm import OpenAILLM
>>> retriever = GuidedRetriever(driver, settings)
>>> rag = GuidedGraphRAG(retriever=retriever, llm=OpenAILLM(model_name="gpt-4o-mini", base_url=...))
>>> result = rag.search("Where was Ada Lovelace born?",
...                     retriever_config={"semantics": {"entities": ["Ada Lovelace"]}})
>>> result.abstained, result.llm_called, result.answer

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
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import neo4j
from neo4j_graphrag.generation import GraphRAG
from neo4j_graphrag.generation.types import RagResultModel
from neo4j_graphrag.message_history import MessageHistory
from neo4j_graphrag.retrievers.base import Retriever
from neo4j_graphrag.tool import (
    ArrayParameter,
    IntegerParameter,
    ObjectParameter,
    StringParameter,
)
from neo4j_graphrag.types import LLMMessage, RawSearchResult, RetrieverResultItem
from pydantic import Field

from guidedrag_graph.config import Settings
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.integrations._calls import CallOptions, one_k, retrieve
from guidedrag_graph.integrations.embedder import GuidedEmbedder
from guidedrag_graph.pipeline import GuidedRAG, RetrievalResult
from guidedrag_graph.semantics import Semantics
from guidedrag_graph.vocabulary import STEERINGS

__all__ = [
    "GuidedEmbedder",
    "GuidedGraphRAG",
    "GuidedRagResult",
    "GuidedRetriever",
    "GuidedSearchResult",
]

ResultFormatter = Callable[[neo4j.Record], RetrieverResultItem]


class GuidedRetriever(Retriever):
    """A ``neo4j_graphrag`` retriever whose search takes the question and its semantics.

    ``result_formatter`` turns each record into a ``RetrieverResultItem`` (as in
    ``VectorRetriever``); records carry ``id``, ``text``, ``document_id``, ``document_title``,
    ``score``, ``cosine``, ``in_selection`` and, for formatters written against
    ``VectorRetriever``, ``node`` (the chunk's id and text under the schema's property names) and
    ``nodeLabels``.
    """

    VERIFY_NEO4J_VERSION = False  # we gate features on the server version ourselves (db.py)

    def __init__(
        self,
        driver: neo4j.Driver,
        settings: Settings | None = None,
        *,
        rag: GuidedRAG | None = None,
        neo4j_database: str | None = None,
        result_formatter: ResultFormatter | None = None,
    ) -> None:
        settings = settings or (rag.settings if rag is not None else Settings())
        super().__init__(driver, neo4j_database or settings.neo4j_database)
        self.rag = rag or GuidedRAG(settings, driver=driver)
        self.result_formatter = result_formatter

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
        options = CallOptions(
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
        result = retrieve(self.rag, query_text or "", options)
        return GuidedSearchResult(
            records=self._records(result),
            metadata=_metadata(result, filtered=bool(filters)),
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


ABSTENTION_ANSWER = "The knowledge base cannot answer this: {reason}"


class GuidedRagResult(RagResultModel):
    """``GraphRAG.search``'s result with what the retrieval decided: ``abstained`` and its
    ``reason``, and whether the LLM was called for the answer."""

    abstained: bool = False
    reason: str | None = None
    llm_called: bool = False


class GuidedGraphRAG(GraphRAG):
    """neo4j-graphrag's ``GraphRAG`` that answers an abstention without calling the LLM.

    When the retriever returns no item (with ``GuidedRetriever``: the KB does not know a stated
    name, no chunk passes the filters, or nothing passed the threshold) the answer is
    ``response_fallback`` if given, else ``abstention_answer`` with the retriever's reason, and
    no prompt is sent. Otherwise it is ``GraphRAG.search`` unchanged. (With a
    ``message_history``, neo4j-graphrag still asks the LLM to summarise the history before
    retrieving; that call is the query's, not the answer's.)
    """

    def __init__(
        self,
        retriever: Retriever,
        llm: Any,
        *args: Any,
        abstention_answer: str = ABSTENTION_ANSWER,
        **kwargs: Any,
    ) -> None:
        super().__init__(retriever, llm, *args, **kwargs)
        self.abstention_answer = abstention_answer

    def search(
        self,
        query_text: str = "",
        message_history: list[LLMMessage] | MessageHistory | None = None,
        examples: str = "",
        retriever_config: dict[str, Any] | None = None,
        return_context: bool | None = None,
        response_fallback: str | None = None,
    ) -> GuidedRagResult:
        """``GraphRAG.search``; ``return_context`` defaults to False (no warning)."""
        # GraphRAG skips its LLM when the retriever returns no item and a fallback is given.
        done = super().search(
            query_text,
            message_history,
            examples,
            retriever_config,
            return_context=True,
            response_fallback=_NO_ITEMS,
        )
        retrieved = done.retriever_result
        assert retrieved is not None  # return_context=True
        context = retrieved if return_context else None
        if retrieved.items:
            return GuidedRagResult(answer=done.answer, retriever_result=context, llm_called=True)
        metadata = retrieved.metadata or {}
        empty = metadata.get("empty") or {}
        reason = empty.get("message") or "no passage was retrieved for the question"
        answer = response_fallback or self.abstention_answer.format(reason=reason)
        return GuidedRagResult(
            answer=answer, retriever_result=context, abstained=True, reason=reason
        )


_NO_ITEMS = "\x00guidedrag: the retriever returned no item\x00"
