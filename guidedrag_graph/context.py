"""``GraphContext``: one database as every stage sees it, built once and passed down.

The stages (selection, retrieval, augmentation, the taggers) all need the same four things: the
driver, the settings, the schema mapping derived from them, and what the server can do (its
version, whether the ``guidedrag.rank`` procedure is installed). Building them once keeps every
stage on the same mapping (a mapping file is read once, not once per stage) and puts the
per-database caches — server capabilities, relation types, resolved names — in one place whose
lifetime is the driver's.

>>> with GraphContext.open(Settings()) as graph:
...     Retriever(graph).rank(vector, k=5)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from neo4j import Driver

from guidedrag_graph import templates
from guidedrag_graph.config import Settings
from guidedrag_graph.db import ServerInfo, connect, procedure_available, server_info
from guidedrag_graph.reader import Read, read
from guidedrag_graph.schema import SchemaMapping, schema_from_settings

_T = TypeVar("_T")

RANK_PROCEDURE = "guidedrag.rank"
# auto's tiers in one call; plugins built before it have guidedrag.rank only.
RANK_TIERS_PROCEDURE = "guidedrag.rankTiers"
# auto's entity tiers walked by the plugin (select_near/select_mentioned, walk=plugin); newer still.
TIER_WALK_FUNCTIONS = ("guidedrag.nearStep", "guidedrag.mentioned")


# The settings `guidedrag kb adopt` (and `kb embed-entities`) record in the graph: what a command
# on an adopted graph would otherwise need set by hand. A setting the user set wins.
ADOPTED_SETTINGS = (
    "vector_index_name",
    "entity_fulltext_index_name",
    "entity_vector_index_name",
)
_SCHEMA_SETTINGS = ("schema_preset", "schema_file")


def adoption_record(driver: Driver, database: str) -> dict[str, Any]:
    """What adoption recorded in the graph (``{}`` when it was never adopted): one READ query."""
    rows = read(
        driver,
        Read("adoption_settings", templates.query("adoption_settings"), {}),
        database=database,
    )
    return dict(rows[0]["record"]) if rows else {}


def adopted_settings(settings: Settings, record: dict[str, Any]) -> dict[str, Any]:
    """The settings ``record`` supplies, less those the user set (environment, .env, code).

    The schema (preset or mapping file) comes from the record only when neither is set; a mapping
    file that has since moved is not used (then the configured preset stays, and a mismatch says
    what to fix).
    """
    chosen = settings.model_fields_set
    update: dict[str, Any] = {
        name: str(record[name])
        for name in ADOPTED_SETTINGS
        if record.get(name) and name not in chosen
    }
    if not chosen & set(_SCHEMA_SETTINGS):
        recorded_file = record.get("schema_file")
        if recorded_file and Path(str(recorded_file)).is_file():
            update["schema_file"] = Path(str(recorded_file))
        elif record.get("schema_preset") and record["schema_preset"] != "custom":
            update["schema_preset"] = str(record["schema_preset"])
    return {k: v for k, v in update.items() if getattr(settings, k) != v}


def adopted_schema(schema: SchemaMapping, record: dict[str, Any]) -> SchemaMapping:
    """``schema`` with what adoption found about the graph's own layout — the document property
    that reads as a title when the mapped one is absent — if ``schema`` is the mapping adopted."""
    title = record.get("document_title")
    if not title or str(record.get("schema_preset")) != schema.preset:
        return schema
    return schema.model_copy(update={"document_title": str(title)})


def with_adoption(driver: Driver, settings: Settings) -> tuple[Settings, dict[str, Any]]:
    """``settings`` completed from the graph's adoption record (the same object when the graph
    was never adopted or the user set everything it records), and the record."""
    record = adoption_record(driver, settings.neo4j_database)
    update = adopted_settings(settings, record)
    return (settings.model_copy(update=update) if update else settings), record


class ExpiringCache:
    """Answers about the data — which entity ids a name means, the relation types — kept for a
    fixed time (``GUIDEDRAG_RESOLUTION_CACHE_S``), so a question about entities asked before
    costs one round trip instead of two. The invalidation rule is that time, and ``clear()``:
    a graph changed by another tool is seen at the latest that many seconds later. Only what was
    found is kept, so a name the KB did not know is asked again on every question (a new entity
    is found at once, and an abstention never comes from the cache)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._values: dict[Any, tuple[float, Any]] = {}
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any:
        """The value kept under ``key``, or None (never kept, expired, or caching off)."""
        with self._lock:
            kept = self._values.get(key)
            if kept is None:
                return None
            if kept[0] < time.monotonic():
                del self._values[key]
                return None
            return kept[1]

    def put(self, key: Any, value: Any, seconds: float | None = None) -> None:
        """Keep ``value`` for the cache's time (or ``seconds``: a longer-lived companion entry,
        still forgotten by ``clear()``)."""
        if self.seconds <= 0:
            return
        with self._lock:
            self._values[key] = (time.monotonic() + (seconds or self.seconds), value)

    def clear(self, kind: str | None = None) -> None:
        """Forget everything, or only the answers of one kind (``"entity"``: resolved names;
        keys are ``(kind, ...)`` tuples or a kind's own name)."""
        with self._lock:
            if kind is None:
                self._values.clear()
                return
            for key in [
                k for k in self._values if k == kind or (isinstance(k, tuple) and k[0] == kind)
            ]:
                del self._values[key]


@dataclass(eq=False)
class GraphContext:
    """Driver, settings, schema mapping and server facts of one database.

    ``open`` connects (and the context then owns and closes the driver) unless a driver is
    given. Facts about the server are asked once, on first use, and kept for the context's life:
    installing a plugin or upgrading needs a server restart, which a driver does not outlive.
    """

    driver: Driver
    settings: Settings
    schema: SchemaMapping
    owns_driver: bool = False
    _facts: dict[str, Any] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    data: ExpiringCache = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.data = ExpiringCache(self.settings.resolution_cache_s)

    @classmethod
    def open(
        cls,
        settings: Settings | None = None,
        driver: Driver | None = None,
        schema: SchemaMapping | None = None,
    ) -> GraphContext:
        """A context for ``settings`` (default: from the environment), connecting if needed.

        On a graph ``guidedrag kb adopt`` adopted, what it recorded (the vector and full-text
        index names, the schema preset or mapping file) fills in every setting the user did not
        set, so an adopted graph needs no variable set by hand; ``schema``, when given, wins.
        """
        settings = settings or Settings()
        owns = driver is None
        driver = connect(settings) if driver is None else driver
        try:
            settings, record = with_adoption(driver, settings)
            schema = schema or adopted_schema(schema_from_settings(settings), record)
        except Exception:
            if owns:
                driver.close()
            raise
        return cls(driver=driver, settings=settings, schema=schema, owns_driver=owns)

    # ------------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        if self.owns_driver:
            self.driver.close()

    def __enter__(self) -> GraphContext:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------------ queries
    @property
    def database(self) -> str:
        return self.settings.neo4j_database

    def read(
        self, query: str, params: dict[str, Any] | None = None, *, name: str = "query"
    ) -> list[dict[str, Any]]:
        """Run ``query`` (rendered from the template ``name``) in a READ transaction under the
        settings' query timeout, through the one read function (``reader.read``: logged at
        DEBUG; awaited on the event loop when the driver is an ``AsyncDriver``)."""
        return read(
            self.driver,
            Read(name, query, params or {}),
            database=self.database,
            timeout=self.settings.query_timeout,
        )

    def _read_template(self, name: str, query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        """A server fact's read (``db.server_info``/``procedure_available`` take it)."""
        return self.read(query, params, name=name)

    # ------------------------------------------------------------------------ server facts
    def fact(self, key: str, compute: Callable[[], _T]) -> _T:
        """``compute()`` once per context (a server fact or a per-database cache)."""
        with self._lock:
            if key in self._facts:
                return self._facts[key]  # type: ignore[no-any-return]
        value = compute()
        with self._lock:
            return self._facts.setdefault(key, value)  # type: ignore[no-any-return]

    def known(self, key: str) -> Any:
        """The fact under ``key`` if one was kept, else None."""
        with self._lock:
            return self._facts.get(key)

    def remember(self, key: str, value: Any) -> None:
        """Keep ``value`` as a fact (for answers only worth keeping when they are a "yes")."""
        with self._lock:
            self._facts[key] = value

    @property
    def server(self) -> ServerInfo:
        return self.fact(
            "server", lambda: server_info(self.driver, self.database, self._read_template)
        )

    @property
    def rank_plugin(self) -> bool:
        """The one gate for the plugin path: enabled in settings and listed by the server."""
        if self.settings.rank_plugin == "off":
            return False
        return self.fact(
            "rank_plugin",
            lambda: procedure_available(
                self.driver, RANK_PROCEDURE, self.database, read=self._read_template
            ),
        )

    @property
    def rank_tiers_plugin(self) -> bool:
        """Whether ``auto``'s tiers rank through ``guidedrag.rankTiers``: the plugin gate, and a
        plugin new enough to list it (an older jar ranks the tiers in pure Cypher)."""
        return self.rank_plugin and self.fact(
            "rank_tiers_plugin",
            lambda: procedure_available(
                self.driver, RANK_TIERS_PROCEDURE, self.database, read=self._read_template
            ),
        )

    @property
    def tier_walk(self) -> str:
        """How ``auto``'s entity tiers are walked: ``plugin`` when the tiers rank through the
        plugin and it lists the walk functions (a plugin built before them walks in Cypher),
        else ``cypher``. The variant of ``select_near``/``select_mentioned`` the compiler takes."""
        listed = self.rank_tiers_plugin and self.fact(
            "tier_walk_plugin",
            lambda: all(
                procedure_available(
                    self.driver, name, self.database, function=True, read=self._read_template
                )
                for name in TIER_WALK_FUNCTIONS
            ),
        )
        return "plugin" if listed else "cypher"
