"""The entity linker (``--tagger linker``, the default) against the real Neo4j.

A small KB built to exercise each rule: names and aliases in any case and spacing, possessives,
longest span first, rarer entity first, disambiguated names ("Mercury (planet)"), accents, stop
words and short names, hostile question text; plus ``guidedrag ask --auto-semantics`` on the
sample KB.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from neo4j import Driver

from guidedrag_graph.cli import cli
from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.kb import load_bundle
from guidedrag_graph.linking.entities import EntityLinker, fold, fulltext_query, question_spans
from guidedrag_graph.linking.taggers import tagger_for
from guidedrag_graph.migration.run import migrate
from guidedrag_graph.schema.presets import PRESETS
from tests.conftest import wipe
from tests.probes import CountingDriver

pytestmark = pytest.mark.neo4j

DOCUMENTS = {
    "d-ada": "Ada Lovelace",
    "d-mercury": "Mercury (planet)",
    "d-nyc": "New York City",
    "d-asch": "Aschenbrödel",
    "d-brand": "Brand (play)",
    "d-misc": "Miscellany",
}
CHUNKS = [
    ("ada-1", "d-ada", "Ada Lovelace was born in London.", ["Ada Lovelace", "London"]),
    ("ada-2", "d-ada", "Ada Lovelace wrote the notes.", ["Ada Lovelace"]),
    ("london-1", "d-misc", "London is a capital.", ["London", "capital"]),
    ("london-2", "d-misc", "Flights from London to New York.", ["London", "New York"]),
    ("paris-1", "d-misc", "Paris is the capital of France.", ["Paris", "France", "capital"]),
    ("nyc-1", "d-nyc", "New York City lies in New York.", ["New York City", "New York", "York"]),
    ("mercury-1", "d-mercury", "Mercury is the smallest planet.", ["Mercury (planet)"]),
    (
        "mercury-2",
        "d-misc",
        "Mercury is a metal; Mercury Records a label.",
        ["Mercury (element)", "Mercury Records"],
    ),
    ("asch-1", "d-asch", "Aschenbrödel is a ballet.", ["Aschenbrödel"]),
    ("brand-1", "d-brand", "Brand is a play by Ibsen.", ["Brand (play)", "Brand"]),
    ("jaguar-1", "d-misc", "The jaguar; the Jaguar car.", ["Jaguar (animal)", "Jaguar (car)"]),
    ("stop-1", "d-misc", "Words that are no names.", ["The", "Who", "it", "ab", "US"]),
]


def _write_bundle(path: Path) -> Path:
    def jsonl(name: str, rows: list[dict[str, Any]]) -> None:
        (path / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")

    jsonl("documents.jsonl", [{"id": k, "title": v} for k, v in DOCUMENTS.items()])
    jsonl(
        "chunks.jsonl",
        [
            {"id": cid, "document_id": doc, "text": text, "position": i, "entities": ents}
            for i, (cid, doc, text, ents) in enumerate(CHUNKS)
        ],
    )
    jsonl(
        "entities.jsonl",
        [{"name": "Ada Lovelace", "aliases": ["Countess of Lovelace", "Augusta Ada King"]}],
    )
    return path


@pytest.fixture(scope="module")
def linker_kb(
    driver: Driver,
    main_settings: Settings,
    tmp_path_factory: pytest.TempPathFactory,
    embedder: Embedder,
) -> Driver:
    wipe(driver)
    migrate(driver, main_settings, PRESETS["guidedrag"])
    bundle = _write_bundle(tmp_path_factory.mktemp("linker_kb"))
    load_bundle(driver, main_settings, PRESETS["guidedrag"], bundle, embedder=embedder)
    driver.execute_query("CALL db.awaitIndexes(120)")
    return driver


@pytest.fixture
def linker(linker_kb: Driver, settings: Settings) -> EntityLinker:
    tagger = tagger_for("linker", GraphContext.open(settings, linker_kb))
    assert isinstance(tagger, EntityLinker)
    return tagger


# --- without the database -------------------------------------------------------------------


def test_spans_drop_possessives_and_skip_stop_words() -> None:
    spans = {s.text: s for s in question_spans("Who was Ada Lovelace's father?")}
    assert "ada lovelace" in spans["Ada Lovelace's"].keys
    assert "Who was" not in spans and "Who" not in spans  # stop words only
    assert spans["Ada Lovelace's"].proper and not spans["father"].proper
    curly = {s.text: s for s in question_spans("Ada Lovelace’s notes")}
    assert "ada lovelace" in curly["Ada Lovelace’s"].keys
    golden = {s.text: s for s in question_spans("Who played for Golden State?")}
    assert golden["State"].partial and not golden["Golden State"].partial


def test_fold_and_fulltext_query() -> None:
    assert fold("Aschenbrödel") == fold("ASCHENBRODEL") == "aschenbrodel"
    assert fold("Greenfield-Central  High") == "greenfield central high"
    question = 'Is "Tekeze" a river~?'
    assert fulltext_query(question, question_spans(question)) == "tekeze~1 river"
    hostile = 'Who is `x`? ~*^"\\ AND OR NOT'
    assert not any(ch in fulltext_query(hostile, question_spans(hostile)) for ch in '`"\\^*')


# --- against Neo4j --------------------------------------------------------------------------


def test_names_and_aliases_in_any_case_and_spacing(linker: EntityLinker) -> None:
    assert linker.tag("Where was Ada Lovelace born?") == ["Ada Lovelace"]
    assert linker.tag("where was ADA   lovelace born") == ["Ada Lovelace"]
    assert linker.tag("Who was Ada Lovelace's father?") == ["Ada Lovelace"]
    assert linker.tag("Where was the Countess of Lovelace born?") == ["Ada Lovelace"]
    assert linker.tag("where was AUGUSTA ada   KING born?") == ["Ada Lovelace"]
    links = linker.link("Where was the countess of  LOVELACE born?")
    assert [(lk.name, lk.kind) for lk in links] == [("Ada Lovelace", "alias")]


def test_longest_span_wins_and_hides_what_it_contains(linker: EntityLinker) -> None:
    assert linker.tag("Which museums are in New York City?") == ["New York City"]
    tags = linker.tag("Is New York bigger than York?")
    assert set(tags) == {"New York", "York"}


def test_rarer_entity_first(linker: EntityLinker) -> None:
    # London: 3 mentions, Paris: 1 (neither has a document of its own).
    assert linker.tag("Is London older than Paris?") == ["Paris", "London"]
    assert linker.tag("Is Paris older than London?") == ["Paris", "London"]
    # An entity a document is about comes before both.
    assert linker.tag("Did Ada Lovelace prefer London or Paris?") == [
        "Ada Lovelace",
        "Paris",
        "London",
    ]


def test_disambiguated_names(linker: EntityLinker) -> None:
    # "Mercury" names "Mercury (planet)" (the one with a document) when nothing longer matches.
    assert linker.tag("How far is Mercury from the Sun?")[0] == "Mercury (planet)"
    assert linker.tag("Who signed with Mercury Records?") == ["Mercury Records"]
    # The entity a document is about beats its bare homonym; the homonym is an alternate.
    assert linker.tag("Who wrote Brand?") == ["Brand (play)"]
    links = linker.link("Who wrote Brand?")
    assert [(lk.name, lk.alternate) for lk in links] == [("Brand (play)", False), ("Brand", True)]
    # A disambiguator the question repeats chooses the sense.
    assert linker.tag("What does the Jaguar animal eat?") == ["Jaguar (animal)"]
    assert linker.tag("Who builds the Jaguar car?") == ["Jaguar (car)"]


def test_names_without_their_accents(linker: EntityLinker) -> None:
    assert linker.tag("Who composed Aschenbrodel?") == ["Aschenbrödel"]
    assert [lk.kind for lk in linker.link("Who composed ASCHENBRODEL?")] == ["variant"]


def test_stop_words_short_and_generic_names(linker: EntityLinker) -> None:
    # "The", "Who", "it" are entities of this KB, but stop words; "ab" is too short.
    assert linker.tag("Who is it and what was the ab?") == []
    # "US" is written as an acronym; the lone common noun "capital" yields to a proper name.
    assert linker.tag("What is the capital of the US?") == ["US"]
    assert linker.tag("What is the capital of France?") == ["France"]
    # ... but is found when the question names nothing else.
    assert linker.tag("what is a capital?") == ["capital"]


def test_question_naming_no_entity(linker: EntityLinker) -> None:
    assert linker.tag("What is the meaning of life?") == []
    assert linker.tag("?!") == []
    assert linker.tag("") == []
    assert linker.tag("(+-&&||!)") == []


def test_hostile_question_text_is_never_spliced(linker_kb: Driver, settings: Settings) -> None:
    counting = CountingDriver(linker_kb)
    linker = EntityLinker(GraphContext.open(settings, counting))  # type: ignore[arg-type]
    nodes = linker_kb.execute_query("MATCH (n) RETURN count(n) AS n").records[0]["n"]
    hostile = [
        "Ada Lovelace' }) MATCH (n) DETACH DELETE n //",
        'Ada Lovelace" RETURN 1 UNION MATCH (n) DETACH DELETE n RETURN 1 //',
        "Who is `Ada Lovelace`?\nMATCH (n) DETACH DELETE n;\r\n// London",
        'Ada Lovelace\\"~ AND OR NOT ( [ {London}: *?^',
    ]
    for question in hostile:
        assert "Ada Lovelace" in linker.tag(question)
    assert linker.tag('London" OR name:*') == ["London"]
    assert counting.queries and all(
        "DELETE" not in q and "Lovelace" not in q for q in counting.queries
    )
    after = linker_kb.execute_query("MATCH (n) RETURN count(n) AS n").records[0]["n"]
    assert after == nodes


def test_linker_is_the_default_tagger(settings: Settings) -> None:
    assert Settings(_env_file=None).tagger == "linker"  # type: ignore[call-arg]
    assert settings.tagger == "linker"


def test_ask_auto_semantics_on_the_sample_kb(
    sample_db: Driver, settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)  # no stray .env
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GUIDEDRAG_TAGGER"):
        monkeypatch.delenv(name, raising=False)
    env = {
        "NEO4J_URI": settings.neo4j_uri,
        "NEO4J_PASSWORD": settings.neo4j_password.get_secret_value(),
        "NEO4J_DATABASE": settings.neo4j_database,
    }
    question = "What is the name of the waterfall in the country where the Bubye River is found?"
    result = CliRunner().invoke(cli, ["ask", question, "--auto-semantics", "-k", "2"], env=env)
    assert result.exit_code == 0, result.output
    assert "auto-semantics (linker tagger): Bubye River" in result.output
    selection = [line for line in result.output.splitlines() if line.startswith("selection:")]
    assert selection and "Bubye River" in selection[0]
    assert "No LLM is set" in result.output
    nothing = CliRunner().invoke(
        cli, ["retrieve", "What is the meaning of life?", "--auto-semantics"], env=env
    )
    assert nothing.exit_code == 0, nothing.output
    assert "auto-semantics (linker tagger): no entity found" in nothing.output
