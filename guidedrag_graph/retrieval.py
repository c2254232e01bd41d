"""Retrieval: rank chunks by cosine *inside Neo4j*, within a selection (paper §3.3, DESIGN §5).

Three physical paths, one result shape:

* ``exact`` — ``vector.similarity.cosine`` over every selected chunk (``retrieve_exact``): exact,
  and costs one dot product per selected chunk, so it wins for small selections;
* ``index`` — the approximate vector index over every chunk, U (base RAG; ``SEARCH`` on
  2026.01+, ``db.index.vector.queryNodes`` on 5.26). For a selection it is used as a
  *post-filter*: over-fetch from U, keep the members, widen until k are found;
* ``search_in`` — on 2026.06+, the selection's ids filter the index search itself
  (``SEARCH ... WHERE c.id IN ...``), so a large selection costs one index search;
* ``plugin`` — exact, like ``exact``, through the ``guidedrag.rank`` procedure (``plugin/``,
  docs/plugin.md), which keeps the embeddings it has read in a float32 cache: about 1 µs per
  selected chunk instead of ~45. Used whenever ``SHOW PROCEDURES`` lists it (asked once per
  driver, ``db.procedure_available``; ``rank_plugin = "off"`` disables it), so servers without
  it (Aura, plugins not allowed) keep the pure-Cypher paths.

The planner picks by selection size and server version. Its crossover points were measured by
``benchmarks/planner_bench.py`` (see ``MEASURED_EXACT_MAX``) and can be overridden with
``GUIDEDRAG_PLANNER_EXACT_MAX``. Every query runs in a READ transaction.

Scores: Neo4j's ``score`` is (1 + cos) / 2; ``cosine`` is the raw cosine. The optional
similarity threshold is on the **raw cosine**.

Steering: *hard* ranks only inside the selection (the paper). *Soft* ranks over U with the
selection's members boosted by ``soft_boost`` (β, added to the (1+cos)/2 score); non-members
fill the top k when the selection holds fewer than k chunks. β ≥ 1 puts every member above every
non-member, i.e. "selection first, then fill from U".
"""

from __future__ import annotations

import logging
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

import numpy as np
from neo4j import Driver

from guidedrag_graph import templates
from guidedrag_graph.config import Settings
from guidedrag_graph.db import ServerInfo, procedure_available, read_query, server_info
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.schema import ELEMENT_ID, SchemaMapping, schema_for, schema_from_settings

log = logging.getLogger(__name__)

Path = Literal["exact", "index", "search_in", "plugin"]
Ranker = Literal["cosine", "mmr"]
Steering = Literal["hard", "soft", "auto"]
STEERINGS: tuple[str, ...] = ("auto", "hard", "soft")
PATHS: tuple[str, ...] = ("exact", "index", "search_in", "plugin")
RANK_PROCEDURE = "guidedrag.rank"
RANKERS: tuple[str, ...] = ("cosine", "mmr")

# Largest selection ranked exactly, keyed by the index path the planner would use instead.
# Measured with benchmarks/planner_bench.py (384-d random unit vectors, quantization none, k=5,
# a shared, heavily loaded 2-core machine, so timings are noisy; results in benchmarks/results/):
# - 2026.08.1 (30k and 10k chunks, two runs): exact 18-78 ms up to 300 chunks, 78-231 ms at
#   1,000, vs. filtered SEARCH 20-67 ms; at 3,000 exact 229-383 ms vs. 68-128 ms. The crossover
#   lies between 300 and 1,000 chunks. Filtered SEARCH also loses recall on very large
#   selections (0.97 at 10k of 30k; 0.54 when the selection is the whole corpus).
# - 5.26.30 (10k chunks): exact 400 ms vs. index post-filter 476 ms at 1,000; 818 vs. 141 ms at
#   3,000, where the post-filter's recall@5 drops to 0.69. Crossover between 1,000 and 3,000.
MEASURED_EXACT_MAX: dict[str, int] = {"search_in": 500, "index": 1_000}
# With the rank plugin, exact ranking costs ~1 µs per selected chunk once cached (0.8 µs at 10k
# chunks vs. 45 µs for Cypher's cosine; benchmarks/plugin_bench.py, results/plugin_*.json): the
# selection itself costs more than ranking it, so exact (recall 1.0) is the default far beyond
# where filtered SEARCH loses recall (0.93 at 10% of the corpus).
MEASURED_PLUGIN_EXACT_MAX = 200_000

# Per driver: (database, index name) -> the chunk vector index declares the chunk id as a filter
# property. Only a "yes" is kept, so an index fixed later (`kb adopt`, `migrate`) is seen at once.
_SEARCH_IN_READY: weakref.WeakKeyDictionary[Any, set[tuple[str | None, str]]] = (
    weakref.WeakKeyDictionary()
)

# Post-filter path: first over-fetch factor over U, and the widest fetch before exact fallback.
_POSTFILTER_FIRST = 10
_POSTFILTER_MAX = 10_000
# Filtered SEARCH asks the index for this many times fetch_k and keeps the best fetch_k: the
# recall guard for large selections (filtered HNSW recall@5 fell to 0.93 at 10% selectivity
# with LIMIT k; a wider LIMIT widens the graph search). Not yet measured on clustered vectors:
# `benchmarks/planner_bench.py --clusters 200` reports recall with and without it.
_SEARCH_IN_OVERFETCH = 4


class CompiledSelectionLike(Protocol):
    """What retrieval needs of a compiled selection (the selection stage's ``CompiledSelection``).

    ``cypher`` binds ``c`` to each selected chunk exactly once; its parameters start with ``sel_``.
    """

    @property
    def cypher(self) -> str: ...

    @property
    def params(self) -> dict[str, Any]: ...

    @property
    def is_all(self) -> bool: ...


@dataclass(frozen=True)
class ChunkIdSelection:
    """A manual selection by chunk ids (the same shape as a compiled selection)."""

    ids: tuple[str, ...]
    schema: SchemaMapping = field(default_factory=lambda: schema_for("guidedrag"))

    @property
    def cypher(self) -> str:
        return templates.fragment("selection_given", "ids", self.schema)

    @property
    def params(self) -> dict[str, Any]:
        return {"sel_chunk_ids": list(self.ids)}

    @property
    def is_all(self) -> bool:
        return False


@dataclass(frozen=True)
class AllChunks:
    """U: every chunk (base RAG)."""

    schema: SchemaMapping = field(default_factory=lambda: schema_for("guidedrag"))

    @property
    def cypher(self) -> str:
        return templates.fragment("select_all", "alone", self.schema)

    @property
    def params(self) -> dict[str, Any]:
        return {}

    @property
    def is_all(self) -> bool:
        return True


@dataclass(frozen=True)
class RankedChunk:
    """One retrieved chunk; ``score`` = Neo4j's (1+cos)/2, ``cosine`` = raw cosine."""

    id: str
    document_id: str | None
    document_title: str | None
    text: str
    score: float
    cosine: float
    in_selection: bool | None
    embedding: tuple[float, ...] | None = field(default=None, repr=False, compare=False)
    tier: str | None = None  # auto / boost: the best tier the chunk is in (None: U only)
    boost: float = 0.0  # auto / boost: that tier's weight, added to ``score`` for ranking
    tiers: tuple[str, ...] = field(default=(), compare=False)  # auto: every tier holding it

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "document_id": self.document_id,
            "document_title": self.document_title,
            "text": self.text,
            "score": self.score,
            "cosine": self.cosine,
            "in_selection": self.in_selection,
            "tier": self.tier,
            "boost": self.boost,
            "tiers": list(self.tiers),
        }


@dataclass
class Ranking:
    """What the retrieval stage did: chunks, the path and queries it used, and their cost."""

    chunks: list[RankedChunk]
    path: str
    ranker: str
    steering: str
    selection_size: int | None
    cypher: str
    params: dict[str, Any]
    timings: dict[str, float] = field(default_factory=dict)
    queries: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    tier_sizes: dict[str, int] = field(default_factory=dict)  # auto / boost: chunks per tier


class CompiledTierLike(Protocol):
    """One tier of a compiled boost: the Cypher list variable of its chunks and its weight."""

    @property
    def list_variable(self) -> str: ...

    @property
    def weight(self) -> float: ...

    @property
    def name(self) -> str | None: ...


class CompiledTiersLike(Protocol):
    """A compiled boost (``CompiledSelection.is_boost``): ``prelude`` binds one chunk list per
    tier, ``tiers`` weight-descending (the selection stage's ``CompiledTier``)."""

    @property
    def prelude(self) -> str: ...

    @property
    def params(self) -> dict[str, Any]: ...

    @property
    def tiers(self) -> Sequence[CompiledTierLike]: ...


def mmr(
    query: np.ndarray,
    candidates: np.ndarray,
    relevance: Sequence[float],
    k: int,
    lambda_: float,
) -> list[int]:
    """Maximal marginal relevance (Carbonell & Goldstein 1998): indices into ``candidates``.

    Each step takes argmax λ·rel(d) − (1−λ)·max_{s∈S} cos(d, s). ``relevance`` is the score the
    caller ranks by (cosine, or a boosted score under soft steering); λ=1 is plain ranking.
    """
    n = len(candidates)
    if n == 0 or k <= 0:
        return []
    vectors = np.asarray(candidates, dtype=np.float64)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    vectors = vectors / norms
    rel = np.asarray(relevance, dtype=np.float64)
    similarity = vectors @ vectors.T
    chosen: list[int] = []
    redundancy = np.full(n, -np.inf)
    available = np.ones(n, dtype=bool)
    for _ in range(min(k, n)):
        penalty = np.where(np.isfinite(redundancy), redundancy, 0.0)
        objective = lambda_ * rel - (1.0 - lambda_) * penalty
        objective[~available] = -np.inf
        best = int(np.argmax(objective))
        chosen.append(best)
        available[best] = False
        redundancy = np.maximum(redundancy, similarity[best])
    del query  # the query enters through ``relevance``; kept in the signature for clarity
    return chosen


def _row_to_chunk(row: dict[str, Any], in_selection: bool | None) -> RankedChunk:
    embedding = row.get("embedding")
    return RankedChunk(
        id=str(row["id"]),
        document_id=None if row.get("document_id") is None else str(row["document_id"]),
        document_title=None if row.get("document_title") is None else str(row["document_title"]),
        text=str(row.get("text") or ""),
        score=float(row["score"]),
        cosine=float(row["cosine"]),
        in_selection=in_selection if in_selection is not None else row.get("in_selection"),
        embedding=tuple(float(x) for x in embedding) if embedding is not None else None,
        tier=None if row.get("tier") is None else str(row["tier"]),
        boost=float(row.get("boost") or 0.0),
    )


class Retriever:
    """Ranks chunks inside a selection in Neo4j; see the module docstring for paths/steering.

    >>> r = Retriever(driver, settings)
    >>> ranking = r.rank(query_vector, ChunkIdSelection(("c1", "c2")), k=5)
    """

    def __init__(
        self, driver: Driver, settings: Settings, schema: SchemaMapping | None = None
    ) -> None:
        self.driver = driver
        self.settings = settings
        self.schema = schema or schema_from_settings(settings)
        self._server: ServerInfo | None = None
        self._rank_plugin: bool | None = None
        self._plan_notes: list[str] = []
        self._plugin_max: int | None = None

    @property
    def server(self) -> ServerInfo:
        if self._server is None:
            self._server = server_info(self.driver, self.settings.neo4j_database)
        return self._server

    @property
    def rank_plugin(self) -> bool:
        """The one gate for the ``plugin`` path: enabled in settings and listed by the server."""
        if self._rank_plugin is None:
            self._rank_plugin = self.settings.rank_plugin != "off" and procedure_available(
                self.driver, RANK_PROCEDURE, self.settings.neo4j_database
            )
        return self._rank_plugin

    def plugin_exact_max(self) -> int:
        """The plugin's limit: the measured one, or fewer chunks if its cache holds fewer.

        Past its cache budget the plugin reads the store at Cypher's speed (~45 µs per chunk).
        """
        if self._plugin_max is None:
            rows = self._read(templates.query("rank_plugin_cache", self.schema), {})
            budget = int(rows[0]["budget"]) if rows else 0
            per_vector = 16 + 4 * self.settings.embedding_dimensions + 64  # see VectorCache.put
            self._plugin_max = min(MEASURED_PLUGIN_EXACT_MAX, budget // per_vector)
        return self._plugin_max

    # ------------------------------------------------------------------ planner
    def exact_max(self) -> int:
        """Selections up to this size are ranked exactly; larger ones through the index."""
        if self.settings.planner_exact_max is not None:
            return self.settings.planner_exact_max
        key = "search_in" if self.server.supports_search_in_filter else "index"
        if self.rank_plugin:  # never below Cypher's own crossover, even with a tiny cache
            return max(self.plugin_exact_max(), MEASURED_EXACT_MAX[key])
        return MEASURED_EXACT_MAX[key]

    def plan(self, selection_size: int | None, is_all: bool) -> str:
        """The path for a selection of this size on this server (``None`` size: unknown)."""
        if is_all:
            return "index"
        if selection_size is not None and selection_size <= self.exact_max():
            return "plugin" if self.rank_plugin else "exact"
        if self.server.supports_search_in_filter and self.search_in_ready():
            return "search_in"
        return "index"

    def search_in_ready(self) -> bool:
        """Does the chunk vector index declare the chunk id as a filter property (``WITH [c.id]``)?

        A filtered ``SEARCH`` on an index made without it fails with ``PropertyNotFound ... not
        an additional property`` (a user's own index, or one made before migration V0005). We ask
        ``SHOW VECTOR INDEXES`` once per driver; when the property is missing the planner falls
        back to the exact or index path and the ranking's notes say why.
        """
        if self.schema.chunk_id == ELEMENT_ID:  # elementId-addressed chunks: nothing to declare
            return False
        key = (self.settings.neo4j_database, self.settings.vector_index_name)
        ready = _SEARCH_IN_READY.setdefault(self.driver, set())
        if key in ready:
            return True
        rows = self._read(
            templates.query("vector_index_filters", self.schema), {"index_name": key[1]}
        )
        declared: set[str] = set()
        labels: list[str] = []
        for row in rows:
            labels = [str(x) for x in row.get("labels") or []]
            declared.update(str(p) for p in (row.get("properties") or [])[1:])
            config = (row.get("options") or {}).get("indexConfig") or {}
            declared.update(str(p) for p in config.get("vector.filterable_properties") or [])
        if self.schema.chunk_id in declared and self.schema.chunk_label in labels:
            ready.add(key)
            return True
        what = (
            "does not exist"
            if not rows
            else (
                f"does not declare {self.schema.chunk_label}.{self.schema.chunk_id} as a filter "
                f"property (it has {sorted(declared) or 'none'})"
            )
        )
        note = (
            f"planner: the vector index {key[1]!r} {what}, so a filtered SEARCH cannot run; "
            f"ranked through exact/index instead (recreate the index WITH "
            f"[c.{self.schema.chunk_id}], e.g. `guidedrag migrate`, to enable search_in)"
        )
        if note not in self._plan_notes:
            self._plan_notes.append(note)
        return False

    # ------------------------------------------------------------------ queries
    def _read(self, query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        return read_query(self.driver, query, params, database=self.settings.neo4j_database)

    def selection_query(self, selection: CompiledSelectionLike) -> str:
        return templates.query("selection_size", self.schema, selection=selection.cypher)

    def selection_size(self, selection: CompiledSelectionLike) -> int:
        rows = self._read(self.selection_query(selection), dict(selection.params))
        return int(rows[0]["selection_size"]) if rows else 0

    def _index_query(self) -> tuple[str, dict[str, Any]]:
        if self.server.supports_search_clause:
            query = templates.query(
                "retrieve_search",
                self.schema,
                names={"vector_index": self.settings.vector_index_name},
            )
            return query, {}
        return templates.query("retrieve_index", self.schema), {
            "index_name": self.settings.vector_index_name
        }

    def _rank_u(
        self, vector: list[float], fetch_k: int, with_embedding: bool
    ) -> tuple[list[dict[str, Any]], str, dict[str, Any]]:
        query, extra = self._index_query()
        params = {
            **extra,
            "query_vector": vector,
            "fetch_k": int(fetch_k),
            "with_embedding": with_embedding,
        }
        return self._read(query, params), query, params

    def _rank_selection(
        self,
        path: str,
        vector: list[float],
        selection: CompiledSelectionLike,
        fetch_k: int,
        with_embedding: bool,
        queries: list[str],
        notes: list[str],
    ) -> tuple[list[dict[str, Any]], str, dict[str, Any]]:
        """Top ``fetch_k`` members of the selection by cosine, through ``path``."""
        base = {
            **selection.params,
            "query_vector": vector,
            "fetch_k": int(fetch_k),
            "with_embedding": with_embedding,
        }
        if path == "exact":
            query = templates.query("retrieve_exact", self.schema, selection=selection.cypher)
            queries.append(query)
            return self._read(query, base), query, base
        if path == "plugin":
            if not self.rank_plugin:
                raise ConfigurationError(
                    f"path 'plugin' needs the {RANK_PROCEDURE} procedure on the server (see "
                    f"docs/plugin.md; rank_plugin={self.settings.rank_plugin!r}); use 'exact'"
                )
            query = templates.query("retrieve_plugin", self.schema, selection=selection.cypher)
            queries.append(query)
            params = {**base, "embedding_property": self.schema.chunk_embedding}
            return self._read(query, params), query, params
        if path == "search_in":
            if not self.server.supports_search_in_filter:
                raise ConfigurationError(
                    f"path 'search_in' needs Neo4j 2026.06+ (this server is "
                    f"{self.server.version}); use 'exact' or 'index'"
                )
            if not self.search_in_ready():
                self._plan_notes.clear()
                raise ConfigurationError(
                    f"path 'search_in' needs the vector index "
                    f"{self.settings.vector_index_name!r} to declare the chunk id as a filter "
                    f"property: recreate it WITH [c.{self.schema.chunk_id}] (`guidedrag migrate`, "
                    f"or `guidedrag kb adopt` on your own graph) or use 'exact' or 'index'"
                )
            query = templates.query(
                "retrieve_search_in",
                self.schema,
                selection=selection.cypher,
                names={"vector_index": self.settings.vector_index_name},
            )
            queries.append(query)
            wide = {**base, "fetch_k": int(fetch_k) * _SEARCH_IN_OVERFETCH}
            return self._read(query, wide)[:fetch_k], query, wide
        if path != "index":
            raise ConfigurationError(f"unknown retrieval path {path!r}; use one of {PATHS}")
        if selection.is_all:
            rows, query, params = self._rank_u(vector, fetch_k, with_embedding)
            queries.append(query)
            return rows, query, params
        # Post-filter: over-fetch from U, keep members, widen until fetch_k members are found.
        want = max(fetch_k * _POSTFILTER_FIRST, fetch_k)
        members_query = templates.query(
            "selection_members", self.schema, selection=selection.cypher
        )
        while True:
            rows, query, params = self._rank_u(vector, want, with_embedding)
            queries.append(query)
            ids = [str(r["id"]) for r in rows]
            members = {
                str(r["id"])
                for r in self._read(members_query, {**selection.params, "candidate_ids": ids})
            }
            queries.append(members_query)
            kept = [r for r in rows if str(r["id"]) in members]
            if len(kept) >= fetch_k or len(rows) < want:
                return kept[:fetch_k], query, params
            if want >= _POSTFILTER_MAX:
                notes.append(
                    f"index post-filter found {len(kept)} of {fetch_k} members in the top "
                    f"{want} of U; fell back to exact cosine"
                )
                return self._rank_selection(
                    "exact", vector, selection, fetch_k, with_embedding, queries, notes
                )
            want = min(want * 4, _POSTFILTER_MAX)

    def rank(
        self,
        query_vector: Sequence[float] | np.ndarray,
        selection: CompiledSelectionLike | None = None,
        *,
        k: int | None = None,
        ranker: str = "cosine",
        steering: str = "hard",
        path: str | None = None,
        threshold: float | None = None,
        selection_size: int | None = None,
        fetch_k: int | None = None,
        mmr_lambda: float | None = None,
    ) -> Ranking:
        """Top ``k`` chunks for ``query_vector`` within ``selection`` (``None`` = U).

        ``selection_size`` skips the size query when the caller already knows it; ``path``
        forces a physical path (one of ``PATHS``) instead of the planner's.
        """
        if ranker not in RANKERS:
            raise ConfigurationError(f"unknown ranker {ranker!r}; use one of {RANKERS}")
        if steering not in ("hard", "soft"):
            raise ConfigurationError(
                f"unknown steering {steering!r} for a selection; use 'hard' or 'soft' "
                "(auto ranks graded tiers: Retriever.rank_tiers)"
            )
        settings = self.settings
        k = k or settings.top_k
        threshold = settings.similarity_threshold if threshold is None else threshold
        lambda_ = settings.mmr_lambda if mmr_lambda is None else mmr_lambda
        selection = selection or AllChunks(self.schema)
        if getattr(selection, "is_boost", False):  # a boost(...) ranks its tiers over U
            return self.rank_tiers(
                query_vector,
                selection,  # type: ignore[arg-type]
                k=k,
                ranker=ranker,
                threshold=threshold,
                fetch_k=fetch_k,
                mmr_lambda=mmr_lambda,
            )
        with_embedding = ranker == "mmr"
        fetch = max(fetch_k or (settings.mmr_fetch_k if ranker == "mmr" else k), k)
        vector: list[float] = np.asarray(query_vector, dtype=np.float64).ravel().tolist()
        timings: dict[str, float] = {}
        queries: list[str] = []
        notes: list[str] = []

        if selection.is_all:
            size = None
        elif selection_size is not None:
            size = selection_size
        else:
            started = time.perf_counter()
            size = self.selection_size(selection)
            timings["selection_size"] = time.perf_counter() - started
            queries.append(self.selection_query(selection))
        chosen = path or self.plan(size, selection.is_all)
        notes.extend(self._plan_notes)  # e.g. why search_in was not chosen
        self._plan_notes.clear()
        if selection.is_all and chosen != "index":
            chosen = chosen if chosen in ("exact", "plugin") else "index"

        started = time.perf_counter()
        if steering == "hard" or selection.is_all:
            rows, cypher, params = self._rank_selection(
                chosen, vector, selection, fetch, with_embedding, queries, notes
            )
            candidates = [_row_to_chunk(r, None if selection.is_all else True) for r in rows]
            relevance = [c.score for c in candidates]
        else:
            candidates, relevance, cypher, params = self._soft(
                chosen, vector, selection, size, fetch, with_embedding, queries, notes
            )
        timings["ranking"] = time.perf_counter() - started

        if threshold is not None:
            keep = [i for i, c in enumerate(candidates) if c.cosine >= threshold]
            candidates = [candidates[i] for i in keep]
            relevance = [relevance[i] for i in keep]

        if ranker == "mmr" and candidates:
            started = time.perf_counter()
            matrix = np.array([c.embedding for c in candidates], dtype=np.float64)
            order = mmr(np.asarray(vector), matrix, relevance, k, lambda_)
            timings["mmr"] = time.perf_counter() - started
        else:
            order = sorted(range(len(candidates)), key=lambda i: (-relevance[i], candidates[i].id))[
                :k
            ]
        chunks = [candidates[i] for i in order]
        return Ranking(
            chunks=chunks,
            path=chosen,
            ranker=ranker,
            steering="hard" if selection.is_all else steering,
            selection_size=size,
            cypher=cypher,
            params=params,
            timings=timings,
            queries=queries,
            notes=notes,
        )

    def _soft(
        self,
        path: str,
        vector: list[float],
        selection: CompiledSelectionLike,
        size: int | None,
        fetch: int,
        with_embedding: bool,
        queries: list[str],
        notes: list[str],
    ) -> tuple[list[RankedChunk], list[float], str, dict[str, Any]]:
        """Rank over U with members boosted by β: top of the selection ∪ top of U, re-scored.

        Non-members are drawn from U's top ``2·fetch``; members outside the selection's top
        ``fetch`` cannot reach the top k (the boost is uniform), so the merge is exact whenever U's
        top ``2·fetch`` holds ``fetch`` non-members (noted otherwise).
        """
        beta = self.settings.soft_boost
        selected_rows: list[dict[str, Any]] = []
        if size != 0:
            selected_rows, _, _ = self._rank_selection(
                path, vector, selection, fetch, with_embedding, queries, notes
            )
        u_rows, u_query, u_params = self._rank_u(vector, 2 * fetch, with_embedding)
        queries.append(u_query)
        members_query = templates.query(
            "selection_members", self.schema, selection=selection.cypher
        )
        u_ids = [str(r["id"]) for r in u_rows]
        members = {str(r["id"]) for r in selected_rows}
        if size != 0 and u_ids:
            members |= {
                str(r["id"])
                for r in self._read(members_query, {**selection.params, "candidate_ids": u_ids})
            }
            queries.append(members_query)
        merged: dict[str, RankedChunk] = {}
        for row in selected_rows:
            merged[str(row["id"])] = _row_to_chunk(row, True)
        for row in u_rows:
            cid = str(row["id"])
            if cid not in merged:
                merged[cid] = _row_to_chunk(row, cid in members)
        if sum(1 for r in u_rows if str(r["id"]) not in members) < fetch:
            notes.append("soft steering: U's candidates held fewer non-members than fetch_k")
        candidates = list(merged.values())
        relevance = [c.score + (beta if c.in_selection else 0.0) for c in candidates]
        return candidates, relevance, u_query, u_params

    # ------------------------------------------------------------------ graded tiers (auto)
    def rank_tiers(
        self,
        query_vector: Sequence[float] | np.ndarray,
        compiled: CompiledTiersLike,
        *,
        k: int | None = None,
        ranker: str = "cosine",
        threshold: float | None = None,
        fetch_k: int | None = None,
        mmr_lambda: float | None = None,
        limit: int | None = None,
    ) -> Ranking:
        """Top ``k`` of every chunk by (1+cos)/2 + its best tier's boost, in one query.

        ``limit`` (calibration only) returns up to that many candidates instead of ``fetch_k``.

        ``cypher/retrieve_boost.cypher`` (``retrieve_boost_index`` on 5.26): each tier's top
        ``fetch_k`` (exact up to the planner's exact limit, else from U's over-fetched index top)
        ∪ U's top ``fetch_k`` holds the boosted top ``fetch_k`` (a tier's boost is uniform).
        """
        if ranker not in RANKERS:
            raise ConfigurationError(f"unknown ranker {ranker!r}; use one of {RANKERS}")
        settings = self.settings
        k = k or settings.top_k
        threshold = settings.similarity_threshold if threshold is None else threshold
        lambda_ = settings.mmr_lambda if mmr_lambda is None else mmr_lambda
        with_embedding = ranker == "mmr"
        fetch = max(fetch_k or (settings.mmr_fetch_k if ranker == "mmr" else k), k)
        vector = [float(x) for x in np.asarray(query_vector, dtype=np.float64).ravel()]
        tiers = list(compiled.tiers)
        lists = {"tiers": [t.list_variable for t in tiers]}
        params: dict[str, Any] = {
            **compiled.params,
            "query_vector": vector,
            "fetch_k": fetch,
            "u_fetch_k": fetch,
            "wide_k": fetch * _POSTFILTER_FIRST,
            "exact_max": self.exact_max(),
            "tier_weights": [float(t.weight) for t in tiers],
            "tier_names": [t.name or t.list_variable for t in tiers],
            "limit": fetch if limit is None else limit,
            "with_embedding": with_embedding,
        }
        names: dict[str, str] = {}
        if self.server.supports_search_clause:
            name = "retrieve_boost"
            names["vector_index"] = settings.vector_index_name
        else:
            name = "retrieve_boost_index"
            params["index_name"] = settings.vector_index_name
        query = templates.query(
            name, self.schema, selection=compiled.prelude, names=names, lists=lists
        )
        started = time.perf_counter()
        rows = self._read(query, params)
        timings = {"ranking": time.perf_counter() - started}
        sizes = [int(x) for x in rows[0]["tier_sizes"]] if rows else []
        tier_sizes = {(t.name or t.list_variable): n for t, n in zip(tiers, sizes, strict=False)}
        names = params["tier_names"]
        candidates = [
            replace(_row_to_chunk(r, None), tiers=tuple(names[i] for i in r["member_of"]))
            for r in rows
        ]
        if threshold is not None:
            candidates = [c for c in candidates if c.cosine >= threshold]
        relevance = [c.score + c.boost for c in candidates]
        if ranker == "mmr" and candidates:
            started = time.perf_counter()
            matrix = np.array([c.embedding for c in candidates], dtype=np.float64)
            order = mmr(np.asarray(vector), matrix, relevance, k, lambda_)
            timings["mmr"] = time.perf_counter() - started
        else:
            order = sorted(range(len(candidates)), key=lambda i: (-relevance[i], candidates[i].id))
            order = order[: max(k, limit or 0)]
        return Ranking(
            chunks=[candidates[i] for i in order],
            path="boost",
            ranker=ranker,
            steering="auto",
            selection_size=None,
            cypher=query,
            params=params,
            timings=timings,
            queries=[query],
            tier_sizes=tier_sizes,
        )
