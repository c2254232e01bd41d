"""A trusted scope hides names, suggestions and triplets (issue 35; docs/security.md, "What a
scope hides"): the rules one by one on the two-tenant KB (``tests/tenant_kb.py``), then the
leak suite's short form (``tests/scope_leaks.py``; ``scripts/leak_suite.py`` is the long one).
"""

from __future__ import annotations

import logging
import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from neo4j import Driver

from guidedrag_graph.augmentation import Augmenter
from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.selection.resolver import Resolver
from guidedrag_graph.selection.scope import Scope
from guidedrag_graph.selection.scope_names import scope_names, selector_in_scope
from guidedrag_graph.semantics import Semantics
from tests import scope_leaks as L
from tests import tenant_kb as T

pytestmark = pytest.mark.neo4j


@pytest.fixture(scope="module")
def tenants(
    driver: Driver, main_settings: Settings, tmp_path_factory: pytest.TempPathFactory
) -> Driver:
    L.load_if_needed(driver, main_settings, tmp_path_factory.mktemp("tenants"))
    return driver


@pytest.fixture
def rags(
    tenants: Driver, settings: Settings, embedder: Embedder
) -> Iterator[tuple[GuidedRAG, GuidedRAG]]:
    """(the whole KB, scoped to tenant A): the same driver and warm state."""
    with GuidedRAG(settings, driver=tenants, embedder=embedder) as whole:
        whole.graph.data.clear()
        yield whole, whole.scoped(T.SCOPE_A)


def _shape(message: str, name: str) -> str:
    return message.replace(repr(name), "'NAME'")


def test_a_name_only_outside_the_scope_is_unknown_in_the_same_words(
    rags: tuple[GuidedRAG, GuidedRAG],
) -> None:
    whole, scoped = rags
    assert whole.retrieve("x", "entity('Zoltan Reyes')", steering="hard").chunks  # it exists
    hidden = scoped.retrieve("x", "entity('Zoltan Reyes')", steering="hard").empty
    absent = scoped.retrieve("x", "entity('Qzorv Plindam')", steering="hard").empty
    assert hidden is not None and absent is not None
    assert hidden.kind == absent.kind == "unknown_entity"
    assert _shape(hidden.message, "Zoltan Reyes") == _shape(absent.message, "Qzorv Plindam")
    # auto's stated-name abstention, the same words; an alias of B's, the same
    stated = scoped.retrieve("x", semantics=Semantics(entities=["Z. Reyes"])).empty
    assert stated is not None and stated.kind == "unknown_entity" and not stated.suggestions
    # a document of B's is unknown too, not "outside the scope"
    document = scoped.retrieve("x", "document('Tenant B ledger 0')", steering="hard").empty
    assert document is not None and document.kind != "empty_scope"
    assert "ledger 0" not in document.message.replace("'Tenant B ledger 0'", "")


def test_suggestions_come_only_from_inside_the_scope(rags: tuple[GuidedRAG, GuidedRAG]) -> None:
    whole, scoped = rags
    assert "Teodor Vass" in whole.selector.resolver.suggestions("Teodor Vas")  # B's, unscoped
    resolver = selector_in_scope(scoped.selector, scoped.scope).resolver
    assert resolver.suggestions("Teodor Vas") == ["Teodor Vasz"]
    assert resolver.suggestions("Brask Foundri") == []
    # at most `limit`, though ten times as many were asked of the index
    assert len(resolver.suggestions("Mills Lake Quay Bridge Orchard", limit=2)) == 2
    empty = scoped.retrieve("x", "entity('Teodor Vas')", steering="hard").empty
    assert empty is not None and empty.suggestions == ("Teodor Vasz",)
    assert "Teodor Vass" not in empty.message
    # relation types: B's own are neither known nor suggested
    assert "SMUGGLES_TO" in whole.selector.resolver.close_types("SMUGGLE_TO")
    assert "SMUGGLES_TO" not in resolver.close_types("SMUGGLE_TO")
    assert resolver.resolve_types(("SMUGGLES_TO", "SUPPLIES")) == (["SUPPLIES"], ["SMUGGLES_TO"])
    assert whole.selector.resolver.forgiving_type("smuggled to") == "SMUGGLES_TO"
    assert resolver.forgiving_type("smuggled to") is None


def test_a_bare_question_links_only_entities_the_scope_mentions(
    rags: tuple[GuidedRAG, GuidedRAG],
) -> None:
    whole, scoped = rags
    question = "Did Zoltan Reyes smuggle crates to Port Vela?"
    linked = [d["entity"] for d in whole.retrieve(question).linked if "entity" in d]
    assert "Zoltan Reyes" in linked
    result = scoped.retrieve(question)
    assert [d["entity"] for d in result.linked if "entity" in d] == ["Port Vela"]
    assert "Zoltan Reyes" in result.unknown_names  # reported as unknown, as a name the KB lacks
    assert not any(d.get("relation") == "SMUGGLES_TO" for d in result.linked)


def test_triplets_need_evidence_in_scope_or_both_ends_mentioned_in_it(
    rags: tuple[GuidedRAG, GuidedRAG],
) -> None:
    whole, _ = rags
    hubs = Semantics(entities=tuple(T.HUBS), relational=True)
    chunks = whole.retrieve("hubs", semantics=hubs, steering="soft", k=20).chunks
    augmenter = Augmenter(whole.graph)
    every = {(t.head, t.type, t.tail) for t in augmenter.graph_context(chunks, hubs)[0]}
    compiled = whole.selector.scope(Scope.parse(T.SCOPE_A, where="test"))
    in_a = [c for c in chunks if c.id in T.A_CHUNK_IDS]
    stated = Semantics(entities=(*T.HUBS, "Zoltan Reyes"), relational=True)
    shown = augmenter.graph_context(in_a, stated, compiled)[0]
    got = {(t.head, t.type, t.tail): t.source_chunk for t in shown}
    # evidence in B between shared hubs: in the unscoped prompt, never in the scoped one
    for b_fact in [
        ("Northwind Holdings", "BRIBED", "Ilsa Marr"),
        ("Ilsa Marr", "SUPPLIES", "River Osk"),
    ]:
        assert b_fact in every and b_fact not in got
    # no evidence chunk, both ends mentioned in scope: shown
    assert got[("Port Vela", "LOCATED_IN", "River Osk")] is None
    # no evidence chunk, an end only B mentions (even when the caller names it): hidden
    assert not any("Zoltan Reyes" in (h, tl) for h, _, tl in got)
    assert all(src is None or src in T.A_CHUNK_IDS for src in got.values())
    assert ("Northwind Holdings", "LOCATED_IN", "Port Vela") in got


def test_scope_names_are_read_once_per_kb_version_and_scope(
    rags: tuple[GuidedRAG, GuidedRAG], caplog: pytest.LogCaptureFixture
) -> None:
    _, scoped = rags
    caplog.set_level(logging.DEBUG, logger="guidedrag_graph.db.reads")
    for question in ("Who owns Ardent Mills?", "Who supplies Northwind Holdings?"):
        assert scoped.retrieve(question).chunks
    reads = [r.getMessage() for r in caplog.records if r.name == "guidedrag_graph.db.reads"]
    assert sum(bool(re.search(r"\bscope_names\b", line)) for line in reads) == 1, reads


def test_a_name_outside_the_scope_is_not_asked_again(
    rags: tuple[GuidedRAG, GuidedRAG], caplog: pytest.LogCaptureFixture
) -> None:
    """Its being outside is kept like any answer about the data: asking again about it reads
    neither its resolution nor its suggestions (a 1%-of-documents scope made most stated names
    such names; each cost three reads per call before)."""
    _, scoped = rags
    stated = Semantics(entities=["Zoltan Reyes", "Teodor Vas"], relations=["SMUGGLES_TO"])
    relation = Semantics(entities=["Port Vela"], relations=["SMUGGLES_TO"])
    first = scoped.retrieve("x", semantics=stated, steering="hard")
    first_notes = scoped.retrieve("x", semantics=relation).notes
    caplog.set_level(logging.DEBUG, logger="guidedrag_graph.db.reads")
    again = scoped.retrieve("x", semantics=stated, steering="hard")
    assert again.empty is not None and first.empty == again.empty
    assert again.empty.kind == "unknown_entity"
    notes = scoped.retrieve("x", semantics=relation).notes  # auto forgives: A_rel dropped
    assert notes == first_notes and any("no relation type 'SMUGGLES_TO'" in n for n in notes)
    reads = [r.getMessage() for r in caplog.records if r.name == "guidedrag_graph.db.reads"]
    asked = {m.group(1) for line in reads if (m := re.match(r"read (\w+)", line))}
    assert not asked & {"resolve_entities", "suggest_entities", "relation_types"}, reads
    assert "inspect_labels" not in asked, reads  # the schema-fit diagnosis: once per view


def test_a_scope_too_large_to_hold_is_checked_per_request(
    rags: tuple[GuidedRAG, GuidedRAG],
) -> None:
    whole, scoped = rags
    compiled = whole.selector.scope(scoped.scope)
    assert compiled is not None
    held = scope_names(whole.graph, compiled)
    unheld = scope_names(whole.graph, compiled, max_entities=1)
    assert held.held and not unheld.held and unheld.total == held.total == len(T.A_NAMES)
    names = T.A_NAMES + T.B_ONLY
    assert unheld.keep_names(names) == held.keep_names(names) == T.A_NAMES
    types = T.SHARED_TYPES + T.A_TYPES + T.B_TYPES
    assert unheld.keep_types(types) == held.keep_types(types) == T.SHARED_TYPES + T.A_TYPES
    docs = ["ta-doc-0", "ta-doc-1", *T.B_DOC_IDS]
    assert unheld.keep_documents(docs) == held.keep_documents(docs) == ["ta-doc-0", "ta-doc-1"]
    ids = [str(r["id"]) for r in whole.graph.driver.execute_query(
        "MATCH (e:Entity) RETURN e.id AS id ORDER BY id").records]  # fmt: skip
    assert unheld.keep_ids(ids) == held.keep_ids(ids) and len(held.keep_ids(ids)) == len(T.A_NAMES)


def test_one_name_asks_a_scope_too_large_to_hold_once_per_read(
    rags: tuple[GuidedRAG, GuidedRAG], caplog: pytest.LogCaptureFixture
) -> None:
    """``Resolver.entity_ids`` (one name) sends each tier read's ids to an unheld scope once:
    an in-scope name's first-tier rows, narrowed, are its answer (they were narrowed again,
    a second ``scope_names_check`` with the rows already checked)."""
    whole, scoped = rags
    compiled = whole.selector.scope(scoped.scope)
    assert compiled is not None
    unheld = scope_names(whole.graph, compiled, max_entities=1)
    assert not unheld.held
    resolver = Resolver(whole.graph, scope=unheld)
    caplog.set_level(logging.DEBUG, logger="guidedrag_graph.db.reads")

    def checks() -> int:
        lines = [r.getMessage() for r in caplog.records if r.name == "guidedrag_graph.db.reads"]
        caplog.clear()
        return sum(bool(re.match(r"read scope_names_check\b", line)) for line in lines)

    assert resolver.entity_ids(T.A_NAMES[0])  # in scope, by its exact name
    assert checks() == 1
    assert resolver.entity_ids("Zoltan Reyes") == []  # only outside: the first tier's check
    assert checks() == 1
    assert resolver.entity_ids("Qzorv Plindam") == []  # nowhere: no row, nothing to check
    assert checks() == 0


def test_an_empty_scope_shows_no_name(rags: tuple[GuidedRAG, GuidedRAG]) -> None:
    whole, _ = rags
    # sized empty (a prelude that holds nothing), and empty before any query (no prelude)
    for text in ("source('no such tenant')", "entity('No Such Entity Anywhere')"):
        empty = Scope.parse(text, where="test")
        compiled = whole.selector.scope(empty)
        assert compiled is not None and compiled.empty
        names = scope_names(whole.graph, compiled)
        assert names.held and not (names.names or names.relation_types or names.documents)
        resolver = selector_in_scope(whole.selector, empty).resolver
        assert resolver.suggestions("Teodor Vas") == [] and resolver.entity_ids("Port Vela") == []


def test_leak_suite_short_form(tenants: Driver, settings: Settings, tmp_path: Path) -> None:
    """A few hundred hostile requests over every door, two through the CLI; every output
    scanned: no B chunk, entity name, triplet or suggestion anywhere."""
    rng = random.Random(35)
    batch = L.sample(rng, L.requests(rng), 240) + L.cli_requests()[:2]
    with L.opened_doors(settings, tenants, cli_cwd=tmp_path) as doors:
        figures = L.run(doors, batch)
    report = "\n".join(figures.lines())
    assert figures.requests >= 230 and figures.outputs > 2 * figures.requests, report
    assert set(figures.doors) >= {"retrieve", "ask", "mcp", "langchain", "llamaindex", "browser",
                                  "cli"}, report  # fmt: skip
    assert figures.leaks == 0, report


PROPERTY_SCOPE_A = '{"filters": {"id": {"$like": "ta-chunk-"}}}'  # tenant A by chunk property


def test_leak_suite_short_form_with_a_property_scope(
    tenants: Driver, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same hostile requests (a smaller sample) with tenant A set as a chunk property
    filter, the form a shared graph that marks its tenants on chunks uses."""
    monkeypatch.setattr(T, "SCOPE_A", PROPERTY_SCOPE_A)
    rng = random.Random(36)
    batch = L.sample(rng, L.requests(rng), 120)
    with L.opened_doors(settings, tenants, cli_cwd=None) as doors:
        figures = L.run(doors, batch)
    report = "\n".join(figures.lines())
    assert figures.requests >= 110 and figures.outputs > 2 * figures.requests, report
    assert figures.leaks == 0, report
