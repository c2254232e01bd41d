"""Recall inside a scope (issue 35): does a scoped call return the exact top k of its scope?

The database must hold a synthetic bundle (``guidedrag_graph.kb.synthetic``; ``--write DIR
--chunks N`` writes one, then ``guidedrag load DIR``): its ``source`` groups and chunk
``position`` give scopes of known sizes. For each scope, query and call form, the ids a scoped
``retrieve`` returns are compared with numpy's exact ranking of the scope's own chunks (the
graph read back as rows, ``testing/retrieval_conformance.snapshot``; ``auto``'s boosts from the
pure-Python evaluator), with the rank plugin and without it (``rank_plugin="off"``), in one
process. Prints, per scope, form and server side: calls that returned fewer than k chunks,
mean recall@k, p50 and the notes the results gave.

    python benchmarks/scope_recall.py /work/dev/syn20k [--queries 20] [-k 5]

Call forms: ``auto`` with a stated entity (the tiers query, ``cypher/retrieve_boost.cypher``),
``auto`` with none (U inside the scope, ``retrieve_planned``), and a hard ``all()`` selection.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from guidedrag_graph.config import Settings
from guidedrag_graph.db.connection import connect
from guidedrag_graph.kb.synthetic import SyntheticSpec, query_vectors, write_synthetic_bundle
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.schema.presets import PRESETS
from guidedrag_graph.selection.evaluator import evaluate_tiers
from guidedrag_graph.semantics import Semantics
from guidedrag_graph.steering.tiers import plan_auto
from guidedrag_graph.testing.retrieval_conformance import snapshot

# (label, scope, the chunk fields that decide membership -> bool)
SCOPES: list[tuple[str, Any, Any]] = [
    ("source('sel100')", "source('sel100')", lambda c: c["group"] == "sel100"),
    ("source('sel1k')", "source('sel1k')", lambda c: c["group"] == "sel1k"),
    ("position = 0", {"filters": {"position": 0}}, lambda c: c["position"] == 0),
    ("position <= 1", {"filters": {"position": {"$lte": 1}}}, lambda c: c["position"] <= 1),
]
FORMS = ("auto+entity", "auto", "hard all()")


def chunk_fields(bundle: Path) -> dict[str, dict[str, Any]]:
    """Each chunk's group (its document's source) and position, from the bundle's files."""
    out: dict[str, dict[str, Any]] = {}
    with (bundle / "chunks.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            out[row["id"]] = {"group": row["metadata"]["group"], "position": row["position"]}
    return out


def exact_top(
    snap: Any, query: np.ndarray, boosts: dict[str, float], among: set[str], k: int
) -> list[str]:
    ids = sorted(among)
    matrix = np.stack([snap.vectors[c] for c in ids])
    cos = matrix @ (query / np.linalg.norm(query)) / np.linalg.norm(matrix, axis=1)
    score = (1 + cos) / 2 + np.array([boosts.get(c, 0.0) for c in ids])
    order = sorted(range(len(ids)), key=lambda i: (-score[i], ids[i]))
    return [ids[i] for i in order[:k]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--write", action="store_true", help="write the bundle first, then exit")
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--forms", default=",".join(FORMS), help="comma-separated")
    args = parser.parse_args()
    spec = SyntheticSpec(chunks=args.chunks)
    if args.write:
        print(write_synthetic_bundle(args.bundle, spec))
        return

    fields = chunk_fields(args.bundle)
    settings = Settings()
    driver = connect(settings)
    snap = snapshot(driver, settings.neo4j_database, PRESETS["guidedrag"])
    queries = query_vectors(args.queries, spec)
    print(f"{len(fields)} chunks, {args.queries} queries, k={args.k}, load {os.getloadavg()}")
    sides = {
        "plugin": GuidedRAG(settings, driver=driver),
        "no plugin": GuidedRAG(settings.model_copy(update={"rank_plugin": "off"}), driver=driver),
    }
    for label, scope, member in SCOPES:
        among = {c for c, f in fields.items() if member(f)}
        # entities an in-scope chunk mentions: one outside would abstain (unknown in the scope)
        named = sorted({snap.graph.entities[e].name for c, e in snap.graph.mentions if c in among})
        for form in args.forms.split(","):
            for side, rag in sides.items():
                view = rag.scoped(scope)
                short, abstained, recalls, times = 0, 0, [], []
                notes = Counter[str]()
                for q in range(args.queries):
                    vector = [float(x) for x in queries[q]]
                    name = named[(q * 37) % len(named)]
                    options: dict[str, Any] = {"k": args.k, "query_vector": vector, "link": False}
                    boosts: dict[str, float] = {}
                    if form == "auto+entity":
                        semantics = Semantics(entities=(name,))
                        options["semantics"] = semantics
                        expr = plan_auto(semantics, rag.policy.tier_weights(semantics)).boost()
                        if expr is not None:
                            tiers = evaluate_tiers(expr, snap.graph, hop_cap=settings.hop_cap)
                            boosts = {c: w for c, (w, _) in tiers.items()}
                    selection = "all()" if form == "hard all()" else None
                    if selection:
                        options["steering"] = "hard"
                    view.retrieve(f"q{q}", selection, **options)  # warm
                    started = time.perf_counter()
                    result = view.retrieve(f"q{q}", selection, **options)
                    times.append(1000 * (time.perf_counter() - started))
                    if result.abstained:
                        abstained += 1
                        continue
                    got = [c.id for c in result.chunks]
                    want = exact_top(snap, queries[q], boosts, among, args.k)
                    short += len(got) < args.k
                    recalls.append(len(set(got) & set(want)) / len(want))
                    assert set(got) <= among, (label, form, side, "out of scope")
                    notes.update(
                        n.split(":")[0] + ": " + n.split(":")[1][:50]
                        for n in result.notes
                        if n.startswith(("scope", "planner", "index"))
                    )
                print(
                    f"{label:16s} {len(among):6d} {form:12s} {side:9s} short {short:2d}/"
                    f"{args.queries} abstained {abstained}  recall@{args.k} "
                    f"{statistics.mean(recalls) if recalls else float('nan'):.3f}  "
                    f"p50 {statistics.median(times):7.1f} ms  {dict(notes) or ''}"
                )
    driver.close()
    print(f"load after {os.getloadavg()}")


if __name__ == "__main__":
    main()
