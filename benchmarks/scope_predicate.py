"""A property scope's predicate inside the vector index's SEARCH vs the scope's id list (issue 35).

The database must hold ``benchmarks/scope_recall.py``'s synthetic bundle (``--write``, then
``guidedrag load --bulk``). The chunk index is recreated WITH [c.id, c.document_id, c.position]
(and put back WITH [c.id] at the end), then ``auto`` with a stated entity runs inside two
property scopes, 1% of the KB (``document_id`` IN 20 documents, 200 chunks) and 10%
(``position = 0``, 2,000 chunks), on two sides in one process: ``predicate`` (U's SEARCH
filtered by the scope's own predicate, ``retrieve_boost`` ``scope=property``) and ``id list``
(the same scope with the index's declared properties hidden from the planner, so U's SEARCH is
filtered by the in-scope ids, ``scope=index``), each with the rank plugin and without it. The
sides alternate per query; each call is timed ``--repeat`` times after a warm call. Prints p50,
the ratio predicate/id list, and mean recall@k against numpy's exact top k of the scope.

    python benchmarks/scope_predicate.py /work/dev/scratch/sidx2-syn20k [--queries 20]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from scope_recall import exact_top

from guidedrag_graph.config import Settings
from guidedrag_graph.db.connection import connect
from guidedrag_graph.kb.synthetic import SyntheticSpec, query_vectors
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.schema.presets import PRESETS
from guidedrag_graph.selection.evaluator import evaluate_tiers
from guidedrag_graph.semantics import Semantics
from guidedrag_graph.steering.tiers import plan_auto
from guidedrag_graph.testing.retrieval_conformance import snapshot

OPTIONS = (
    "OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}}"
)
INDEX = (
    "CREATE VECTOR INDEX chunk_embedding FOR (c:Chunk) ON c.embedding WITH [PROPERTIES] " + OPTIONS
)


def reindex(driver: Any, properties: str) -> None:
    driver.execute_query("DROP INDEX chunk_embedding IF EXISTS")
    driver.execute_query(INDEX.replace("PROPERTIES", properties))
    driver.execute_query("CALL db.awaitIndexes(600)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("-k", type=int, default=5)
    args = parser.parse_args()
    fields: dict[str, dict[str, Any]] = {}
    with (args.bundle / "chunks.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            fields[row["id"]] = {"doc": row["document_id"], "position": row["position"]}
    docs = sorted({f["doc"] for f in fields.values()})[
        :: len({f["doc"] for f in fields.values()}) // 20
    ][:20]
    scopes = [
        (
            "1% document_id IN",
            {"filters": {"document_id": {"$in": docs}}},
            {c for c, f in fields.items() if f["doc"] in docs},
        ),
        (
            "10% position = 0",
            {"filters": {"position": 0}},
            {c for c, f in fields.items() if f["position"] == 0},
        ),
    ]
    settings = Settings()
    admin = connect(settings)
    reindex(admin, "c.id, c.document_id, c.position")
    snap = snapshot(admin, settings.neo4j_database, PRESETS["guidedrag"])
    queries = query_vectors(args.queries, SyntheticSpec(chunks=len(fields)))
    print(
        f"{len(fields)} chunks, {args.queries} queries x {args.repeat}, k={args.k}, "
        f"load {os.getloadavg()}"
    )
    drivers, sides = [], {}
    for plugin in ("plugin", "no plugin"):
        tuned = (
            settings if plugin == "plugin" else settings.model_copy(update={"rank_plugin": "off"})
        )
        for side in ("predicate", "id list"):
            driver = connect(tuned)  # server facts are kept per driver
            drivers.append(driver)
            rag = GuidedRAG(tuned, driver=driver)
            if side == "id list":  # the planner sees no declared property but c.id
                rag.graph.remember("vector_filter_properties", frozenset({"id"}))
            sides[(plugin, side)] = rag
    try:
        for label, scope, among in scopes:
            named = sorted(
                {snap.graph.entities[e].name for c, e in snap.graph.mentions if c in among}
            )
            times: dict[Any, list[float]] = {key: [] for key in sides}
            recall: dict[Any, list[float]] = {key: [] for key in sides}
            notes: dict[Any, set[str]] = {key: set() for key in sides}
            for q in range(args.queries):
                semantics = Semantics(entities=(named[(q * 37) % len(named)],))
                vector = [float(x) for x in queries[q]]
                for key, rag in sides.items():
                    view = rag.scoped(scope)
                    expr = plan_auto(semantics, rag.policy.tier_weights(semantics)).boost()
                    assert expr is not None
                    tiers = evaluate_tiers(expr, snap.graph, hop_cap=settings.hop_cap)
                    want = exact_top(
                        snap, queries[q], {c: w for c, (w, _) in tiers.items()}, among, args.k
                    )
                    call = {
                        "semantics": semantics,
                        "k": args.k,
                        "query_vector": vector,
                        "link": False,
                    }
                    result = view.retrieve(f"q{q}", **call)  # warm
                    for _ in range(args.repeat):
                        started = time.perf_counter()
                        result = view.retrieve(f"q{q}", **call)
                        times[key].append(1000 * (time.perf_counter() - started))
                    got = [c.id for c in result.chunks]
                    assert set(got) <= among, (label, key, "out of scope")
                    recall[key].append(len(set(got) & set(want)) / len(want))
                    notes[key].update(n[:70] for n in result.notes if n.startswith("scope"))
            for plugin in ("plugin", "no plugin"):
                p50 = {s: statistics.median(times[(plugin, s)]) for s in ("predicate", "id list")}
                for side in ("predicate", "id list"):
                    key = (plugin, side)
                    print(
                        f"{label:18s} {len(among):5d} {plugin:9s} {side:9s} p50 "
                        f"{p50[side]:7.1f} ms  recall@{args.k} "
                        f"{statistics.mean(recall[key]):.3f}  {sorted(notes[key])}"
                    )
                ratio = p50["predicate"] / p50["id list"]
                print(f"{label:18s} {plugin:9s} predicate / id list = {ratio:.2f}")
    finally:
        for driver in drivers:
            driver.close()
        reindex(admin, "c.id")
        admin.close()
    print(f"load after {os.getloadavg()}")


if __name__ == "__main__":
    main()
