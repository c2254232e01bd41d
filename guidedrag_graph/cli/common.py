"""Helpers shared by the CLI modules: settings, a driver that is always closed, JSON output,
and the parameter types that check numbers before anything runs."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from guidedrag_graph.cli.schema_option import schema_file
from guidedrag_graph.config import Settings
from guidedrag_graph.config import load_settings as _load_settings

if TYPE_CHECKING:
    from neo4j import Driver

    from guidedrag_graph.schema.presets import SchemaMapping


def load_settings() -> Settings:
    """The settings, or a one-line ConfigurationError naming the variable that is wrong; a
    ``--schema`` given to this command wins over ``GUIDEDRAG_SCHEMA_FILE``."""
    given = schema_file()
    return _load_settings(schema_file=given) if given else _load_settings()


# The adoption record of the graph this command connected to (driver_for), for schema_of.
_ADOPTION: dict[str, Any] = {}


def schema_of(settings: Settings) -> SchemaMapping:
    """The settings' schema mapping, with what adoption found about the graph (after
    ``driver_for``: e.g. the document property that reads as a title)."""
    from guidedrag_graph.context import adopted_schema
    from guidedrag_graph.schema.presets import schema_from_settings

    return adopted_schema(schema_from_settings(settings), _ADOPTION)


@contextmanager
def driver_for(settings: Settings) -> Iterator[Driver]:
    """A connected driver, closed on exit.

    On a graph ``guidedrag kb adopt`` adopted, ``settings`` is completed in place from the
    adoption record (index names, schema preset or mapping file; settings the user set win), so
    the ``schema_of(settings)`` and ``GuidedRAG(settings, ...)`` that follow see the graph as
    adopted with no variable set by hand (``kb adopt`` run again keeps what it recorded).
    """
    from guidedrag_graph.cli import failure
    from guidedrag_graph.context import adopted_settings, adoption_record
    from guidedrag_graph.db.connection import connect

    driver = connect(settings)
    try:
        record = adoption_record(driver, settings.neo4j_database)
        _ADOPTION.clear()
        _ADOPTION.update(record)
        failure.note_adopted_graph(bool(record))
        for name, value in adopted_settings(settings, record).items():
            setattr(settings, name, value)
        yield driver
    finally:
        driver.close()


def echo_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, default=str, ensure_ascii=False))


class AtLeast(click.types.IntParamType):
    """A whole number ≥ ``minimum``: ``-k 0`` is an error, never a silent default."""

    def __init__(self, minimum: int) -> None:
        self.minimum = minimum

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        number = int(super().convert(value, param, ctx))
        if number < self.minimum:
            self.fail(f"must be ≥ {self.minimum} (got {number})", param, ctx)
        return number


class Cosine(click.types.FloatParamType):
    """A finite number in [-1, 1]: NaN would pass every comparison and silently match nothing."""

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        number = float(super().convert(value, param, ctx))
        if not math.isfinite(number) or not -1.0 <= number <= 1.0:
            self.fail(f"must be a finite number from -1 to 1 (got {value})", param, ctx)
        return number


TOP_K = AtLeast(1)
COSINE = Cosine()
