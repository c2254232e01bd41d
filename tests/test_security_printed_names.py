"""Issue 34 R1: no name read from the database reaches a printed script or a terminal raw.

A relationship type is any string Neo4j accepts, newlines included. Printed into the ``// empty:``
comment of a Browser script as a "did you mean" suggestion, a newline in it ended the comment and
the rest of the type ran as a statement when the script was pasted. Labels printed by
``kb inspect`` carried escape sequences and fake lines to the terminal. Names are now quoted for
comments (``quote_name``) and every printed line escapes control characters (``printable``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from click.testing import CliRunner
from neo4j import Driver

from guidedrag_graph.cli import cli
from guidedrag_graph.cli.failure import explain
from guidedrag_graph.cli.mcp_server import build_server
from guidedrag_graph.config import Settings
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.identifiers import escape_identifier
from guidedrag_graph.migration.run import migrate
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.schema.presets import PRESETS
from guidedrag_graph.testing.examples import roman_graph
from guidedrag_graph.testing.memory_graph import load_graph
from tests.conftest import wipe

HOSTILE_TYPE = "IS_CURRENCY_OF\nCREATE (:Pwned {via: 'browser-script'});\n//"
HOSTILE_LABEL = "Evil\x1b]0;owned\x07\nfitting preset: langchain"
# How quote_name prints it (tests import nothing new, so they run, and fail, on the old code).
QUOTED_TYPE = "'IS_CURRENCY_OF\\x0aCREATE (:Pwned {via: \\'browser-script\\'});\\x0a//'"
EXPRESSION = "hop('Julius Caesar', ['IS_CURRENCY_OFX'])"
# Characters that end a line or drive a terminal; none may be printed raw.
RAW = ("\x1b", "\x07", "\x9b", "\u2028", "\u2029", "\u202e", "\r")


@pytest.fixture(scope="module")
def hostile_db(driver: Driver, main_settings: Settings) -> Iterator[Driver]:
    """The Roman graph, plus a relationship of the hostile type (so it is a known, in-use type
    and the nearest suggestion for IS_CURRENCY_OFX) and a node with the hostile label."""
    wipe(driver)
    migrate(driver, main_settings, PRESETS["guidedrag"])
    load_graph(roman_graph(), driver, PRESETS["guidedrag"])
    driver.execute_query(
        f"CREATE (:SecurityPrinted)-[:{escape_identifier(HOSTILE_TYPE)}]->(:SecurityPrinted)"
    )
    driver.execute_query(f"CREATE (:{escape_identifier(HOSTILE_LABEL)} {{name: 'x'}})")
    yield driver
    wipe(driver)


@pytest.fixture
def runner(
    hostile_db: Driver, settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> CliRunner:
    monkeypatch.chdir(str(tmp_path))  # no .env from the checkout
    monkeypatch.setenv("NEO4J_URI", settings.neo4j_uri)
    monkeypatch.setenv("NEO4J_PASSWORD", settings.neo4j_password.get_secret_value())
    monkeypatch.setenv("NEO4J_DATABASE", settings.neo4j_database)
    monkeypatch.setenv("GUIDEDRAG_SCHEMA_PRESET", "guidedrag")
    return CliRunner()


def assert_no_injected_statement(script: str) -> None:
    """Every line naming the hostile type is a comment, and the comment still names it (so
    the suggestion was made, escaped)."""
    assert "Pwned" in script, script  # the suggestion is there ...
    for line in script.splitlines():
        if "Pwned" in line or "CREATE" in line:
            assert line.startswith("//"), f"a statement escaped its comment: {line!r}"
    assert QUOTED_TYPE in script  # ... quoted, its newlines escaped
    assert not any(ch in script for ch in RAW)


def test_cli_cypher_keeps_a_hostile_suggested_type_inside_its_comment(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["cypher", EXPRESSION])
    assert result.exit_code == 0, result.output
    assert "// empty: unknown_relation_type" in result.output
    assert_no_injected_statement(result.output)


def test_mcp_cypher_tool_keeps_a_hostile_suggested_type_inside_its_comment(
    hostile_db: Driver, settings: Settings
) -> None:
    rag = GuidedRAG(settings, driver=hostile_db, schema=PRESETS["guidedrag"])
    server = build_server(rag)
    result = asyncio.run(server.call_tool("cypher", {"expression": EXPRESSION}))
    texts = [block.text for block in result.content if hasattr(block, "text")]  # type: ignore[union-attr]
    assert texts, result
    assert_no_injected_statement("\n".join(texts))


def test_select_suggestions_are_quoted(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["select", EXPRESSION])
    assert result.exit_code == 0, result.output
    assert QUOTED_TYPE in result.output
    assert not any(line.startswith("CREATE") for line in result.output.splitlines())


def test_kb_inspect_escapes_labels_read_from_the_graph(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["kb", "inspect"])
    assert result.exit_code == 0, result.output
    assert not any(ch in result.output for ch in RAW), "an escape sequence reached the terminal"
    assert "\x07" not in result.output
    # The label's newline cannot fake the verdict line: only the real one starts so.
    verdicts = [ln for ln in result.output.splitlines() if ln.startswith("fitting preset:")]
    assert len(verdicts) == 1, verdicts
    assert "Evil\\x1b]0;owned\\x07\\x0afitting preset: langchain" in result.output  # escaped
    # The relationship listing names the hostile type escaped, on one line.
    assert not any(ln.startswith("CREATE") for ln in result.output.splitlines())


def test_error_lines_escape_control_characters() -> None:
    message, _ = explain(ConfigurationError(f"no label {HOSTILE_LABEL} \u202eevil"))
    assert "\n" not in message
    assert not any(ch in message for ch in RAW)
    assert "\\x1b]0;owned\\x07" in message


def test_quote_name_and_printable_leave_no_line_break() -> None:
    from guidedrag_graph.identifiers import printable, quote_name

    assert quote_name(HOSTILE_TYPE) == QUOTED_TYPE
    for name in (HOSTILE_TYPE, HOSTILE_LABEL, "a\u2028b\u0085c\u202ed", "it's \\ fine"):
        quoted = quote_name(name)
        assert len(quoted.splitlines()) == 1 and quoted.startswith("'") and quoted.endswith("'")
        assert not any(ch in quoted for ch in RAW)
    assert printable("plain name, ü, 東京") == "plain name, ü, 東京"


def test_the_quoting_modules_examples_are_true() -> None:
    """The docstring examples of the one quoting module are its specification in small: run
    them (escape_identifier's had said what a backtick, not ``\\u0060``, would give)."""
    import doctest

    from guidedrag_graph import identifiers

    result = doctest.testmod(identifiers)
    assert result.attempted >= 5 and result.failed == 0
