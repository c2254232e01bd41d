"""``guidedrag neo4j install|start|stop|status``: a real local Neo4j from Maven Central jars."""

from __future__ import annotations

from pathlib import Path

import click

from guidedrag_graph.cli.common import load_settings
from guidedrag_graph.config import Settings
from guidedrag_graph.runtime import PINNED_VERSIONS, LocalNeo4j, install
from guidedrag_graph.runtime.apoc import apoc_version_for, install_apoc


def _server(
    settings: Settings,
    version: str | None,
    home: Path | None,
    bolt_port: int | None,
    http_port: int | None,
    with_apoc: bool = False,
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
@_apoc
def install_cmd(version: str | None, with_apoc: bool) -> None:
    """Download the server jars into the cache (reused when present)."""
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


@neo4j.command()
@_version
@_home
@_bolt
@_http
@_apoc
def start(
    version: str | None,
    home: Path | None,
    bolt_port: int | None,
    http_port: int | None,
    with_apoc: bool,
) -> None:
    """Start in the background (auth on, loopback only) and wait until Bolt answers."""
    server = _server(load_settings(), version, home, bolt_port, http_port, with_apoc)
    if server.version not in PINNED_VERSIONS:
        click.echo(
            f"warning: Neo4j {server.version} is not one of the tested versions "
            f"{', '.join(PINNED_VERSIONS)}",
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
def status(version: str | None, home: Path | None) -> None:
    """Say whether the managed server runs, with its version and ports."""
    server = _server(load_settings(), version, home, None, None)
    st = server.status()
    if st.running:
        click.echo(
            f"running: Neo4j {st.version}, pid {st.pid}, bolt {st.uri}, "
            f"http http://127.0.0.1:{st.http_port}, home {st.home}"
        )
    else:
        click.echo(f"not running (home {st.home})")
        raise SystemExit(1)
