"""``guidedrag neo4j install|start|stop|status``: a real local Neo4j from Maven Central jars."""

from __future__ import annotations

from pathlib import Path

import click

from guidedrag_graph.cli.common import echo_json, load_settings
from guidedrag_graph.config import DEFAULT_NEO4J_PASSWORD, Settings, loopback_port, redact_uri
from guidedrag_graph.errors import Neo4jRuntimeError
from guidedrag_graph.runtime import PINNED_VERSIONS, LocalNeo4j, install, install_rank_plugin
from guidedrag_graph.runtime.apoc import apoc_version_for, install_apoc
from guidedrag_graph.runtime.jars import BROWSER_VERSION, install_browser
from guidedrag_graph.runtime.server_env import port_in_use


def _server(
    settings: Settings,
    version: str | None,
    home: Path | None,
    bolt_port: int | None,
    http_port: int | None,
    with_apoc: bool = False,
    extra_conf: tuple[str, ...] = (),
) -> LocalNeo4j:
    version = version or settings.neo4j_version
    return LocalNeo4j(
        home or settings.neo4j_home / version,
        version=version,
        cache_dir=settings.neo4j_cache_dir,
        bolt_port=bolt_port or settings.neo4j_bolt_port,
        http_port=http_port or settings.neo4j_http_port,
        password=settings.neo4j_password.get_secret_value(),
        heap=settings.neo4j_heap,
        pagecache=settings.neo4j_pagecache,
        with_apoc=with_apoc,
        query_timeout=settings.query_timeout,
        extra_conf=extra_conf,
    )


_version = click.option(
    "--version",
    "version",
    default=None,
    help=f"Neo4j version (default from settings; tested: {', '.join(PINNED_VERSIONS)})",
)
_home = click.option(
    "--home",
    type=click.Path(path_type=Path),
    default=None,
    help="server folder (conf, data, logs); default <neo4j_home>/<version>",
)
_bolt = click.option("--bolt-port", type=int, default=None)
_http = click.option("--http-port", type=int, default=None)
_apoc = click.option(
    "--with-apoc",
    is_flag=True,
    help="add APOC Core to plugins/ (KG builders' writers need it; Maven Central has it for "
    "5.26 only)",
)


@click.group()
def neo4j() -> None:
    """Manage a local Neo4j Community server assembled from Maven Central."""


@neo4j.command("install")
@_version
@_home
@_apoc
@click.option(
    "--rank-plugin/--no-rank-plugin",
    default=True,
    show_default=True,
    help="build (or reuse) the guidedrag.rank plugin and put it into the server's plugins/",
)
def install_cmd(version: str | None, home: Path | None, with_apoc: bool, rank_plugin: bool) -> None:
    """Download the server jars and Neo4j Browser into the cache (reused when present), and
    add the rank plugin (and APOC with --with-apoc)."""
    settings = load_settings()
    version = version or settings.neo4j_version
    if with_apoc:
        apoc_version_for(version)  # refuse before a long download when no APOC matches
    lib = install(version, settings.neo4j_cache_dir, quiet=False)
    size = sum(p.stat().st_size for p in lib.glob("*.jar"))
    click.echo(
        f"Neo4j {version}: {len(list(lib.glob('*.jar')))} jars, {size / 2**20:.0f} MiB in {lib}"
    )
    if with_apoc:
        apoc = install_apoc(version, settings.neo4j_cache_dir, lib)
        click.echo(
            f"APOC Core {apoc_version_for(version)}: {len(list(apoc.glob('*.jar')))} jars in "
            f"{apoc} (copied into plugins/ by `guidedrag neo4j start --with-apoc`)"
        )
    browser = install_browser(settings.neo4j_cache_dir)
    click.echo(
        f"Neo4j Browser {BROWSER_VERSION}: {browser} (added to each server's plugins/ at start; "
        f"open http://127.0.0.1:<http-port>/browser/)"
    )
    if not rank_plugin:
        return
    server_home = home or settings.neo4j_home / version
    try:
        jar = install_rank_plugin(server_home, settings.neo4j_cache_dir)
    except Neo4jRuntimeError as exc:
        # Optional: without it retrieval ranks in pure Cypher, so say so and carry on.
        click.echo(f"warning: rank plugin not installed ({exc})", err=True)
        return
    click.echo(f"rank plugin: {jar} (active from the next start)")


def _rank_plugin_jar(home: Path) -> str | None:
    from guidedrag_graph.runtime.plugins import rank_plugin_jar

    jar = rank_plugin_jar(home)
    return None if jar is None else str(jar)


def _ensure_rank_plugin(server: LocalNeo4j, cache_dir: Path) -> None:
    """The rank plugin in this server's own plugins/ (any --home), or a plain warning."""
    from guidedrag_graph.runtime.plugins import ensure_rank_plugin

    jar, why = ensure_rank_plugin(server.home, cache_dir)
    if why is None:
        return
    add = f"`guidedrag neo4j install --home {server.home}` once Maven is available"
    if jar is not None:
        click.echo(
            f"warning: could not rebuild the rank plugin ({why}); starting with the one in "
            f"{jar.parent}",
            err=True,
        )
        return
    click.echo(
        f"warning: no rank plugin in {server.home / 'plugins'} ({why}): this server ranks in "
        f"pure Cypher (slower, same results); add it with {add}, then restart",
        err=True,
    )


@neo4j.command()
@_version
@_home
@_bolt
@_http
@_apoc
@click.option(
    "--rank-plugin/--no-rank-plugin",
    default=True,
    show_default=True,
    help="put the guidedrag.rank plugin into this server's plugins/ first (built once, cached)",
)
@click.option(
    "--conf",
    "extra_conf",
    multiple=True,
    metavar="KEY=VALUE",
    help="an extra neo4j.conf setting for this start (repeatable; conf is rewritten at each "
    "start, so give it again next time); settings guidedrag writes itself are refused",
)
def start(
    version: str | None,
    home: Path | None,
    bolt_port: int | None,
    http_port: int | None,
    with_apoc: bool,
    rank_plugin: bool,
    extra_conf: tuple[str, ...],
) -> None:
    """Start in the background (auth on, loopback only) and wait until Bolt answers."""
    settings = load_settings()
    server = _server(settings, version, home, bolt_port, http_port, with_apoc, extra_conf)
    if rank_plugin and not server.status().running:
        _ensure_rank_plugin(server, settings.neo4j_cache_dir)
    if server.version not in PINNED_VERSIONS:
        click.echo(
            f"warning: Neo4j {server.version} is not one of the tested versions "
            f"{', '.join(PINNED_VERSIONS)}",
            err=True,
        )
    fresh = not (server.home / "data" / "databases" / "system").exists()
    if server.password == DEFAULT_NEO4J_PASSWORD and fresh:
        click.echo(
            f"warning: NEO4J_PASSWORD is the public default {DEFAULT_NEO4J_PASSWORD!r}; a new "
            f"server keeps the password it starts with: export NEO4J_PASSWORD=... first to "
            f"choose your own",
            err=True,
        )
    took = server.start()
    click.echo(
        f"Neo4j {server.version} running at {server.uri} (started in {took:.1f}s; "
        f"logs in {server.log_file.parent})"
    )


@neo4j.command()
@_version
@_home
def stop(version: str | None, home: Path | None) -> None:
    """Stop the server started from this home (SIGTERM, then SIGKILL after 60 s)."""
    server = _server(load_settings(), version, home, None, None)
    click.echo("stopped" if server.stop() else "not running")


@neo4j.command()
@_version
@_home
@_bolt
@_http
@click.option("--json", "as_json", is_flag=True, help="print the status as JSON")
def status(
    version: str | None,
    home: Path | None,
    bolt_port: int | None,
    http_port: int | None,
    as_json: bool,
) -> None:
    """Say whether the managed server runs, with its version and ports.

    The ports are the settings' (GUIDEDRAG_NEO4J_BOLT_PORT / _HTTP_PORT, or the flags): a
    server of this home on other ports, or another server on these, is reported as such.
    Exit status 0 when the server of this home runs, 1 otherwise.
    """
    settings = load_settings()
    server = _server(settings, version, home, bolt_port, http_port)
    st = server.status()
    if as_json:
        notes = _port_notes(settings, server, st.bolt_port, st.http_port) if st.running else []
        if not st.running and port_in_use(server.bolt_port):
            notes.append(f"something else listens on bolt port {server.bolt_port}")
        echo_json(
            {
                "running": st.running,
                "version": st.version,
                "pid": st.pid,
                "uri": st.uri,
                "bolt_port": st.bolt_port,
                "http_port": st.http_port,
                "home": str(st.home),
                "rank_plugin": _rank_plugin_jar(server.home),
                "notes": notes,
            }
        )
        if not st.running:
            raise SystemExit(1)
        return
    if st.running:
        click.echo(
            f"running: Neo4j {st.version}, pid {st.pid}, bolt {st.uri}, "
            f"http http://127.0.0.1:{st.http_port}, home {st.home}"
        )
        for note in _port_notes(settings, server, st.bolt_port, st.http_port):
            click.echo(f"note: {note}")
        return
    click.echo(f"not running (home {st.home})")
    if port_in_use(server.bolt_port):
        click.echo(
            f"note: something else listens on bolt port {server.bolt_port} (the configured "
            f"port): another server (other --home or --version, or Docker) runs there"
        )
    raise SystemExit(1)


def _port_notes(
    settings: Settings, server: LocalNeo4j, bolt: int | None, http: int | None
) -> list[str]:
    """Where the settings and the running server disagree, and what to set."""
    notes = []
    if bolt is not None and bolt != server.bolt_port:
        notes.append(
            f"the settings say bolt port {server.bolt_port} but this server listens on {bolt}: "
            f"set GUIDEDRAG_NEO4J_BOLT_PORT={bolt} (or restart it on {server.bolt_port})"
        )
    if http is not None and http != server.http_port:
        notes.append(
            f"the settings say http port {server.http_port} but this server listens on {http}: "
            f"set GUIDEDRAG_NEO4J_HTTP_PORT={http}"
        )
    uri_port = loopback_port(settings.neo4j_uri)  # None: another host, or no port named
    if bolt is not None and uri_port is not None and uri_port != bolt:
        notes.append(
            f"NEO4J_URI={redact_uri(settings.neo4j_uri)} points at port {uri_port}, not at this "
            f"server: set NEO4J_URI=bolt://127.0.0.1:{bolt}"
        )
    return notes
