"""Issue 22, item 1 against the real server: identifiers cannot break out of their backticks.

Neo4j decodes ``\\uXXXX`` inside backtick-quoted names, so doubling backticks alone lets
``\\u0060`` close the quotes. ``escape_identifier`` writes every backslash as ``\\u005c``: the
breakout becomes an ordinary (odd) name. Names a person writes (mapping files, settings) are
refused when read if they hold a backslash, NUL, control or bidi characters, or lone surrogates;
names read from the database (relationship types) are quoted and work. The managed server's
config blocks ``LOAD CSV`` to any address and from files, and bounds transaction memory.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from neo4j import Driver
from neo4j.exceptions import ClientError

from guidedrag_graph.config import Settings, load_settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.db.connection import read_query
from guidedrag_graph.errors import ConfigurationError, QueryMemoryError
from guidedrag_graph.schema.presets import (
    SchemaMapping,
    escape_identifier,
    identifier_problem,
    load_schema_file,
)
from guidedrag_graph.selection import Selector, parse
from guidedrag_graph.selection.core import quote
from tests.security import BREAKOUT, HOSTILE_NAMES, listener, schema_names, snapshot


def naive(name: str) -> str:
    """The quoting issue 22 found wanting: backticks doubled, nothing else."""
    return "`" + name.replace("`", "``") + "`"


def test_doubling_backticks_alone_lets_the_unicode_escape_out(sample_db: Driver) -> None:
    # The attack is real on this server: the naive quoting runs the injected RETURN ...
    injected = sample_db.execute_query(f"MATCH (n:{naive(BREAKOUT)}) RETURN n LIMIT 1").records
    assert injected and injected[0]["x"] == "INJECTED"
    # ... and the one quoting function makes it one label that no node has.
    quoted = sample_db.execute_query(f"MATCH (n:{escape_identifier(BREAKOUT)}) RETURN n").records
    assert quoted == []


@pytest.mark.parametrize(
    "name",
    [
        "Chunk",
        "with space",
        "a`b``c",
        "Ünïcödé 名前",
        "emoji 🙂",
        "a\\b",
        BREAKOUT,
        "\\U00000060",
        "fullwidth\uff40",
    ],
)
def test_quoted_names_round_trip_exactly(driver: Driver, name: str) -> None:
    """Whatever passes the quoting is read back by Neo4j as exactly that name."""
    label = escape_identifier(name)
    try:
        record = driver.execute_query(
            f"CREATE (n:{label}:SecurityRoundTrip {{{escape_identifier(name)}: 1}}) "
            f"CREATE (n)-[r:{label}]->(n) RETURN labels(n) AS labels, keys(n) AS keys, "
            "type(r) AS type"
        ).records[0]
        assert name in record["labels"]
        assert record["keys"] == [name]
        assert record["type"] == name
    finally:
        driver.execute_query("MATCH (n:SecurityRoundTrip) DETACH DELETE n")


def test_the_quoting_function_refuses_what_no_name_can_hold() -> None:
    for bad in ("a\x00b", "\ud800", "x\udcff"):
        with pytest.raises(ConfigurationError, match=r"^entity_label = .* rename it") as caught:
            escape_identifier(bad, "entity_label")
        assert "\n" not in str(caught.value)
    with pytest.raises(ConfigurationError, match="non-empty"):
        escape_identifier("")
    assert escape_identifier("a`b") == "`a``b`"
    assert escape_identifier("a\\u0060") == "`a\\u005cu0060`"


@pytest.mark.parametrize("hostile", [n for n in HOSTILE_NAMES if identifier_problem(n)])
def test_mapping_files_with_hostile_names_are_refused_when_read(
    tmp_path: Path, hostile: str
) -> None:
    path = tmp_path / "mapping.json"
    path.write_text(
        json.dumps({"entity": {"label": hostile}}), encoding="utf-8", errors="surrogatepass"
    )
    with pytest.raises(ConfigurationError) as caught:
        load_schema_file(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and "entity_label" in message
    assert "\n" not in message


def test_presets_and_mappings_are_checked_at_construction() -> None:
    with pytest.raises(ValueError, match=r"document_label .* contains NUL"):
        SchemaMapping(document_label="Doc\x00")
    with pytest.raises(ValueError, match=r"mentions_type .* backslash"):
        SchemaMapping(mentions_type="M\\u0060")
    assert SchemaMapping(entity_label="Personne ` étrange").entity_label == "Personne ` étrange"


@pytest.mark.parametrize(
    "variable",
    [
        "GUIDEDRAG_VECTOR_INDEX_NAME",
        "GUIDEDRAG_ENTITY_FULLTEXT_INDEX_NAME",
        "GUIDEDRAG_ENTITY_VECTOR_INDEX_NAME",
        "GUIDEDRAG_INDEX_PREFIX",
    ],
)
def test_index_name_settings_are_checked_when_read(
    monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    for hostile in ("chunk_embedding\\u0060 OPTIONS {} //", "idx\x01", "idx\u202e"):
        monkeypatch.setenv(variable, hostile)
        with pytest.raises(ConfigurationError, match=f"^{variable}=") as caught:
            load_settings(_env_file=None)
        assert "\n" not in str(caught.value)
    with pytest.raises(ConfigurationError, match="contains NUL"):  # no environment holds NUL
        load_settings(_env_file=None, **{variable.removeprefix("GUIDEDRAG_").lower(): "i\x00"})
    monkeypatch.setenv(variable, "my index ` name")
    assert load_settings(_env_file=None)  # odd but harmless names still work


def test_relationship_type_from_the_database_is_quoted_in_hop(
    own_sample_db: Driver, settings: Settings
) -> None:
    """A type that exists in the database (whoever wrote it) reaches hop() quoted, not raw."""
    hostile = "R\\u0060]->() RETURN 'INJECTED' AS x //"
    before = snapshot(own_sample_db)
    own_sample_db.execute_query(
        f"MATCH (a:Entity {{name: 'Euro'}}), (b:Entity {{name: 'France'}}) "
        f"CREATE (a)-[:{escape_identifier(hostile)}]->(b)"
    )
    try:
        selector = Selector(GraphContext.open(settings, own_sample_db))
        got = set(selector.chunk_ids(parse(f"hop('Euro', [{quote(hostile)}], direction='out')")))
        france = {
            r["id"]
            for r in own_sample_db.execute_query(
                "MATCH (:Entity {name: 'France'})<-[:MENTIONS]-(c:Chunk) RETURN c.id AS id"
            ).records
        }
        assert got == france != set()
    finally:
        own_sample_db.execute_query(f"MATCH ()-[r:{escape_identifier(hostile)}]->() DELETE r")
    assert snapshot(own_sample_db) == before


def test_managed_server_blocks_load_csv_to_any_address_and_file(driver: Driver) -> None:
    """Defence in depth: even an injection that got through could not send data out."""
    with listener() as seen:
        for url in (seen.url, f"http://localhost:{seen.port}/", "file:///etc/hostname"):
            with pytest.raises(ClientError, match=r"blocked|allow_csv_import_from_file_urls"):
                driver.execute_query(f"LOAD CSV FROM '{url}' AS row RETURN count(row) AS n")
    assert seen.requests == []


def test_a_runaway_transaction_meets_the_memory_limit_not_the_heap(driver: Driver) -> None:
    schema_before = schema_names(driver)
    with pytest.raises(QueryMemoryError, match=r"^Neo4j.*db\.memory\.transaction\.max"):
        read_query(
            driver,
            "UNWIND range(1, 200000000) AS x WITH collect(toString(x) + 'pad') AS l "
            "RETURN size(l) AS n",
            database="neo4j",
            timeout=120,
        )
    assert read_query(driver, "RETURN 1 AS one", database="neo4j") == [{"one": 1}]
    assert schema_names(driver) == schema_before
