"""Ranking planned without I/O: from (what to rank, how it ends, the KB's facts) to the query
and its parameters, as plain functions with no driver in them.

Every query the retrieval stage sends is rendered here (``retrieve_*``, ``selection_size``,
``selection_members``) from a compiled selection, a ``RankOrder`` or its parts, and
``RankFacts`` (``retrieval/facts.py``); ``Retriever``/``Paths`` are the edge that gathers the
facts, sends each ``Query`` through ``GraphContext.read`` and reads the rows back. A ranking
that needs a read between two steps (a selection's size on servers without
``retrieve_planned``, the index post-filter's widening, soft steering's members) plans each
step from the previous step's rows: a second facts → plan round at the edge, never a read in
here. pyproject's import-linter contract holds this module (and ``facts.py``) to importing
neither ``neo4j`` nor ``guidedrag_graph.db`` nor ``guidedrag_graph.context``.

>>> plan = plan_ranking(order, compiled, facts, steering="hard")
>>> plan.query.name, plan.path
('retrieve_planned', 'planned')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.retrieval.auto_query import auto_query
from guidedrag_graph.retrieval.facts import (
    Plan,
    RankFacts,
    choose_path,
    scope_in_tiers,
    scope_partial,
)
from guidedrag_graph.retrieval.ordering import RankOrder
from guidedrag_graph.retrieval.selections import CompiledSelectionLike, CompiledTiersLike
from guidedrag_graph.templates import queries as templates
from guidedrag_graph.vocabulary import PATHS

# The rank procedure a 'plugin' path needs (context.RANK_PROCEDURE names the same).
RANK_PROCEDURE = "guidedrag.rank"
# Filtered SEARCH asks the index for this many times fetch_k and keeps the best fetch_k: the
# recall guard for large selections (filtered HNSW recall@5 fell to 0.93 at 10% selectivity
# with LIMIT k; a wider LIMIT widens the graph search). Not yet measured on clustered vectors:
# `benchmarks/planner_bench.py --clusters 200` reports recall with and without it.
SEARCH_IN_OVERFETCH = 4
# Post-filter path: first over-fetch factor over U, and the widest fetch before exact fallback.
POSTFILTER_FIRST = 10
# auto's tiers ranked from U's top (retrieve_boost): this factor's top first, POSTFILTER_FIRST's
# only when it holds fewer than fetch_k members of such a tier (the same ranking either way).
TIERS_FIRST = 2
POSTFILTER_MAX = 10_000


@dataclass(frozen=True)
class Query:
    """One read: the template's name (the read log's and the cache's key), the rendered text,
    its parameters, and how many of its rows are kept (``keep``: search_in over-fetches)."""

    name: str
    cypher: str
    params: dict[str, Any]
    keep: int | None = None


@dataclass(frozen=True)
class RankPlan:
    """How one ranking runs: the path (``planned``: the query picks exact or search_in itself;
    ``boost``: auto's tiers in one query; ``sized``: the size is read first, then
    ``plan_sized`` picks), its first query, and what the edge needs to finish it."""

    path: str
    steering: str
    query: Query | None  # None: soft steering over an empty selection sends nothing for it
    notes: tuple[str, ...] = ()
    size: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------- the queries
def u_query(facts: RankFacts, vector: list[float], fetch_k: int, with_embedding: bool) -> Query:
    """The vector index top ``fetch_k`` over every chunk (``SEARCH`` or the 5.26 procedure)."""
    variant = facts.variant("retrieve_search")
    cypher = templates.query(
        "retrieve_search",
        facts.schema,
        names={"vector_index": facts.vector_index_name},
        variant=variant,
    )
    extra = {"index_name": facts.vector_index_name} if variant["u_search"] == "index" else {}
    params = {
        **extra,
        "query_vector": vector,
        "fetch_k": int(fetch_k),
        "with_embedding": with_embedding,
    }
    return Query("retrieve_search", cypher, params)


def members_query(
    facts: RankFacts, selection: CompiledSelectionLike, candidate_ids: list[str]
) -> Query:
    """Which of ``candidate_ids`` the selection holds."""
    cypher = templates.query("selection_members", facts.schema, selection=selection.cypher)
    params = {**selection.params, "candidate_ids": candidate_ids}
    return Query("selection_members", cypher, params)


def size_query(facts: RankFacts, selection: CompiledSelectionLike) -> Query:
    """How many chunks the selection holds."""
    cypher = templates.query("selection_size", facts.schema, selection=selection.cypher)
    return Query("selection_size", cypher, dict(selection.params))


def planned_query(
    facts: RankFacts,
    vector: list[float],
    selection: CompiledSelectionLike,
    fetch_k: int,
    with_embedding: bool,
) -> Query:
    """``retrieve_planned`` (its plugin variant with the plugin): exact up to the facts'
    ``exact_max`` chunks, search_in beyond, decided by the query."""
    variant = facts.variant("retrieve_planned")
    cypher = templates.query(
        "retrieve_planned",
        facts.schema,
        selection=selection.cypher,
        names={"vector_index": facts.vector_index_name},
        variant=variant,
    )
    params: dict[str, Any] = {
        **selection.params,
        "query_vector": vector,
        "fetch_k": int(fetch_k),
        "wide_k": int(fetch_k) * SEARCH_IN_OVERFETCH,
        "exact_max": int(facts.need("exact_max")),
        "with_embedding": with_embedding,
    }
    if variant["rank"] == "plugin":
        params["embedding_property"] = facts.schema.chunk_embedding
    return Query("retrieve_planned", cypher, params)


def tiers_query(
    facts: RankFacts,
    compiled: CompiledTiersLike,
    vector: list[float],
    fetch: int,
    with_embedding: bool,
    limit: int | None = None,
) -> Query:
    """``retrieve_boost`` (its variants: the 5.26 index procedure, the plugin, the scope) for
    these tiers: each tier ranked exactly up to ``exact_max`` chunks; inside a trusted scope
    (or a request's filter), U in the index by its property predicate (``scope_search``) or
    by its ids, or exactly up to ``scope_exact_max`` (``scope_mode``)."""
    schema = facts.schema
    tiers = list(compiled.tiers)
    lists = {
        "tiers": [t.list_variable for t in tiers],
        "members": [t.member_variable for t in tiers],
    }
    params: dict[str, Any] = {
        **compiled.params,
        "query_vector": vector,
        "fetch_k": fetch,
        "u_fetch_k": fetch,
        "first_k": fetch * TIERS_FIRST,
        "wide_k": fetch * POSTFILTER_FIRST,
        "exact_max": int(facts.need("exact_max")),
        "tier_list_max": int(facts.need("tier_list_max")),
        "tier_weights": [float(t.weight) for t in tiers],
        "tier_names": [t.name or t.list_variable for t in tiers],
        "limit": fetch if limit is None else limit,
        "with_embedding": with_embedding,
        # filters (retrieval/filters.py): the tier every candidate must be in, else -1
        "universe": int(getattr(compiled, "universe", -1)),
    }
    variant = facts.variant("retrieve_boost")
    scope = scope_mode(facts, compiled)
    if scope != "unscoped":  # unscoped: the variant's default, the query as it always was
        variant = {**variant, "scope": scope}
    if scope == "exact":
        params["scope_exact_max"] = int(facts.need("scope_exact_max"))
    if scope == "unscoped" and variant["rank_tiers"] == "plugin" and facts.need("rank_auto_plugin"):
        return Query("retrieve_auto", *auto_query(facts, compiled.prelude, params, lists))
    # With the plugin, one guidedrag.rankTiers call scores the tiers from its float32 cache
    # (~1 µs per chunk instead of Cypher's ~45) and picks the candidates: the same ones.
    if variant["rank_tiers"] == "plugin":
        params["embedding_property"] = schema.chunk_embedding
    if variant["u_search"] == "index":
        params["index_name"] = facts.vector_index_name
    prelude = compiled.prelude
    if scope == "property":  # U's SEARCH filtered by the scope's own predicate
        prelude = f"{prelude}\n{scope_search(facts, compiled)}"
    cypher = templates.query(
        "retrieve_boost",
        schema,
        selection=prelude,
        names={"vector_index": facts.vector_index_name},
        lists=lists,
        variant=variant,
    )
    return Query("retrieve_boost", cypher, params)


def scope_mode(facts: RankFacts, compiled: CompiledTiersLike) -> str:
    """``retrieve_boost``'s ``scope`` variant for these tiers: ``facts.scope_in_tiers`` when
    they rank inside a trusted scope (``ScopedTiers``) or a request's filter without one
    (``FilteredTiers.filtered``; ``property`` where the universe's predicate is one the index's
    SEARCH takes, their ``search_properties``), else ``unscoped`` (the template's default
    variant, ``none``)."""
    if not getattr(compiled, "in_scope", False) and not getattr(compiled, "filtered", False):
        return "unscoped"
    return scope_in_tiers(facts, getattr(compiled, "search_properties", None))


def scope_search(facts: RankFacts, compiled: Any) -> str:
    """``cypher/scope_search.cypher`` around the universe's predicate: binds ``scope_top``,
    the index's top ``$wide_k`` chunks that pass it (``ScopedTiers.search_predicate``)."""
    names = {"vector_index": facts.vector_index_name}
    head = templates.fragment("scope_search", "open", facts.schema, names=names)
    tail = templates.fragment("scope_search", "close", facts.schema, names=names)
    return f"{head} {compiled.search_predicate()}\n{tail}"


def scope_notes(
    mode: str, params: dict[str, Any], sizes: list[int], filtered: bool = False
) -> list[str]:
    """What auto's ranking inside a scope says about how its universe was ranked (``mode``:
    ``scope_mode``; ``params``/``sizes``: the tiers query's parameters and the tier sizes it
    read): exactly, or in the vector index by the scope's predicate or ids, or (the scope past
    every exact budget and no filtered SEARCH: its part comes from the index's top over the KB)
    that recall may be partial. Nothing for an unscoped ranking. ``filtered``: the tiers are a
    request's filter without a scope (``FilteredTiers``, ranked the same way; ``plan_tiers``'
    ``extra['filtered']``): the notes start ``filters:``."""
    at = int(params["universe"])
    if mode == "unscoped" or not 0 <= at < len(sizes):
        return []
    notes = _scope_notes(mode, params, sizes[at])
    what = "filters" if filtered else "scope"
    return notes if what == "scope" else [n.replace("scope", what, 1) for n in notes]


def _scope_notes(mode: str, params: dict[str, Any], size: int) -> list[str]:
    exact_max = int(params["exact_max"])
    if mode in ("index", "property"):
        if size <= exact_max:
            return [f"scope: its {size} chunks ranked exactly"]
        how = "its property predicate (one query, no id list)"
        how = how if mode == "property" else "their ids (one query)"
        return [
            f"scope: its {size} chunks ranked in the vector index, the SEARCH filtered by {how}"
        ]
    budget = int(params["scope_exact_max"])
    if size <= budget:
        return [f"scope: its {size} chunks ranked exactly (the index cannot filter by chunk id)"]
    return [scope_partial(size, budget)]


def path_query(
    facts: RankFacts,
    path: str,
    vector: list[float],
    selection: CompiledSelectionLike,
    fetch_k: int,
    with_embedding: bool,
) -> Query:
    """The one query of ``path`` (exact, plugin, search_in; index over U) for the selection's
    top ``fetch_k``. The index post-filter over a selection is a loop (``Paths``): its first
    query is ``u_query``. A path this server cannot run is a one-line error naming the fix."""
    if path not in PATHS:
        raise ConfigurationError(f"unknown retrieval path {path!r}; use one of {PATHS}")
    base = {
        **selection.params,
        "query_vector": vector,
        "fetch_k": int(fetch_k),
        "with_embedding": with_embedding,
    }
    schema = facts.schema
    if path == "exact":
        return Query("retrieve_exact", _exact_text(facts, selection, "cypher"), base)
    if path == "plugin":
        if not facts.need("rank_plugin"):
            raise ConfigurationError(
                f"path 'plugin' needs the {RANK_PROCEDURE} procedure on the server (see "
                f"docs/plugin.md; rank_plugin={facts.rank_plugin_setting!r}); use 'exact'"
            )
        params = {**base, "embedding_property": schema.chunk_embedding}
        return Query("retrieve_exact", _exact_text(facts, selection, "plugin"), params)
    if path == "search_in":
        if not facts.need("search_in_filter"):
            raise ConfigurationError(
                f"path 'search_in' needs Neo4j 2026.06+ (this server is "
                f"{facts.server_version}); use 'exact' or 'index'"
            )
        if facts.need("search_in_unready") != "":
            raise ConfigurationError(
                f"path 'search_in' needs the vector index {facts.vector_index_name!r} to "
                f"declare the chunk id as a filter property: recreate it WITH "
                f"[c.{schema.chunk_id}] (`guidedrag migrate`, or `guidedrag kb adopt` on your "
                f"own graph) or use 'exact' or 'index'"
            )
        cypher = templates.query(
            "retrieve_search_in",
            schema,
            selection=selection.cypher,
            names={"vector_index": facts.vector_index_name},
        )
        wide = {**base, "fetch_k": int(fetch_k) * SEARCH_IN_OVERFETCH}
        return Query("retrieve_search_in", cypher, wide, keep=int(fetch_k))
    want = int(fetch_k) if selection.is_all else max(int(fetch_k) * POSTFILTER_FIRST, int(fetch_k))
    return u_query(facts, vector, want, with_embedding)


def _exact_text(facts: RankFacts, selection: CompiledSelectionLike, rank: str) -> str:
    return templates.query(
        "retrieve_exact",
        facts.schema,
        selection=selection.cypher,
        variant=facts.variant("retrieve_exact", rank=rank),
    )


# ---------------------------------------------------------------------------- one ranking
def plan_ranking(
    order: RankOrder,
    selection: CompiledSelectionLike | CompiledTiersLike,
    facts: RankFacts,
    *,
    steering: str = "hard",
    path: str | None = None,
    selection_size: int | None = None,
    limit: int | None = None,
) -> RankPlan:
    """How ``selection`` is ranked for ``order``: a compiled ``boost(...)`` or auto's tiers in
    one ``retrieve_boost`` (``steering`` is then ``auto``); a hard selection on a server that
    plans in the query in one ``retrieve_planned``; anything else sized first (the query is
    ``selection_size`` unless the size is known or the selection is U) and then ``plan_sized``.
    """
    if getattr(selection, "is_boost", False):
        return plan_tiers(order, selection, facts, limit)  # type: ignore[arg-type]
    plain: CompiledSelectionLike = selection  # type: ignore[assignment]
    planned = path is None and selection_size is None and steering == "hard"
    if planned and not plain.is_all and plans_in_query(facts):
        query = planned_query(facts, order.vector, plain, order.fetch, order.with_embedding)
        return RankPlan("planned", "hard", query)
    if plain.is_all or selection_size is not None:
        return plan_sized(order, plain, facts, steering=steering, path=path, size=selection_size)
    return RankPlan("sized", steering, size_query(facts, plain), extra={"path": path})


def plan_tiers(
    order: RankOrder, tiers: CompiledTiersLike, facts: RankFacts, limit: int | None = None
) -> RankPlan:
    """auto's tiers (or a compiled boost) in one ``retrieve_boost``; ``extra['scope']``: how a
    scope's (or a request filter's, ``extra['filtered']``) U is ranked (``scope_mode``), which
    the edge turns into notes once it has read the tier sizes (``scope_notes``)."""
    query = tiers_query(facts, tiers, order.vector, order.fetch, order.with_embedding, limit)
    filtered = bool(getattr(tiers, "filtered", False))
    extra = {"scope": scope_mode(facts, tiers), "filtered": filtered}
    return RankPlan("boost", "auto", query, extra=extra)


def plans_in_query(facts: RankFacts) -> bool:
    """Whether the choice between exact and search_in can be made inside the ranking query
    (``retrieve_planned``: filtered ``SEARCH``, 2026.06+, the index declaring the chunk id)."""
    return bool(facts.need("search_in_filter")) and facts.need("search_in_unready") == ""


def plan_sized(
    order: RankOrder,
    selection: CompiledSelectionLike,
    facts: RankFacts,
    *,
    steering: str,
    path: str | None,
    size: int | None,
) -> RankPlan:
    """The second round for a selection of known ``size`` (None: U): the path (the caller's,
    else ``choose_path``; U ranks through the index unless exact or the plugin was asked), and
    its query. Soft steering plans more rounds at the edge (``Retriever``: U's top, members).
    A selection kept to a trusted scope (``ScopedSelection.in_scope``) is ``choose_path``'s
    ``scoped``: exact up to the scope budget where the index cannot filter by chunk id."""
    scoped = bool(getattr(selection, "in_scope", False))
    plan = Plan(path) if path else choose_path(size, selection.is_all, facts, scoped=scoped)
    chosen = plan.path
    if selection.is_all and chosen != "index":
        chosen = chosen if chosen in ("exact", "plugin") else "index"
    steering = "hard" if selection.is_all else steering
    query = None
    if steering != "soft" or size != 0:
        query = path_query(
            facts, chosen, order.vector, selection, order.fetch, order.with_embedding
        )
    return RankPlan(chosen, steering, query, plan.notes, size)
