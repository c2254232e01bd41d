"""Helpers shared by the CLI modules: settings, a driver that is always closed, JSON output,
and the parameter types that check numbers before anything runs."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from guidedrag_graph.config import Settings
from guidedrag_graph.config import load_settings as _load_settings

if TYPE_CHECKING:
    from neo4j import Driver

    from guidedrag_graph.schema import SchemaMapping


def load_settings() -> Settings:
    """The settings, or a one-line ConfigurationError naming the variable that is wrong."""
    return _load_settings()


def schema_of(settings: Settings) -> SchemaMapping:
    from guidedrag_graph.schema import schema_from_settings

    return schema_from_settings(settings)


@contextmanager
def driver_for(settings: Settings) -> Iterator[Driver]:
    from guidedrag_graph.db import connect

    driver = connect(settings)
    try:
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
