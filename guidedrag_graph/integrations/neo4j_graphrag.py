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
"""

from __future__ import annotations

from typing import Any

import neo4j
from neo4j_graphrag.retrievers.base import Retriever
from neo4j_graphrag.types import RawSearchResult, RetrieverResultItem

from guidedrag_graph.config import Settings
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.semantics import Semantics


class GuidedRetriever(Retriever):
    """A ``neo4j_graphrag`` retriever whose search takes the question and its semantics."""

    VERIFY_NEO4J_VERSION = False  # we gate features on the server version ourselves (db.py)

    def __init__(
        self,
        driver: neo4j.Driver,
        settings: Settings | None = None,
        *,
        rag: GuidedRAG | None = None,
        neo4j_database: str | None = None,
    ) -> None:
        settings = settings or (rag.settings if rag is not None else Settings())
        super().__init__(driver, neo4j_database or settings.neo4j_database)
        self.rag = rag or GuidedRAG(settings, driver=driver)
        self.last_result: Any = None

    def get_search_results(
        self,
        query_text: str,
        semantics: Semantics | dict[str, Any] | None = None,
        selection: str | None = None,
        top_k: int | None = None,
        steering: str | None = None,
        ranker: str | None = None,
    ) -> RawSearchResult:
        """Select, rank inside Neo4j, and return one record per chunk (best first)."""
        if isinstance(semantics, dict):
            semantics = Semantics.model_validate(semantics)
        result = self.rag.retrieve(
            query_text,
            selection,
            semantics=semantics,
            k=top_k,
            steering=steering,
            ranker=ranker,
        )
        self.last_result = result
        records = [
            neo4j.Record(  # type: ignore[no-untyped-call]
                {
                    "id": c.id,
                    "text": c.text,
                    "document_id": c.document_id,
                    "document_title": c.document_title,
                    "score": c.score,
                    "cosine": c.cosine,
                    "in_selection": c.in_selection,
                }
            )
            for c in result.chunks
        ]
        data = result.to_dict()
        metadata = {
            "selection": data["selection"],
            "selection_size": data["selection_size"],
            "abstained": data["abstained"],
            "empty": data["empty"],
            "ranker": data["ranker"],
            "path": data["path"],
            "steering": data["steering"],
            "cypher": data["cypher"],
            "timings": data["timings"],
        }
        return RawSearchResult(records=records, metadata=metadata)

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
