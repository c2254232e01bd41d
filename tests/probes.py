"""Wrappers that record what the code under test asks of the driver and the embedder."""

from __future__ import annotations

from typing import Any

from neo4j import Driver

from guidedrag_graph.embeddings import Embedder


class CountingDriver:
    """The real driver, with the text of every query it is sent recorded — through
    ``execute_query`` or a session's ``run`` (reads go through READ sessions) — and no
    behaviour changed."""

    def __init__(self, driver: Driver) -> None:
        self._driver = driver
        self.queries: list[str] = []

    def execute_query(self, query: Any, *args: Any, **kwargs: Any) -> Any:
        self.queries.append(_text(query))
        return self._driver.execute_query(query, *args, **kwargs)

    def session(self, **config: Any) -> _CountingSession:
        return _CountingSession(self._driver.session(**config), self.queries)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._driver, name)

    @property
    def vector_queries(self) -> list[str]:
        # guidedrag.rankAuto searches the vector index inside the plugin
        markers = ("vector.similarity", "SEARCH", "db.index.vector", "guidedrag.rankAuto(")
        return [q for q in self.queries if any(m in q for m in markers)]


def _text(query: Any) -> str:
    return str(getattr(query, "text", query))


class _CountingSession:
    """A real session whose ``run`` calls are recorded into the driver's list."""

    def __init__(self, session: Any, queries: list[str]) -> None:
        self._session = session
        self._queries = queries

    def run(self, query: Any, *args: Any, **kwargs: Any) -> Any:
        self._queries.append(_text(query))
        return self._session.run(query, *args, **kwargs)

    def __enter__(self) -> _CountingSession:
        self._session.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._session.__exit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


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
