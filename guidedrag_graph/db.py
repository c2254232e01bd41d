"""The Neo4j driver, server capabilities and identifier escaping — the only ways to reach Neo4j.

Version-dependent features are decided here, once, so the rest of the code asks
``ServerInfo.supports_*`` instead of comparing version strings.
"""

from __future__ import annotations

import re
import threading
import weakref
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from neo4j import Driver, GraphDatabase, Query, RoutingControl
from neo4j.exceptions import AuthError, ClientError, ServiceUnavailable

from guidedrag_graph.config import Settings
from guidedrag_graph.errors import DatabaseUnavailableError, QueryTimeoutError

# Every query we send carries a transaction timeout, so a runaway query (a huge selection, a hub
# expansion) is stopped by the server itself, not only abandoned by the client (issue 10, D1).
# Drivers made by ``connect`` use ``settings.query_timeout``; any other driver gets the default.
DEFAULT_QUERY_TIMEOUT = 30.0
_TIMEOUTS: weakref.WeakKeyDictionary[Driver, float] = weakref.WeakKeyDictionary()


def query_timeout(driver: Driver) -> float:
    """The transaction timeout (seconds) that queries on ``driver`` run with."""
    return _TIMEOUTS.get(driver, DEFAULT_QUERY_TIMEOUT)


def set_query_timeout(driver: Driver, seconds: float) -> None:
    """Use ``seconds`` for every query ``read_query``/``server_info`` send through ``driver``."""
    _TIMEOUTS[driver] = float(seconds)


def timed(query: str, driver: Driver, timeout: float | None = None) -> Query:
    """``query`` as a driver ``Query`` with this driver's transaction timeout."""
    return Query(query, timeout=timeout if timeout is not None else query_timeout(driver))


def _timed_out(exc: ClientError) -> bool:
    return "TransactionTimedOut" in (exc.code or "") or "Terminated" in (exc.code or "")


def escape_identifier(name: str) -> str:
    """Backtick-quote a label, relationship type or property key (backticks doubled)."""
    return "`" + name.replace("`", "``") + "`"


def connect(settings: Settings) -> Driver:
    """A verified driver, or an error that says where we tried to connect and how to fix it."""
    driver = GraphDatabase.driver(
        settings.neo4j_uri,
        auth=(settings.neo4j_username, settings.neo4j_password.get_secret_value()),
        connection_timeout=5,
    )
    try:
        driver.verify_connectivity()
    except AuthError as exc:
        driver.close()
        raise DatabaseUnavailableError(
            f"Neo4j at {settings.neo4j_uri} refused user {settings.neo4j_username!r}: "
            f"check NEO4J_USERNAME / NEO4J_PASSWORD"
        ) from exc
    except (ServiceUnavailable, OSError, ValueError) as exc:
        driver.close()
        raise DatabaseUnavailableError(
            f"cannot reach Neo4j at {settings.neo4j_uri} ({exc.__class__.__name__}): start it "
            f"with `guidedrag neo4j start` or set NEO4J_URI to a running server"
        ) from exc
    set_query_timeout(driver, settings.query_timeout)
    return driver


_VERSION_RE = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


@dataclass(frozen=True)
class ServerInfo:
    """The server's version and edition, and the features that follow from them."""

    version: str
    edition: str

    @cached_property
    def version_tuple(self) -> tuple[int, int, int]:
        match = _VERSION_RE.match(self.version)
        if not match:
            return (0, 0, 0)
        return (int(match.group(1)), int(match.group(2)), int(match.group(3) or 0))

    @property
    def is_calver(self) -> bool:
        return self.version_tuple[0] >= 2025

    @property
    def supports_search_clause(self) -> bool:
        """Cypher 25 ``SEARCH ... IN (VECTOR INDEX ...)`` (2026.01+)."""
        return self.version_tuple >= (2026, 1, 0)

    @property
    def supports_search_in_filter(self) -> bool:
        """``WHERE c.id IN $ids`` inside SEARCH on a declared property (2026.06+)."""
        return self.version_tuple >= (2026, 6, 0)

    @property
    def supports_vector_quantization_option(self) -> bool:
        """``vector.quantization.type`` ('none' | 'scalar' | 'binary'), 2026.06+."""
        return self.version_tuple >= (2026, 6, 0)

    @property
    def supports_vector_quantization_enabled(self) -> bool:
        """The older boolean ``vector.quantization.enabled`` (5.23 up to 2026.05)."""
        return (5, 23, 0) <= self.version_tuple < (2026, 6, 0)

    @property
    def cypher_prefix(self) -> str:
        """Queries that need Cypher 25 features say so explicitly on CalVer servers."""
        return "CYPHER 25 " if self.is_calver else ""


def server_info(driver: Driver, database: str | None = None) -> ServerInfo:
    records, _, _ = driver.execute_query(
        timed(
            "CALL dbms.components() YIELD name, versions, edition "
            "WHERE name = 'Neo4j Kernel' RETURN versions[0] AS version, edition",
            driver,
        ),
        database_=database,
        routing_=RoutingControl.READ,
    )
    record = records[0]
    return ServerInfo(version=str(record["version"]), edition=str(record["edition"]))


# (database, procedure) -> listed, per driver: installing a plugin needs a server restart, and a
# driver is not expected to outlive the server it was opened on.
_PROCEDURES: weakref.WeakKeyDictionary[Driver, dict[tuple[str | None, str], bool]] = (
    weakref.WeakKeyDictionary()
)
_PROCEDURES_LOCK = threading.Lock()


def procedure_available(driver: Driver, name: str, database: str | None = None) -> bool:
    """Whether ``SHOW PROCEDURES`` lists ``name``; asked once per driver and database.

    A server that refuses to list procedures (a restricted role) counts as not having it.
    """
    from neo4j.exceptions import Neo4jError

    from guidedrag_graph.query_templates import executable
    from guidedrag_graph.resources import cypher_template

    key = (database, name)
    with _PROCEDURES_LOCK:
        known = _PROCEDURES.setdefault(driver, {})
        if key in known:
            return known[key]
    try:
        rows = read_query(
            driver,
            executable(cypher_template("procedure_listed")),
            {"name": name},
            database=database,
        )
        listed = bool(rows and rows[0]["listed"])
    except Neo4jError:
        listed = False
    with _PROCEDURES_LOCK:
        _PROCEDURES.setdefault(driver, {})[key] = listed
    return listed


def read_query(
    driver: Driver,
    query: str,
    params: dict[str, Any] | None = None,
    *,
    database: str | None,
    timeout: float | None = None,
) -> list[dict[str, Any]]:
    """Run a retrieval query in a READ transaction so replicas and clusters can serve it.

    The server stops it after ``timeout`` seconds (default: the driver's, see ``connect``);
    that is a ``QueryTimeoutError`` naming the setting."""
    seconds = timeout if timeout is not None else query_timeout(driver)
    try:
        records, _, _ = driver.execute_query(
            timed(query, driver, seconds),
            params or {},
            database_=database,
            routing_=RoutingControl.READ,
        )
    except ClientError as exc:
        if _timed_out(exc):
            raise QueryTimeoutError(
                f"Neo4j stopped the query after {seconds:g} s (GUIDEDRAG_QUERY_TIMEOUT): narrow "
                f"the selection (fewer or more specific terms) or raise the timeout"
            ) from exc
        raise
    return [record.data() for record in records]
