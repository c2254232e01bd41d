"""The Neo4j driver and server capabilities — the only ways to reach Neo4j.

Version-dependent features are decided here, once, so the rest of the code asks
``ServerInfo.supports_*`` instead of comparing version strings.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from neo4j import READ_ACCESS, Bookmarks, Driver, GraphDatabase, Query, RoutingControl
from neo4j.exceptions import (
    AuthError,
    ClientError,
    DriverError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
)

from guidedrag_graph.config import DEFAULT_NEO4J_PASSWORD, Settings, redact_uri
from guidedrag_graph.db.deadline import GRACE_S, Deadline, DeadlinePassed
from guidedrag_graph.db.driver_io import ReadCut, cut_off, row, unlogged
from guidedrag_graph.db.read_errors import ReadRetries, within_budget
from guidedrag_graph.db.read_versions import collecting, saw
from guidedrag_graph.db.server import ServerInfo as ServerInfo  # re-exported: db.ServerInfo
from guidedrag_graph.errors import (
    ConfigurationError,
    DatabaseUnavailableError,
)
from guidedrag_graph.templates import queries as templates

# Every query we send carries a transaction timeout, so a runaway query (a huge selection, a hub
# expansion) is stopped by the server itself, not only abandoned by the client.
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


# The redacted URI of each driver ``connect`` made, for the "Neo4j at ... is down" line.
_URIS: weakref.WeakKeyDictionary[Driver, str] = weakref.WeakKeyDictionary()


def where(driver: Driver) -> str:
    """`` at <uri>`` for a driver ``connect`` made (redacted), else empty."""
    uri = _URIS.get(driver)
    return f" at {uri}" if uri else ""


# Schemes of the Bolt driver. The driver also takes http(s):// (its preview Query API client),
# which needs aiohttp and cannot run our transactions: refused up front with the fix.
BOLT_SCHEMES = frozenset({"bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc"})

_log = logging.getLogger(__name__)
_warned_default_password = False


def check_uri(uri: str) -> str:
    """``uri`` if the Bolt driver can use it, else a ConfigurationError that says what to set."""
    shown = redact_uri(uri)
    try:
        parts = urlsplit(uri)
    except ValueError as exc:
        raise ConfigurationError(
            f"NEO4J_URI={shown} is not a URI: set it like bolt://127.0.0.1:7687"
        ) from exc
    scheme = parts.scheme.lower()
    if scheme not in BOLT_SCHEMES:
        what = f"uses {scheme}://" if scheme else "has no scheme"
        raise ConfigurationError(
            f"NEO4J_URI={shown} {what}: use bolt:// or neo4j:// (e.g. bolt://127.0.0.1:7687; "
            f"Neo4j's HTTP port 7474 is not the Bolt port)"
        )
    if "@" in parts.netloc:
        raise ConfigurationError(
            f"NEO4J_URI={shown} carries a user name or password: remove it from the URI and "
            f"set NEO4J_USERNAME / NEO4J_PASSWORD instead"
        )
    return uri


def new_driver(uri: str, auth: tuple[str, str], **config: Any) -> Driver:
    """Every driver the package creates: server notifications off.

    Notifications (unknown labels on an empty KB, deprecations, cartesian products) are advice
    for people writing queries in Browser; ours are generated, and the driver would log each
    one as a multi-line warning in the middle of a command's output.
    """
    config.setdefault("notifications_min_severity", "OFF")
    return GraphDatabase.driver(uri, auth=auth, **config)


def _warn_default_password(settings: Settings) -> None:
    global _warned_default_password
    if _warned_default_password:
        return
    if settings.neo4j_password.get_secret_value() == DEFAULT_NEO4J_PASSWORD:
        _warned_default_password = True
        _log.warning(
            "NEO4J_PASSWORD is the public default %r: set your own (export NEO4J_PASSWORD=...) "
            "before a server holds data that matters or listens beyond 127.0.0.1",
            DEFAULT_NEO4J_PASSWORD,
        )


def connect(settings: Settings) -> Driver:
    """A driver proven to reach the configured database, or an error that says how to fix it.

    The first query (``connection_check``) runs on ``settings.neo4j_database``, so a bad URI,
    bad credentials or a database that does not exist fail here, named, before any work starts.
    """
    uri = check_uri(settings.neo4j_uri)
    shown = redact_uri(uri)
    _warn_default_password(settings)
    try:
        driver = new_driver(
            uri,
            (settings.neo4j_username, settings.neo4j_password.get_secret_value()),
            connection_timeout=5,
        )
    except (ValueError, DriverError) as exc:
        raise ConfigurationError(
            f"NEO4J_URI={shown} is not usable ({exc.__class__.__name__}): set it like "
            f"bolt://127.0.0.1:7687"
        ) from exc
    try:
        _check_connection(driver, settings.neo4j_database)
    except AuthError as exc:
        driver.close()
        raise DatabaseUnavailableError(
            f"Neo4j at {shown} refused user {settings.neo4j_username!r}: "
            f"check NEO4J_USERNAME / NEO4J_PASSWORD"
        ) from exc
    except ClientError as exc:
        if exc.code != "Neo.ClientError.Database.DatabaseNotFound":
            driver.close()
            raise
        names = _database_names(driver)
        driver.close()
        listed = ", ".join(names) if names else "nothing this user may read"
        raise ConfigurationError(
            f"database {settings.neo4j_database!r} does not exist on {shown}; SHOW DATABASES "
            f"lists {listed}: set NEO4J_DATABASE to one of them"
        ) from exc
    except (ServiceUnavailable, SessionExpired, OSError, ValueError, DriverError) as exc:
        driver.close()
        raise DatabaseUnavailableError(
            f"cannot reach Neo4j at {shown} ({exc.__class__.__name__}): start it "
            f"with `guidedrag neo4j start` or set NEO4J_URI to a running server"
        ) from exc
    set_query_timeout(driver, settings.query_timeout)
    _URIS[driver] = shown
    return driver


def _check_connection(driver: Driver, database: str) -> None:
    """``connection_check`` once, auto-commit READ, no retry: ``execute_query`` retried a closed
    port for 30 s before the one-line error; a refused connection is final (start the server)."""
    with driver.session(database=database, default_access_mode=READ_ACCESS) as session:
        session.run(templates.query("connection_check")).consume()


def _database_names(driver: Driver) -> list[str]:
    try:
        records, _, _ = driver.execute_query(
            templates.query("show_databases"), database_="system", routing_=RoutingControl.READ
        )
    except (Neo4jError, DriverError):
        return []
    return [str(record["name"]) for record in records]


# A read other than ``read_query`` (``GraphContext``'s, which may be awaited):
# (template name, query, params) -> rows.
RowsReader = Callable[[str, str, dict[str, Any]], list[dict[str, Any]]]


def server_info(
    driver: Driver, database: str | None = None, read: RowsReader | None = None
) -> ServerInfo:
    query = templates.query("server_version")
    rows = (
        read("server_version", query, {}) if read else read_query(driver, query, database=database)
    )
    record = rows[0]
    return ServerInfo(version=str(record["version"]), edition=str(record["edition"]))


# (database, name, is a function) -> listed, per driver: installing a plugin needs a server
# restart, and a driver is not expected to outlive the server it was opened on.
_PROCEDURES: weakref.WeakKeyDictionary[Driver, dict[tuple[str | None, str, bool], bool]] = (
    weakref.WeakKeyDictionary()
)
_PROCEDURES_LOCK = threading.Lock()


def procedure_available(
    driver: Driver,
    name: str,
    database: str | None = None,
    *,
    function: bool = False,
    read: RowsReader | None = None,
) -> bool:
    """Whether ``SHOW PROCEDURES`` (``function``: ``SHOW FUNCTIONS``) lists ``name``; asked once
    per driver and database. A server that refuses to list them (a restricted role) counts as
    not having it."""
    key = (database, name, function)  # a procedure and a function may share a name
    with _PROCEDURES_LOCK:
        known = _PROCEDURES.setdefault(driver, {})
        if key in known:
            return known[key]
    try:
        query = templates.query(
            "procedure_listed", variant={"kind": "function" if function else "procedure"}
        )
        rows = (
            read("procedure_listed", query, {"name": name})
            if read
            else read_query(driver, query, {"name": name}, database=database)
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

    An auto-commit transaction in a READ session: one round trip (BEGIN, RUN and PULL
    pipelined, no COMMIT), where ``execute_query``'s managed transaction takes two; measured on
    loopback, 1.1-1.3 ms against 2.0-2.9 ms for ``RETURN 1``. The session waits for the
    bookmarks of the driver's own writes (``execute_query``), so a read after a load sees it on a
    cluster too; the server refuses writes in it (``Neo.ClientError.Statement.AccessMode``).
    Errors the driver calls retryable (a restarting server, a lost connection) are retried, as a
    managed transaction would, for up to ``READ_RETRY_S``; a read is safe to repeat.

    The server stops it after ``timeout`` seconds (default: the driver's, see ``connect``);
    that is a ``QueryTimeoutError`` naming the setting. The caller waits at most ``GRACE_S``
    longer: a server too loaded (or too frozen) to end the query on time is a
    ``QueryTimeoutError`` too, at the deadline (``read_deadline``: the read runs on this thread
    and the watchdog cuts its connection off)."""
    seconds = within_budget(timeout if timeout is not None else query_timeout(driver))
    retries = ReadRetries(READ_RETRY_S, seconds, where(driver))
    timed_query = timed(query, driver, seconds)
    while True:
        try:
            return _read_once(driver, timed_query, params or {}, database, seconds + GRACE_S)
        except (DeadlinePassed, Neo4jError, DriverError) as exc:
            error = retries.failure(exc)
            if error is exc:
                raise
            if error is not None:
                raise error from exc
        time.sleep(retries.wait())


# How long a read keeps retrying what the driver calls retryable (its managed transactions'
# default max_transaction_retry_time).
READ_RETRY_S = 30.0


def _read_once(
    driver: Driver, query: Query, params: dict[str, Any], database: str | None, wait: float
) -> list[dict[str, Any]]:
    """One read on this thread, cut off after ``wait`` seconds (``DeadlinePassed``)."""
    bookmarks = Bookmarks.from_raw_values(driver.execute_query_bookmark_manager.get_bookmarks())
    with ReadCut() as cut, Deadline(wait, lambda: cut_off(cut)) as deadline:
        try:
            # Notifications off per session, so a driver the caller made (neo4j-graphrag,
            # LangChain) logs no warning for a property their graph lacks (our queries probe
            # optional keys).
            with driver.session(
                database=database,
                default_access_mode=READ_ACCESS,
                bookmarks=bookmarks,
                notifications_min_severity="OFF",
            ) as session:
                cut.session = session
                rows = [row(record) for record in session.run(query, unlogged(params))]
                if collecting():  # a call that must know what version it read
                    saw(frozenset(session.last_bookmarks().raw_values))
                return rows
        except (DriverError, Neo4jError, OSError):
            if deadline.fired:
                raise DeadlinePassed(wait) from None
            raise
