"""``GuidedRetriever``: GuidedRAG's selection-then-rank as a ``neo4j_graphrag`` retriever.

>>> from neo4j_graphrag.generation import GraphRAG
>>> from neo4j_graphrag.llm import OpenAILLM
>>> retriever = GuidedRetriever(driver, settings)
>>> rag = GraphRAG(retriever=retriever, llm=OpenAILLM(model_name="gpt-4o-mini", base_url=...))
>>> rag.search("Where was Ada Lovelace born?",
...            retriever_config={"semantics": {"entities": ["Ada Lovelace"]}})

The selection comes from ``selection`` (DSL text) or from ``semantics`` (the paper's GuidedRAG
mapping); ranking runs inside Neo4j as in ``GuidedRAG.retrieve``. An empty selection returns no
items and says why in ``metadata["abstained"]``/``metadata["empty"]``; unlike ``GuidedRAG.ask``,
GraphRAG will still call its LLM, so check the metadata if you need the abstention.

The rest of neo4j-graphrag's retriever contract (as ``VectorRetriever`` has it) works too:
``result_formatter``, ``query_vector`` (no embedding), ``filters`` in neo4j-graphrag's filter
syntax (an extra selection term) and ``effective_search_ratio`` (accepted, see
``get_search_results``). See docs/neo4j-graphrag.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import neo4j
from neo4j_graphrag.filters import extract_filter_field_names, get_metadata_filter
from neo4j_graphrag.retrievers.base import Retriever
from neo4j_graphrag.types import RawSearchResult, RetrieverResultItem

from guidedrag_graph import templates
from guidedrag_graph.config import Settings
from guidedrag_graph.db import read_query
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.integrations.embedder import GuidedEmbedder
from guidedrag_graph.pipeline import GuidedRAG, RetrievalResult, default_selection
from guidedrag_graph.selection import Expr, parse
from guidedrag_graph.selection.ast import Chunks
from guidedrag_graph.semantics import Semantics

__all__ = ["GuidedEmbedder", "GuidedRetriever"]

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
        self.last_result: RetrievalResult | None = None

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
    ) -> RawSearchResult:
        """Select, rank inside Neo4j, and return one record per chunk (best first).

        Args:
            query_text: the question (embedded with the configured embedder's query side).
            semantics: ``{"entities": [...], "relations": [...], ...}``; relations make the
                question relational unless ``"relational"`` says otherwise.
            selection: a selection in the DSL, instead of the one the semantics imply.
            top_k, steering, ranker: as in ``GuidedRAG.retrieve`` (defaults from the policy).
            query_vector: the question already embedded; ``query_text`` is then optional.
            effective_search_ratio: accepted for ``VectorRetriever`` compatibility and ignored:
                small selections are ranked exactly, and the index paths widen their candidate
                pool themselves until ``top_k`` members are found.
            filters: neo4j-graphrag metadata filters on chunk properties (``{"position":
                {"$lte": 2}}``); the matching chunks become an extra selection term
                (``... & chunks(ids)``). Steering defaults to hard when filters are given, so
                no chunk outside them is returned.
            entities, relations: shorthands for the same keys of ``semantics``.
        """
        _check_search_args(query_text, query_vector, effective_search_ratio)
        sem = self._semantics(semantics, entities, relations)
        expr: Expr | None = (
            parse(selection, self.rag.selector.limits)
            if selection is not None
            else default_selection(sem)
        )
        matched: int | None = None
        if filters:
            ids = self.filtered_chunk_ids(filters)
            matched = len(ids)
            if not ids:
                return _no_chunk_passes(filters)
            expr = Chunks(tuple(ids)) if expr is None else expr & Chunks(tuple(ids))
            steering = steering or "hard"
        result = self.rag.retrieve(
            query_text or "",
            expr,
            semantics=sem,
            k=top_k,
            steering=steering,
            ranker=ranker,
            query_vector=query_vector,
        )
        self.last_result = result
        return RawSearchResult(
            records=self._records(result), metadata=_metadata(result, filters_matched=matched)
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

    @staticmethod
    def _semantics(
        semantics: Semantics | dict[str, Any] | None,
        entities: Sequence[str] | None,
        relations: Sequence[str] | None,
    ) -> Semantics | None:
        """The semantics, with the shorthands merged in; relations imply a relational question
        unless the caller set ``relational`` themselves (else Table 2 would ignore them)."""
        if isinstance(semantics, dict):
            semantics = Semantics.model_validate(semantics)
        if entities or relations:
            base = semantics or Semantics()
            semantics = Semantics.model_validate(
                {
                    **base.model_dump(exclude_unset=True),
                    "entities": tuple(base.entities) + tuple(entities or ()),
                    "relations": tuple(base.relations) + tuple(relations or ()),
                }
            )
        if (
            semantics is not None
            and semantics.relations
            and "relational" not in semantics.model_fields_set
        ):
            semantics = semantics.model_copy(update={"relational": True})
        return semantics

    def filtered_chunk_ids(self, filters: dict[str, Any]) -> list[str]:
        """Ids of the chunks that pass neo4j-graphrag ``filters``, in one READ query.

        neo4j-graphrag's own compiler writes the condition (values as parameters, names
        escaped); every property it names must exist in the database, so a typo is an error
        that names it rather than a silently empty result.
        """
        settings = self.rag.settings
        fields = sorted(extract_filter_field_names(filters))
        keys_rows = read_query(
            self.driver,
            templates.query("property_keys", self.rag.schema),
            {},
            database=settings.neo4j_database,
        )
        known = set(keys_rows[0]["keys"]) if keys_rows else set()
        unknown = [f for f in fields if f not in known]
        if unknown:
            raise ConfigurationError(
                f"filters name {', '.join(repr(f) for f in unknown)}, which no node in the "
                f"database has; filter on chunk properties such as "
                f"{self.rag.schema.chunk_id!r} or {self.rag.schema.chunk_text!r}"
            )
        condition, params = get_metadata_filter(filters, node_alias="c")
        query = templates.query("filter_chunks", self.rag.schema, selection=condition)
        rows = read_query(self.driver, query, params, database=settings.neo4j_database)
        return [str(r["chunk_id"]) for r in rows]

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


def _metadata(result: RetrievalResult, *, filters_matched: int | None) -> dict[str, Any]:
    """What the retrieval did, as ``RawSearchResult.metadata`` (JSON-ready)."""
    data = result.to_dict()
    return {**{key: data[key] for key in _METADATA_KEYS}, "filters_matched": filters_matched}


def _no_chunk_passes(filters: dict[str, Any]) -> RawSearchResult:
    """The abstention when neo4j-graphrag ``filters`` match no chunk (nothing is ranked)."""
    return RawSearchResult(
        records=[],
        metadata={
            "selection": None,
            "selection_size": 0,
            "abstained": True,
            "empty": {
                "kind": "filters",
                "term": None,
                "message": f"no chunk matches the filters {filters!r}",
                "suggestions": [],
            },
            "filters_matched": 0,
        },
    )
