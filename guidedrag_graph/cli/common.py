"""Helpers shared by the CLI modules: settings, a driver that is always closed, JSON output."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.db import connect
from guidedrag_graph.schema import SchemaMapping, schema_from_settings


def load_settings() -> Settings:
    return Settings()


def schema_of(settings: Settings) -> SchemaMapping:
    return schema_from_settings(settings)


@contextmanager
def driver_for(settings: Settings) -> Iterator[Driver]:
    driver = connect(settings)
    try:
        yield driver
    finally:
        driver.close()


def echo_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, default=str, ensure_ascii=False))
