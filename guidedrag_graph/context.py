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
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.db.connection import ServerInfo, connect, procedure_available, server_info
from guidedrag_graph.db.reads import Read, read
from guidedrag_graph.db.versions import database_version
from guidedrag_graph.expiring import ExpiringCache
from guidedrag_graph.schema.presets import SchemaMapping, schema_from_settings
from guidedrag_graph.templates import queries as templates

_T = TypeVar("_T")

RANK_PROCEDURE = "guidedrag.rank"
# auto's tiers in one call; plugins built before it have guidedrag.rank only.
RANK_TIERS_PROCEDURE = "guidedrag.rankTiers"
# auto's entity tiers walked by the plugin (select_near/select_mentioned, walk=plugin); newer still.
TIER_WALK_FUNCTIONS = ("guidedrag.nearStep", "guidedrag.mentioned")
# auto's search and ranking in one call (cypher/retrieve_auto.cypher); newest of all.
RANK_AUTO_PROCEDURE = "guidedrag.rankAuto"


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


def adoption_and_version(driver: Driver, database: str) -> tuple[dict[str, Any], frozenset[str]]:
    """The adoption record and the database's version: the bookmark the server returns for a
    read names the last transaction committed to the database, so it changes with every write
    (ours, another tool's, another process's) and with a database recreated.

    One ``RETURN 1`` round trip gives the version (threads opening together share it,
    ``db/versions.py``); the record is read again only when the version moved since the last
    ``open`` on this driver and database (adoption is itself a write). ``KBState.observe``
    compares the version. (Trusting the kept record without a read, and checking it on the
    first call, was tried on 2026-12-06 and taken out: a graph adopted since kept the old index
    names for the instance's whole life.)"""
    kept = _ADOPTIONS.get(driver, {}).get(database)
    check = Read("connection_check", templates.query("connection_check"), {})
    version = database_version(driver, database, check)  # threads opening together share one
    if kept is not None and kept[0] == version:
        return dict(kept[1]), version
    record = adoption_record(driver, database)
    with _STATES_LOCK:
        _ADOPTIONS.setdefault(driver, {})[database] = (version, record)
    return record, version


# driver -> database -> (the version it was read at, the adoption record): weak on the driver.
_ADOPTIONS: weakref.WeakKeyDictionary[Any, dict[str, tuple[frozenset[str], dict[str, Any]]]] = (
    weakref.WeakKeyDictionary()
)


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


def with_adoption(settings: Settings, record: dict[str, Any]) -> tuple[Settings, dict[str, Any]]:
    """``settings`` completed from the graph's adoption ``record`` (the same object when the
    graph was never adopted or the user set everything it records), and the record."""
    update = adopted_settings(settings, record)
    return (settings.model_copy(update=update) if update else settings), record


class KBState:
    """What belongs to a database rather than to a request — server facts, the link index,
    resolved names, relation types, cost statistics — held once per process for each driver,
    database, settings and schema, and shared by every ``GraphContext`` opened on them: a new
    ``GuidedRAG``, adapter or scoped view on a warm driver starts warm (issue 36 measured 74-90 ms
    on a new instance's first stated call and 455-519 ms on its first bare one when this was
    built per instance).

    The invalidation is today's: cached answers expire after ``GUIDEDRAG_RESOLUTION_CACHE_S``
    (the dear ones refreshed in the background, ``ExpiringCache.refreshed``), ``data.clear()``
    forgets them, and a context opened after a write sees it at once — ``observe`` is given the
    version each open read, and forgets the data answers when it moved. Server facts (the
    version, the plugin's procedures) stay for the driver's life, as they did per context.
    """

    def __init__(self, cache_s: float) -> None:
        self.facts: dict[str, Any] = {}
        self.lock = threading.Lock()
        self.data = ExpiringCache(cache_s)
        self.version: frozenset[str] | None = None

    def observe(self, version: frozenset[str]) -> None:
        """The database is at ``version``: forget the data answers if it changed since."""
        with self.lock:
            if self.version == version:
                return
            changed = self.version is not None
            self.version = version
        if changed:
            self.data.clear()


# driver -> (database, settings, schema) -> state. Weak on the driver: a closed and dropped
# driver takes its states with it.
_STATES: weakref.WeakKeyDictionary[Any, dict[tuple[str, str, str], KBState]] = (
    weakref.WeakKeyDictionary()
)
_STATES_LOCK = threading.Lock()


def kb_state(driver: Any, settings: Settings, schema: SchemaMapping) -> KBState:
    """The process's shared state for ``driver`` on the settings' database with ``schema``
    (settings and schema compared by value: two equal ``Settings`` objects share it)."""
    key = (settings.neo4j_database, settings.model_dump_json(), schema.model_dump_json())
    with _STATES_LOCK:
        states = _STATES.setdefault(driver, {})
        state = states.get(key)
        if state is None:
            state = states[key] = KBState(settings.resolution_cache_s)
        return state


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
    state: KBState | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.state is None:  # built by hand (tests): state of its own
            self.state = KBState(self.settings.resolution_cache_s)
        self._state: KBState = self.state

    @property
    def data(self) -> ExpiringCache:
        """Answers about the data (resolved names, relation types, the link index), shared by
        every context on the same driver, database, settings and schema (``KBState``)."""
        return self._state.data

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
        It reads the database's version, so its state forgets answers a write made stale.
        """
        settings = settings or Settings()
        owns = driver is None
        driver = connect(settings) if driver is None else driver
        try:
            record, version = adoption_and_version(driver, settings.neo4j_database)
            settings, record = with_adoption(settings, record)
            schema = schema or adopted_schema(schema_from_settings(settings), record)
        except Exception:
            if owns:
                driver.close()
            raise
        state = kb_state(driver, settings, schema)
        state.observe(version)
        return cls(driver=driver, settings=settings, schema=schema, owns_driver=owns, state=state)

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

    def property_keys(self) -> set[str]:
        """Every property key a node of the database has (``cypher/property_keys.cypher``), read
        now: what a chunk filter's fields are checked against (a request's filters,
        ``pipeline/filter_reads.py``; a trusted scope's, ``selection/scope_reads.py``)."""
        rows = self.read(templates.query("property_keys", self.schema), {}, name="property_keys")
        return set(rows[0]["keys"]) if rows else set()

    def _read_template(self, name: str, query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        """A server fact's read (``db.server_info``/``procedure_available`` take it)."""
        return self.read(query, params, name=name)

    # ------------------------------------------------------------------------ server facts
    def fact(self, key: str, compute: Callable[[], _T]) -> _T:
        """``compute()`` once per context (a server fact or a per-database cache)."""
        state = self._state
        with state.lock:
            if key in state.facts:
                return state.facts[key]  # type: ignore[no-any-return]
        value = compute()
        with state.lock:
            return state.facts.setdefault(key, value)  # type: ignore[no-any-return]

    def known(self, key: str) -> Any:
        """The fact under ``key`` if one was kept, else None."""
        with self._state.lock:
            return self._state.facts.get(key)

    def known_facts(self) -> dict[str, Any]:
        """Every fact kept so far, as one snapshot: the planner's starting facts in one look."""
        with self._state.lock:
            return dict(self._state.facts)

    def remember(self, key: str, value: Any) -> None:
        """Keep ``value`` as a fact (for answers only worth keeping when they are a "yes")."""
        with self._state.lock:
            self._state.facts[key] = value

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
    def rank_auto_plugin(self) -> bool:
        """Whether ``auto``'s search and ranking can be one ``guidedrag.rankAuto`` call: the tiers
        rank through the plugin and it lists the procedure (an older jar runs retrieve_boost)."""
        return self.rank_tiers_plugin and self.fact(
            "rank_auto_plugin",
            lambda: procedure_available(
                self.driver, RANK_AUTO_PROCEDURE, self.database, read=self._read_template
            ),
        )

    @property
    def tier_walk_plugin(self) -> bool:
        """Whether the plugin can walk ``auto``'s entity tiers: the tiers rank through it and it
        lists the walk functions (a plugin built before them walks in Cypher). A fact only: the
        variant it decides (``walk``) is chosen with the others by ``RankFacts.variant``."""
        return self.rank_tiers_plugin and self.fact(
            "tier_walk_plugin",
            lambda: all(
                procedure_available(
                    self.driver, name, self.database, function=True, read=self._read_template
                )
                for name in TIER_WALK_FUNCTIONS
            ),
        )
