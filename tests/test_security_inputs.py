"""Issue 22, items 5 and 6: every free-form input of ``retrieve()`` is bounded and checked before
anything is embedded or sent, errors are one line, and no secret reaches an error line or the
managed server's environment."""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path

import numpy as np
import pytest
from neo4j import Driver, GraphDatabase

from guidedrag_graph.cli.failure import explain
from guidedrag_graph.config import DEFAULT_NEO4J_VERSION, Settings, redact_uri
from guidedrag_graph.db import connection as db
from guidedrag_graph.db.connection import check_uri, read_query
from guidedrag_graph.errors import ConfigurationError, DatabaseUnavailableError
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.retrieve_args import check_query_vector, check_question
from guidedrag_graph.runtime.server_env import (
    server_env,
    server_transaction_timeout,
    transaction_memory_max,
    transactions_memory_total,
)
from guidedrag_graph.schema.presets import PRESETS
from tests.conftest import free_port


def one_line(error: BaseException) -> str:
    text = str(error)
    assert "\n" not in text, text
    return text


def test_a_5_mb_question_is_refused_before_any_embedding(
    sample_db: Driver, settings: Settings
) -> None:
    question = "why " * (5 * 1024 * 1024 // 4)
    with GuidedRAG(settings, driver=sample_db) as rag:
        started = time.perf_counter()
        with pytest.raises(ConfigurationError, match="GUIDEDRAG_MAX_QUESTION=4,096") as caught:
            rag.retrieve(question)
        elapsed = time.perf_counter() - started
        assert rag._embedder is None  # never built, so nothing was embedded
    one_line(caught.value)
    print(f"5 MB question refused in {elapsed * 1000:.2f} ms")
    assert elapsed < 0.5  # measured ~0.1 ms; the bound leaves room for a loaded machine


def test_question_bound_follows_the_setting(settings: Settings) -> None:
    roomy = settings.model_copy(update={"max_question": 10})
    assert check_question("0123456789", roomy) == "0123456789"
    with pytest.raises(ConfigurationError, match="11 characters"):
        check_question("0123456789a", roomy)
    with pytest.raises(ConfigurationError, match="must be text"):
        check_question(b"bytes", roomy)


@pytest.mark.parametrize("k", [1001, 2**31, 2**63])
def test_top_k_has_an_upper_bound(sample_db: Driver, settings: Settings, k: int) -> None:
    with (
        GuidedRAG(settings, driver=sample_db) as rag,
        pytest.raises(ConfigurationError, match="GUIDEDRAG_MAX_TOP_K=1,000") as caught,
    ):
        rag.retrieve("euro", k=k)
    one_line(caught.value)


@pytest.mark.parametrize(
    ("vector", "why"),
    [
        ([float("nan")] * 384, "NaN or infinity"),
        ([float("inf")] + [0.1] * 383, "NaN or infinity"),
        ([0.0] * 384, "all zeros"),
        ([0.1] * 383, "383 dimensions but the vector index holds 384"),
        (["0.1"] * 384, "not a number"),
        ([0.1] * 384, None),  # a good one: accepted
        ("0.1, 0.2", "is text"),
        ([[0.1] * 384], "not a flat vector"),
        ([], "not a flat vector"),
        ([0.1, "x"] * 192, "not a number"),
        ([None] * 384, "not a number"),
    ],
)
def test_query_vectors_are_checked(
    sample_db: Driver, settings: Settings, vector: object, why: str | None
) -> None:
    with GuidedRAG(settings, driver=sample_db) as rag:
        if why is None:
            assert rag.retrieve("euro", query_vector=vector, k=2).chunks  # type: ignore[arg-type]
            return
        with pytest.raises(ConfigurationError, match=why) as caught:
            rag.retrieve("euro", query_vector=vector)  # type: ignore[arg-type]
    one_line(caught.value)


def test_a_good_query_vector_passes_unchanged() -> None:
    vector = np.linspace(-1, 1, 8)
    checked = check_query_vector(vector, 8)
    assert checked is not None and checked.dtype == np.float32
    assert np.allclose(checked, vector)


def test_service_unavailable_after_the_retries_is_the_down_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(db, "READ_RETRY_S", 0.5)
    driver = GraphDatabase.driver(f"bolt://127.0.0.1:{free_port()}", auth=("neo4j", "x"))
    try:
        with pytest.raises(DatabaseUnavailableError, match=r"^Neo4j is down \(Service") as caught:
            read_query(driver, "RETURN 1 AS one", database="neo4j")
    finally:
        driver.close()
    assert "guidedrag neo4j start" in one_line(caught.value)


def test_the_down_line_names_the_uri_for_connected_drivers(
    monkeypatch: pytest.MonkeyPatch, settings: Settings
) -> None:
    monkeypatch.setattr(db, "READ_RETRY_S", 0.5)
    driver = db.connect(settings)
    port = free_port()
    # A connected driver whose server then goes away: point it at a closed port.
    down = GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=("neo4j", "x"))
    db._URIS[down] = f"bolt://127.0.0.1:{port}"
    try:
        with pytest.raises(
            DatabaseUnavailableError, match=f"^Neo4j at bolt://127.0.0.1:{port} is down"
        ):
            read_query(down, "RETURN 1 AS one", database="neo4j")
    finally:
        down.close()
        driver.close()


def test_uri_query_strings_are_redacted_like_userinfo() -> None:
    secret = "S3cr3tPw"
    for uri in (
        f"bolt://127.0.0.1:7687?password={secret}",
        f"neo4j://user:{secret}@127.0.0.1:7687/?token={secret}",
        f"http://127.0.0.1:7474/?password={secret}",
    ):
        assert secret not in redact_uri(uri)
        try:
            check_uri(uri)
        except ConfigurationError as error:
            assert secret not in str(error)
        line, _ = explain(RuntimeError(f"driver failed to open {uri}"))
        assert secret not in line


def test_neo4j_uri_with_a_password_query_is_never_printed(tmp_path: Path) -> None:
    from tests.cli_run import run_cli

    secret = "S3cr3tPw"
    result = run_cli(
        ["kb", "stats"],
        {"NEO4J_URI": f"bolt://127.0.0.1:{free_port()}?password={secret}"},
        cwd=tmp_path,
        timeout=120,
    )
    assert result.returncode != 0
    assert secret not in result.stdout + result.stderr
    assert result.stderr.count("error:") == 1


def test_the_managed_server_starts_without_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEO4J_PASSWORD", "pw")
    monkeypatch.setenv("OPENAI_API_KEY", "sk")
    monkeypatch.setenv("GUIDEDRAG_TEST_NEO4J_PASSWORD", "pw")
    env = server_env(Path("/h"), Path("/h/conf"))
    assert not {"NEO4J_PASSWORD", "OPENAI_API_KEY", "GUIDEDRAG_TEST_NEO4J_PASSWORD"} & set(env)
    assert env["NEO4J_HOME"] == "/h" and env["PATH"] == os.environ["PATH"]
    assert transaction_memory_max("1g") == "256m"
    assert transaction_memory_max("768m") == "192m"
    assert transactions_memory_total("1g") == "512m"
    assert transactions_memory_total("768m") == "384m"
    with pytest.raises(Exception, match="GUIDEDRAG_NEO4J_HEAP"):
        transaction_memory_max("lots")


def test_the_managed_servers_conf_bounds_every_transaction(tmp_path: Path) -> None:
    """Issue 34: what ``guidedrag neo4j start`` (and the test server) writes. Memory: one
    transaction a quarter of the heap, all together half. Time: a transaction without a timeout
    of its own ends at our client's deadline (GUIDEDRAG_QUERY_TIMEOUT + read_deadline.GRACE_S),
    so the server ends it itself; the timeout monitor looks every 200 ms."""
    from guidedrag_graph.runtime.neo4j_local import LocalNeo4j

    server = LocalNeo4j(
        tmp_path, version=DEFAULT_NEO4J_VERSION, cache_dir=tmp_path / "cache", heap="768m",
        query_timeout=2.0,
    )  # fmt: skip
    conf = (server._write_conf() / "neo4j.conf").read_text().splitlines()
    assert "db.memory.transaction.max=192m" in conf
    assert "dbms.memory.transaction.total.max=384m" in conf
    assert "db.transaction.timeout=3000ms" in conf
    assert "db.transaction.monitor.check.interval=200ms" in conf
    assert server_transaction_timeout(30.0) == "31000ms"
    assert server_transaction_timeout(0.25) == "1250ms"


def test_running_managed_server_environment_has_no_password(settings: Settings) -> None:
    """The test server, when this code started it (conftest or ``guidedrag neo4j start``)."""
    pids = []
    states = [  # CI's home, conftest's (one worker or several under xdist)
        pattern
        for glob in ("*", "pytest-of-*/*/*", "pytest-of-*/*/*/*")
        for pattern in Path("/tmp").glob(f"{glob}/run/guidedrag-server.json")
    ]
    for state in states:
        data = json.loads(state.read_text())
        if f":{data.get('bolt_port')}" in settings.neo4j_uri:
            pids.append(int(data["pid"]))
    if not pids:
        pytest.skip("the test server was not started from a home under /tmp")
    environ = Path(f"/proc/{pids[0]}/environ").read_bytes().split(b"\0")
    assert not [v for v in environ if v.startswith(b"NEO4J_PASSWORD=")]


def test_a_callers_driver_logs_no_neo4j_warnings(
    sample_db: Driver, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """A neo4j-graphrag/LangChain user's own driver: our queries probe keys their graph may
    lack, and the server's "property does not exist" notification must not reach their log."""
    schema = PRESETS["guidedrag"].model_copy(
        update={"document_title": "no_such_title", "entity_type": "no_such_type"}
    )
    users = GraphDatabase.driver(
        settings.neo4j_uri,
        auth=(settings.neo4j_username, settings.neo4j_password.get_secret_value()),
    )
    try:
        caplog.set_level(logging.INFO, logger="neo4j")
        with GuidedRAG(settings, driver=users, schema=schema) as rag:
            assert rag.retrieve("Which currency does France use?", k=3).chunks
            assert rag.retrieve("euro", "entity('Euro')", k=3, steering="hard").chunks
    finally:
        users.close()
    warnings = [
        r for r in caplog.records if r.name.startswith("neo4j") and r.levelno >= logging.WARNING
    ]
    assert warnings == [], warnings[0].getMessage()[:300]
