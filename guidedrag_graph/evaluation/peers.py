"""The eval rows that measure the doors and the peers: the same questions through
every way a user comes in, and through what a Neo4j user would pick instead.

- ``guidedrag-question``: the question alone, as a GraphRAG app sends it (no stated semantics):
  ``auto`` links the entities it names and ranks with their tiers;
- ``guidedretriever``: ``GuidedRetriever.get_search_results`` (what its ``search`` runs) with the
  question's semantics (it must return what ``guidedrag`` returns);
- ``nggr-vector`` / ``nggr-hybrid``: neo4j-graphrag's own ``VectorRetriever`` and
  ``HybridRetriever``, by their own code, on the same server, index and question vectors (the
  hybrid one gets the question Lucene-escaped: it sends it raw, and ``/`` or ``?`` make Lucene
  throw; it needs a full-text index on chunk text, created once if absent);
- ``ppr-reference``: a HippoRAG-2-style personalized PageRank in numpy over the KB's
  entity–chunk graph (mention edges and relation edges, undirected), reset = the stated
  entities plus the min-max-normalised dense chunk scores × 0.05, damping 0.5 — a reference row,
  not a product path.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

import neo4j
import numpy as np
from neo4j_graphrag.retrievers import HybridRetriever, VectorRetriever
from neo4j_graphrag.types import RetrieverResultItem

from guidedrag_graph.db.connection import read_query
from guidedrag_graph.evaluation.metrics import all_gold_recall_at_k, hit_position
from guidedrag_graph.evaluation.records import Row
from guidedrag_graph.evaluation.rows import Formulation, retrieval_row
from guidedrag_graph.integrations.neo4j_graphrag import GuidedRetriever
from guidedrag_graph.migration.steps import await_indexes
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.steering.mapping import Approach, configuration_of
from guidedrag_graph.templates import queries as templates

# HippoRAG 2's constants (its reference settings), not fitted here.
PPR_DAMPING = 0.5
PPR_PASSAGE_WEIGHT = 0.05
PPR_ITERATIONS = 100
PPR_TOLERANCE = 1e-10
CHUNK_FULLTEXT_INDEX = "guidedrag_chunk_text"
_LUCENE = re.compile(r'([+\-&|!(){}\[\]^"~*?:\\/])')


def lucene_escape(text: str) -> str:
    """``text`` as literal Lucene terms: every special character backslash-escaped, and the
    boolean words lower-cased (so "AND" is a word, not an operator)."""
    escaped = _LUCENE.sub(r"\\\1", text)
    return re.sub(r"\b(AND|OR|NOT)\b", lambda m: m.group(1).lower(), escaped)


@dataclass
class ChunkGraph:
    """Every chunk's unit vector and the entity–chunk graph, read once per question set."""

    ids: list[str]
    vectors: np.ndarray  # (chunks, dim), unit rows
    index: dict[str, int]  # chunk id -> row
    entity_node: dict[str, int]  # entity id -> node (after the chunks)
    degree: np.ndarray
    src: np.ndarray
    dst: np.ndarray

    @classmethod
    def read(cls, rag: GuidedRAG) -> ChunkGraph:
        schema, db = rag.schema, rag.settings.neo4j_database
        rows = read_query(rag.driver, templates.query("eval_chunk_graph", schema), database=db)
        ids = [str(r["id"]) for r in rows]
        vectors = np.asarray([r["embedding"] for r in rows], dtype=np.float64)
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        entity_node: dict[str, int] = {}
        edges: list[tuple[int, int]] = []
        for i, row in enumerate(rows):
            for eid in row["entities"]:
                node = entity_node.setdefault(str(eid), len(ids) + len(entity_node))
                edges.append((i, node))
        for row in read_query(
            rag.driver, templates.query("eval_entity_edges", schema), database=db
        ):
            head = entity_node.setdefault(str(row["head"]), len(ids) + len(entity_node))
            tail = entity_node.setdefault(str(row["tail"]), len(ids) + len(entity_node))
            if head != tail:
                edges.append((head, tail))
        pairs = np.asarray(sorted(set(edges)), dtype=np.int64).reshape(-1, 2)
        src = np.concatenate([pairs[:, 0], pairs[:, 1]])
        dst = np.concatenate([pairs[:, 1], pairs[:, 0]])
        nodes = len(ids) + len(entity_node)
        degree = np.bincount(src, minlength=nodes).astype(np.float64)
        return cls(ids, vectors, {c: i for i, c in enumerate(ids)}, entity_node, degree, src, dst)

    def cosines(self, vector: np.ndarray) -> np.ndarray:
        unit = vector / max(float(np.linalg.norm(vector)), 1e-12)
        return np.asarray(self.vectors @ unit)

    def ppr(self, reset: np.ndarray) -> np.ndarray:
        """Personalized PageRank: p = (1 - d)·reset + d·(Pᵀp), P row-normalised; a node with no
        edge gives its mass back to the reset distribution."""
        reset = reset / reset.sum()
        p = reset.copy()
        safe = np.where(self.degree > 0, self.degree, 1.0)
        for _ in range(PPR_ITERATIONS):
            share = p / safe
            spread = np.bincount(self.dst, weights=share[self.src], minlength=len(p))
            dangling = float(p[self.degree == 0].sum())
            nxt = (1 - PPR_DAMPING) * reset + PPR_DAMPING * (spread + dangling * reset)
            if float(np.abs(nxt - p).sum()) < PPR_TOLERANCE:
                return nxt
            p = nxt
        return p


class Peers:
    """The doors and peers for one question set (graph, retrievers built once)."""

    def __init__(self, rag: GuidedRAG) -> None:
        self.rag = rag
        self._graph: ChunkGraph | None = None
        self._vector: VectorRetriever | None = None
        self._hybrid: HybridRetriever | None = None
        self.retriever = GuidedRetriever(rag.driver, rag.settings, rag=rag)

    @property
    def graph(self) -> ChunkGraph:
        if self._graph is None:
            self._graph = ChunkGraph.read(self.rag)
        return self._graph

    def row(self, asked: Formulation, approach: Approach, k: int, total_chunks: int) -> Row:
        runner = approach.runner
        if runner == "question":
            return self._question(asked, approach, k, total_chunks)
        if runner == "retriever":
            return self._retriever(asked, approach, k, total_chunks)
        vector = np.asarray(self.rag.embedder.embed_queries([asked.text])[0], dtype=np.float64)
        start = time.perf_counter()
        if runner == "nggr-vector":
            ids = self._nggr(self._vector_retriever(), asked.text, vector, k, hybrid=False)
        elif runner == "nggr-hybrid":
            ids = self._nggr(self._hybrid_retriever(), asked.text, vector, k, hybrid=True)
        elif runner == "ppr":
            ids = self.ppr_ranking(asked, vector, k)
        else:
            raise ValueError(f"unknown eval runner {runner!r}")
        latency = time.perf_counter() - start
        return self._peer_row(asked, approach, ids, vector, k, latency, total_chunks)

    # --- the doors: what GuidedRAG runs ------------------------------------------------------
    def _question(self, asked: Formulation, approach: Approach, k: int, total: int) -> Row:
        start = time.perf_counter()
        result = self.rag.retrieve(asked.text, k=k)
        latency = time.perf_counter() - start
        linked = [n["entity"] for n in result.linked if "entity" in n]
        return retrieval_row(
            result,
            latency,
            asked,
            k,
            approach=approach.name,
            configuration=str(configuration_of(result.semantics or asked.question.semantics)),
            cell="auto " + (">".join(result.tier_sizes) if result.tier_sizes else "U"),
            selection=result.selection_text or "all()",
            steering=result.steering,
            entities=linked,
            selection_size=0 if result.empty is not None else total,
            note="; ".join(result.notes) or None,
            gold_in_selection=bool(asked.question.gold_chunk_ids) if asked.answerable else None,
        )

    def _retriever(self, asked: Formulation, approach: Approach, k: int, total: int) -> Row:
        question = asked.question
        start = time.perf_counter()
        found = self.retriever.get_search_results(
            query_text=asked.text, semantics=question.semantics, top_k=k
        )
        latency = time.perf_counter() - start
        result = found.retrieval
        return retrieval_row(
            result,
            latency,
            asked,
            k,
            approach=approach.name,
            configuration=str(configuration_of(question.semantics)),
            cell="auto " + (">".join(result.tier_sizes) if result.tier_sizes else "U"),
            selection=result.selection_text or "all()",
            steering=str((found.metadata or {}).get("steering")),
            entities=list(question.semantics.entities),
            selection_size=0 if result.empty is not None else total,
            note="; ".join(result.notes) or None,
            gold_in_selection=bool(question.gold_chunk_ids) if asked.answerable else None,
        )

    # --- the peers, by their own code ---------------------------------------------------------
    def _vector_retriever(self) -> VectorRetriever:
        if self._vector is None:
            self._vector = VectorRetriever(
                self.rag.driver,
                self.rag.settings.vector_index_name,
                return_properties=[self.rag.schema.chunk_id],
                result_formatter=self._format,
                neo4j_database=self.rag.settings.neo4j_database,
            )
        return self._vector

    def _hybrid_retriever(self) -> HybridRetriever:
        if self._hybrid is None:
            query = templates.query("eval_chunk_fulltext", self.rag.schema)
            self.rag.driver.execute_query(query, database_=self.rag.settings.neo4j_database)
            await_indexes(self.rag.driver, self.rag.settings.neo4j_database, 300)
            self._hybrid = HybridRetriever(
                self.rag.driver,
                self.rag.settings.vector_index_name,
                CHUNK_FULLTEXT_INDEX,
                return_properties=[self.rag.schema.chunk_id],
                result_formatter=self._format,
                neo4j_database=self.rag.settings.neo4j_database,
            )
        return self._hybrid

    def _format(self, record: neo4j.Record) -> RetrieverResultItem:
        node = record.get("node") or {}
        return RetrieverResultItem(content="", metadata={"id": node.get(self.rag.schema.chunk_id)})

    @staticmethod
    def _nggr(retriever: Any, text: str, vector: np.ndarray, k: int, *, hybrid: bool) -> list[str]:
        kwargs: dict[str, Any] = {"query_vector": [float(x) for x in vector], "top_k": k}
        if hybrid:
            kwargs["query_text"] = lucene_escape(text)
        found = retriever.search(**kwargs)
        return [str(item.metadata["id"]) for item in found.items]

    def ppr_ranking(self, asked: Formulation, vector: np.ndarray, k: int) -> list[str]:
        """``ppr-reference``'s top ``k`` chunk ids (public: scripts/ppr_fusion_probe.py fuses it
        with the default's ranking)."""
        graph = self.graph
        nodes = len(graph.ids) + len(graph.entity_node)
        reset = np.zeros(nodes)
        names = list(asked.question.semantics.entities)
        resolution = self.rag.selector.resolution(names, diagnose=False)
        for name in names:
            for eid in resolution.ids.get(name, []):
                if eid in graph.entity_node:
                    reset[graph.entity_node[eid]] = 1.0
        dense = graph.cosines(vector)
        span = float(dense.max() - dense.min()) or 1.0
        reset[: len(graph.ids)] += (dense - dense.min()) / span * PPR_PASSAGE_WEIGHT
        scores = graph.ppr(reset)[: len(graph.ids)]
        order = np.lexsort((np.asarray(graph.ids), -scores))[:k]
        return [graph.ids[i] for i in order]

    def _peer_row(
        self,
        asked: Formulation,
        approach: Approach,
        ids: list[str],
        vector: np.ndarray,
        k: int,
        latency: float,
        total: int,
    ) -> Row:
        question = asked.question
        graph = self.graph
        dense = graph.cosines(vector)
        gold = question.all_gold_chunk_ids or question.gold_chunk_ids
        return Row(
            set=asked.set_name,
            question_id=question.id,
            variant=asked.variant,
            approach=approach.name,
            configuration=str(configuration_of(question.semantics)),
            cell=approach.runner,
            selection="all()",
            steering="peer",
            entities=list(question.semantics.entities) if approach.runner == "ppr" else [],
            selection_size=total,
            empty=None,
            ranked=ids,
            cosines=[round(float(dense[graph.index[c]]), 5) for c in ids if c in graph.index],
            in_selection=[True for _ in ids],
            hit_position=hit_position(ids, question.gold_chunk_ids, k)
            if asked.answerable
            else None,
            all_gold_recall=all_gold_recall_at_k(ids, gold, k) if asked.answerable else None,
            latency_s=round(latency, 6),
            gold_in_selection=bool(question.gold_chunk_ids) if asked.answerable else None,
            path=approach.runner,
        )
