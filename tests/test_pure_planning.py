"""Planning has no I/O (issue 37, deliverable 2): a request planned from facts written here as
plain data — what the sample KB's names resolve to, what the server can do, a scope's size —
with no driver at all, gives the query and the parameters the pipeline sends for the same
request on Neo4j (recorded by wrapping the one read, ``GraphContext.read``).

The facts are the sample KB's and the server line's (``FACTS_BY_LINE``); the rank plugin is off
so that its cache budget, a fact of the machine, is not one of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.pipeline.request_plan import Facts, auto_tiers, selected
from guidedrag_graph.retrieval.facts import RankFacts
from guidedrag_graph.retrieval.filters import compile_filter
from guidedrag_graph.retrieval.ordering import RankOrder
from guidedrag_graph.retrieval.plans import plan_ranking, plan_sized, scope_notes
from guidedrag_graph.schema.presets import schema_for
from guidedrag_graph.selection import nodes as A
from guidedrag_graph.selection.parser import parse
from guidedrag_graph.selection.primitives import Resolved
from guidedrag_graph.selection.scope import SCOPE_VARIABLE, CompiledScope, Scope, scope_prelude
from guidedrag_graph.semantics import Semantics
from guidedrag_graph.steering.policy import SteeringPolicy
from guidedrag_graph.steering.tiers import plan_auto

pytestmark = pytest.mark.neo4j

JOURNAL = "Journal of Psychotherapy Integration"
QUESTION = "Who was the first president of the association which published " + JOURNAL + "?"
STATED = Semantics(entities=(JOURNAL,), relations=("PUBLISHED_BY",))
WEIGHTS = SteeringPolicy.default().tier_weights(STATED)  # the default policy's, as GuidedRAG's
SELECTION = f"entity('{JOURNAL}')"
SCOPE = "document('Journal of Psychotherapy Integration')"
# the same chunk as a property scope on a property the sample KB's index declares (c.id)
PROPERTY_SCOPE = {"filters": {"id": "mq-7e7082f782639c78"}}
FILTERS = {"id": {"$like": "mq-"}}
K = 4

# --- the facts, as plain data --------------------------------------------------------------
# What the sample KB's names resolve to (the entity's id, its relation types) ...
JOURNAL_IDS: tuple[str, ...] = ("journal of psychotherapy integration",)
RESOLVED_BY_TEXT: dict[str, Resolved] = {
    f"entity('{JOURNAL}')": Resolved(ids=JOURNAL_IDS),
    f"hop('{JOURNAL}', ['PUBLISHED_BY'])": Resolved(ids=JOURNAL_IDS, types=("PUBLISHED_BY",)),
    f"near('{JOURNAL}')": Resolved(ids=JOURNAL_IDS),
    f"khop('{JOURNAL}', 1)": Resolved(ids=JOURNAL_IDS),
    f"document('{JOURNAL}')": Resolved(ids=("wiki:" + JOURNAL,)),
}
ENTITY_CHUNKS = 1  # the chunks mentioning the journal: the size soft steering reads first
SCOPE_CHUNKS, KB_CHUNKS = 1, 397  # the scope's chunks, and the KB's
# ... and what each server line can do, with the plugin off.
FACTS_BY_LINE: dict[str, dict[str, Any]] = {
    "2026.06+": {
        "u_search": "search",
        "search_in_filter": True,
        "exact_max": 500,
        "vector_filter_properties": frozenset({"id"}),  # the sample KB's index: WITH [c.id]
    },
    "2026.01+": {"u_search": "search", "search_in_filter": False, "exact_max": 1_000},
    "5.26": {"u_search": "index", "search_in_filter": False, "exact_max": 1_000},
}
# a caller's vector (as neo4j-graphrag passes one), in values a float32 holds exactly
VECTOR = [((i * 37) % 101 - 50) / 128.0 for i in range(384)]


def _line(version: str) -> str:
    parts = tuple(int(p) for p in version.split(".")[:2])
    return "2026.06+" if parts >= (2026, 6) else "2026.01+" if parts >= (2026, 1) else "5.26"


def rank_facts(version: str) -> RankFacts:
    return RankFacts(
        schema=schema_for("guidedrag"),
        vector_index_name="chunk_embedding",
        rank_plugin=False,
        rank_tiers_plugin=False,
        tier_list_max=3_000,
        search_in_unready="",
        soft_boost=0.05,
        server_version=version,
        scope_exact_max=10_000,  # the settings' default: SCOPE_EXACT_BUDGET
        **FACTS_BY_LINE[_line(version)],
    )


def resolved_for(expr: A.Expr) -> dict[A.Expr, Resolved]:
    return {leaf: RESOLVED_BY_TEXT[leaf.to_text()] for leaf in expr.leaves()}


def order() -> RankOrder:
    return RankOrder(vector=VECTOR, k=K, fetch=K, ranker="cosine", threshold=None, lambda_=0.5)


# --- what the pipeline sends ---------------------------------------------------------------
class Recorder:
    """Every read a ``GuidedRAG`` sends, as (template name, query, parameters): the real read,
    wrapped on the instance's one ``GraphContext``."""

    def __init__(self, rag: GuidedRAG) -> None:
        self.reads: list[tuple[str, str, dict[str, Any]]] = []
        real = rag.graph.read

        def read(query: str, params: dict[str, Any] | None = None, *, name: str = "query") -> Any:
            self.reads.append((name, query, dict(params or {})))
            return real(query, params, name=name)

        rag.graph.read = read  # type: ignore[method-assign]

    def last(self, name: str) -> tuple[str, dict[str, Any]]:
        sent = [(q, p) for n, q, p in self.reads if n == name]
        assert sent, f"no {name} read among {[n for n, _, _ in self.reads]}"
        return sent[-1]


@pytest.fixture
def plain_settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"rank_plugin": "off"})


@pytest.fixture
def server_version(neo4j_server: tuple[str, str, str], sample_db: Driver) -> str:
    version = neo4j_server[2]
    if version == "external":
        version = sample_db.execute_query(
            "CALL dbms.components() YIELD versions RETURN versions[0] AS v"
        ).records[0]["v"]
    return str(version)


@pytest.fixture
def recorded(
    sample_db: Driver, plain_settings: Settings, embedder: Embedder
) -> Iterator[tuple[GuidedRAG, Recorder]]:
    with GuidedRAG(plain_settings, driver=sample_db, embedder=embedder) as rag:
        yield rag, Recorder(rag)


def _same(sent: tuple[str, dict[str, Any]], query: str, params: dict[str, Any]) -> None:
    assert sent[0] == query
    assert sent[1] == params


def test_auto_tiers_planned_from_plain_facts(
    recorded: tuple[GuidedRAG, Recorder], server_version: str
) -> None:
    rag, recorder = recorded
    rag.retrieve(QUESTION, semantics=STATED, k=K, query_vector=VECTOR)
    facts = Facts(rank_facts(server_version), _auto_resolved(), hop_cap=10_000)
    tiers = auto_tiers(STATED, WEIGHTS, facts, facts.rank.schema)
    plan = plan_ranking(order(), tiers, facts.rank)
    assert plan.path == "boost" and plan.query is not None
    _same(recorder.last("retrieve_boost"), plan.query.cypher, plan.query.params)


def test_auto_tiers_filtered_from_plain_facts(
    recorded: tuple[GuidedRAG, Recorder], server_version: str
) -> None:
    rag, recorder = recorded
    rag.retrieve(QUESTION, semantics=STATED, k=K, query_vector=VECTOR, filters=FILTERS)
    facts = Facts(rank_facts(server_version), _auto_resolved(), hop_cap=10_000)
    tiers = auto_tiers(STATED, WEIGHTS, facts, facts.rank.schema, compile_filter(FILTERS))
    plan = plan_ranking(order(), tiers, facts.rank)
    assert plan.query is not None
    _same(recorder.last("retrieve_boost"), plan.query.cypher, plan.query.params)


def test_hard_selection_planned_from_plain_facts(
    recorded: tuple[GuidedRAG, Recorder], server_version: str
) -> None:
    rag, recorder = recorded
    rag.retrieve(QUESTION, selection=SELECTION, steering="hard", k=K, query_vector=VECTOR)
    expr = parse(SELECTION)
    facts = Facts(rank_facts(server_version), resolved_for(expr), hop_cap=10_000)
    plan = plan_ranking(order(), selected(expr, facts, facts.rank.schema), facts.rank)
    assert plan.query is not None
    _same(recorder.last(plan.query.name), plan.query.cypher, plan.query.params)


def test_soft_selection_planned_in_two_rounds_from_plain_facts(
    recorded: tuple[GuidedRAG, Recorder], server_version: str
) -> None:
    rag, recorder = recorded
    rag.retrieve(QUESTION, selection=SELECTION, steering="soft", k=K, query_vector=VECTOR)
    expr = parse(SELECTION)
    facts = Facts(rank_facts(server_version), resolved_for(expr), hop_cap=10_000)
    compiled = selected(expr, facts, facts.rank.schema)
    first = plan_ranking(order(), compiled, facts.rank, steering="soft")
    assert first.path == "sized" and first.query is not None
    _same(recorder.last("selection_size"), first.query.cypher, first.query.params)
    second = plan_sized(
        order(), compiled, facts.rank, steering="soft", path=None, size=ENTITY_CHUNKS
    )
    assert second.query is not None
    _same(recorder.last(second.query.name), second.query.cypher, second.query.params)


def test_scoped_selection_planned_from_plain_facts(
    sample_db: Driver, plain_settings: Settings, embedder: Embedder, server_version: str
) -> None:
    with GuidedRAG(plain_settings, driver=sample_db, embedder=embedder, scope=SCOPE) as rag:
        recorder = Recorder(rag)
        rag.retrieve(QUESTION, selection=SELECTION, steering="hard", k=K, query_vector=VECTOR)
    compiled_scope = _compiled_scope()
    expr = parse(SELECTION)
    facts = Facts(
        rank_facts(server_version), resolved_for(expr), hop_cap=10_000, scope=compiled_scope
    )
    plan = plan_ranking(order(), selected(expr, facts, facts.rank.schema), facts.rank)
    assert plan.query is not None
    _same(recorder.last(plan.query.name), plan.query.cypher, plan.query.params)


def test_auto_inside_a_scope_planned_in_the_index_from_plain_facts(
    sample_db: Driver, plain_settings: Settings, embedder: Embedder, server_version: str
) -> None:
    """auto inside a trusted scope (issue 35, in issue 37's pure planning): where the index
    filters by chunk id (2026.06+, the sample KB's index declares c.id) U's candidates come from
    a SEARCH filtered by the scope's ids (``retrieve_boost`` scope=index), elsewhere from the
    scope ranked exactly up to the scope budget (scope=exact): the same query, parameters and
    scope note as the pipeline's, from literal facts."""
    with GuidedRAG(plain_settings, driver=sample_db, embedder=embedder, scope=SCOPE) as rag:
        recorder = Recorder(rag)
        result = rag.retrieve(QUESTION, semantics=STATED, k=K, query_vector=VECTOR)
    facts = Facts(
        rank_facts(server_version), _auto_resolved(), hop_cap=10_000, scope=_compiled_scope()
    )
    plan = plan_ranking(order(), auto_tiers(STATED, WEIGHTS, facts, facts.rank.schema), facts.rank)
    assert plan.path == "boost" and plan.query is not None
    in_index = _line(server_version) == "2026.06+"
    assert plan.extra["scope"] == ("index" if in_index else "exact")
    assert ("universe_ids" in plan.query.cypher) == in_index
    _same(recorder.last("retrieve_boost"), plan.query.cypher, plan.query.params)
    sizes = list(result.tier_sizes.values())
    noted = scope_notes(plan.extra["scope"], plan.query.params, sizes)
    assert len(noted) == 1 and noted[0].startswith(f"scope: its {SCOPE_CHUNKS} chunks ranked")
    assert noted[0] in result.notes


def test_auto_inside_a_property_scope_planned_by_its_predicate_from_plain_facts(
    sample_db: Driver, plain_settings: Settings, embedder: Embedder, server_version: str
) -> None:
    """auto inside a property scope on a declared property (issue 35's ``scope=property``, in
    issue 37's pure planning): where the server filters a SEARCH and the index declares the
    scope's properties (``RankFacts.vector_filter_properties``), U's candidates come from a
    SEARCH filtered by the scope's own predicate (``cypher/scope_search.cypher``, no id list);
    elsewhere the scope is ranked exactly. The same query, parameters and note as the
    pipeline's, from literal facts."""
    with GuidedRAG(
        plain_settings, driver=sample_db, embedder=embedder, scope=PROPERTY_SCOPE
    ) as rag:
        recorder = Recorder(rag)
        result = rag.retrieve(QUESTION, semantics=STATED, k=K, query_vector=VECTOR)
    facts = Facts(
        rank_facts(server_version), _auto_resolved(), hop_cap=10_000, scope=_property_scope()
    )
    plan = plan_ranking(order(), auto_tiers(STATED, WEIGHTS, facts, facts.rank.schema), facts.rank)
    assert plan.path == "boost" and plan.query is not None
    by_predicate = _line(server_version) == "2026.06+"
    assert plan.extra["scope"] == ("property" if by_predicate else "exact")
    assert ("scope_top" in plan.query.cypher) == by_predicate
    assert "universe_ids" not in plan.query.cypher
    _same(recorder.last("retrieve_boost"), plan.query.cypher, plan.query.params)
    sizes = list(result.tier_sizes.values())
    noted = scope_notes(plan.extra["scope"], plan.query.params, sizes)
    assert len(noted) == 1 and noted[0].startswith(f"scope: its {SCOPE_CHUNKS} chunks ranked")
    assert noted[0] in result.notes


def _property_scope() -> CompiledScope:
    """``PROPERTY_SCOPE`` compiled as ``Selector`` compiles a property scope alone."""
    scope = Scope.parse(PROPERTY_SCOPE, where="scope=")
    assert scope is not None
    chunk_filter = scope.chunk_filter()
    assert chunk_filter is not None
    prelude = chunk_filter.universe(schema_for("guidedrag"), SCOPE_VARIABLE)
    params = dict(chunk_filter.params)
    return CompiledScope(scope, prelude, params, size=SCOPE_CHUNKS, whole=False)


def _compiled_scope() -> CompiledScope:
    """The sample KB's scope, compiled from its resolution written as a literal."""
    scope = Scope.parse(SCOPE, where="scope=")
    assert scope is not None
    _, prelude, params = scope_prelude(
        scope.expr, resolved_for(scope.expr), schema_for("guidedrag"), hop_cap=10_000
    )
    return CompiledScope(scope, prelude, params, size=SCOPE_CHUNKS, whole=SCOPE_CHUNKS == KB_CHUNKS)


def _auto_resolved() -> dict[A.Expr, Resolved]:
    plan = plan_auto(STATED, WEIGHTS)
    resolved: dict[A.Expr, Resolved] = {}
    for tier in plan.tiers:
        resolved.update(resolved_for(tier.expr))
    return resolved
