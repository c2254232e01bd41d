"""2Wiki converter on a tiny fixture (tests/fixtures/2wiki): data/2wiki/README.md's recipe."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from guidedrag_graph.cli import cli
from guidedrag_graph.kb import read_bundle
from guidedrag_graph.kb.twowiki import alias_of, chunk_id_for, convert_2wiki, names_in

FIXTURE = Path(__file__).parent / "fixtures" / "2wiki"


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    out = tmp_path_factory.mktemp("2wiki") / "bundle"
    return out, convert_2wiki(FIXTURE, out)


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def _chunk(title: str) -> str:
    corpus = json.loads((FIXTURE / "2wikimultihopqa_corpus.json").read_text("utf-8"))
    return chunk_id_for(title, next(d["text"] for d in corpus if d["title"] == title))


def test_alias_is_the_title_without_its_parenthetical() -> None:
    assert alias_of("Do You Believe? (film)") == "Do You Believe?"
    assert alias_of("Blood Street") is None


def test_names_in_matches_titles_and_unambiguous_aliases_case_sensitively() -> None:
    forms = {"Paris": "Paris", "Do You Believe?": "Do You Believe? (film)", "Jon Gunn": "Jon Gunn"}
    text = "Jon Gunn made Do You Believe? in paris, then Paris."
    assert names_in(text, forms) == ["Jon Gunn", "Do You Believe? (film)", "Paris"]
    # a form inside a longer capitalised name names nothing
    forms["Princess"] = "Princess (2010 film)"
    assert names_in("Princess Adrienne, Princess of Cambodia, Paris-Plage.", forms) == []
    assert names_in("She saw Princess, then the Princess of", forms) == ["Princess (2010 film)"]


def test_bundle_follows_the_recipe(converted: tuple[Path, Any]) -> None:
    out, report = converted
    bundle = read_bundle(out)
    assert len(bundle.documents) == len(bundle.chunks) == 9
    entities = {e.name: e for e in bundle.entities}
    assert entities["Do You Believe? (film)"].aliases == ("Do You Believe?",)
    mentions = {
        c.id: {e.name for e in bundle.entities if e.id in bundle.chunk_entity_ids[c.id]}
        for c in bundle.chunks
    }
    assert mentions[_chunk("Blood Street")] == {"Blood Street", "Leon Isaac Kennedy", "Paris"}
    # the alias names its film; "John Smith" is two titles' alias, so it names neither
    assert mentions[_chunk("Jon Gunn")] == {"Jon Gunn", "Do You Believe? (film)"}
    assert mentions[_chunk("Paris")] == {"Paris", "France"}  # "paris" in lower case is no name
    relations = {(r["head"], r["type"], r["tail"]) for r in _rows(out / "relations.jsonl")}
    assert ("Jon Gunn", "links to", "Do You Believe? (film)") in relations
    typed = {t for t in relations if t[1] != "links to"}
    assert typed == {
        ("Blood Street", "director", "Leon Isaac Kennedy"),
        ("Do You Believe? (film)", "director", "Jon Gunn"),  # the head is the title's alias
    }
    assert report.dropped == {
        "evidence triple: an end is no title (a value, or not in the corpus)": 3
    }
    assert "2WikiMultihopQA" in (out / "CREDITS.md").read_text("utf-8")


def test_gold_and_semantics(converted: tuple[Path, Any]) -> None:
    out, _ = converted
    questions = {q.id: q for q in read_bundle(out).questions}
    composed = questions["q-compositional"]
    assert composed.gold_chunk_ids == [_chunk("Leon Isaac Kennedy")]  # holds "American"
    assert set(composed.all_gold_chunk_ids) == {
        _chunk("Blood Street"),
        _chunk("Leon Isaac Kennedy"),
    }
    assert composed.semantics.entities == ("Blood Street",)
    assert composed.semantics.relations == ("DIRECTOR",) and composed.semantics.relational
    compared = questions["q-comparison"]
    assert compared.semantics.entities == ("Do You Believe? (film)",)  # never the answer
    assert compared.semantics.relations == ()
    assert compared.gold_chunk_ids == [_chunk("Blood Street")]
    yes_no = questions["q-yes-no"]  # the answer is in no paragraph: every supporting one is gold
    assert (
        set(yes_no.gold_chunk_ids)
        == set(yes_no.all_gold_chunk_ids)
        == {
            _chunk("Blood Street"),
            _chunk("Do You Believe? (film)"),
        }
    )
    assert yes_no.semantics.entities == ("Do You Believe? (film)", "Blood Street")
    assert yes_no.semantics.complexity == 2


def test_cli_converts(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["datasets", "2wiki", str(FIXTURE), str(tmp_path / "b"), "--json"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["counts"]["questions"] == 3
