"""Wrappers that record what the code under test asks of the driver and the embedder."""

from __future__ import annotations

from typing import Any

from neo4j import Driver

from guidedrag_graph.embeddings import Embedder


class CountingDriver:
    """The real driver, with every ``execute_query`` text recorded (no behaviour changed)."""

    def __init__(self, driver: Driver) -> None:
        self._driver = driver
        self.queries: list[str] = []

    def execute_query(self, query: Any, *args: Any, **kwargs: Any) -> Any:
        self.queries.append(str(query))
        return self._driver.execute_query(query, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._driver, name)

    @property
    def vector_queries(self) -> list[str]:
        markers = ("vector.similarity", "SEARCH", "db.index.vector")
        return [q for q in self.queries if any(m in q for m in markers)]


class CountingEmbedder:
    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dimensions = inner.dimensions
        self.calls = 0

    def embed_queries(self, texts: Any) -> Any:
        self.calls += 1
        return self.inner.embed_queries(texts)

    def embed_passages(self, texts: Any) -> Any:
        self.calls += 1
        return self.inner.embed_passages(texts)
