"""Median latency per pipeline stage, base RAG vs GuidedRAG, over a bundle's questions.

Runs ``GuidedRAG.ask`` with no LLM configured (so the stages are: selection preparation,
question embedding, selection size, ranking in Neo4j, MMR, augmentation) for every answerable
question, as base RAG (every chunk), as the default GuidedRAG (``steering="auto"``: graded tiers,
one ranking query) and as the paper's mapping with hard steering, interleaved per question in one
process, after one warm-up pass. ``guidedrag`` is what a user gets asking about entities asked
before (their names resolved within ``GUIDEDRAG_RESOLUTION_CACHE_S``: one round trip less);
``guidedrag-cold`` forgets the resolved names before every question (every name resolved afresh;
the relation types stay known, as they are within the cache's time for any question). Totals
are wall-clock medians; the load average is printed beside them (the machine may be shared).
Question embeddings come from the on-disk cache after the first pass unless ``--no-cache``.

    python benchmarks/pipeline_latency.py --bundle out/musique            # uses NEO4J_URI etc.
    python benchmarks/pipeline_latency.py --bundle out/musique --load     # load it first
    GUIDEDRAG_RANK_PLUGIN=off python benchmarks/pipeline_latency.py ...   # pure Cypher, no plugin
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from guidedrag_graph.config import Settings
from guidedrag_graph.db.connection import connect, server_info
from guidedrag_graph.embeddings import embedder_for
from guidedrag_graph.kb import load_bundle, read_questions
from guidedrag_graph.pipeline import GuidedRAG, default_selection
from guidedrag_graph.schema.presets import schema_for


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", type=Path, required=True)
    parser.add_argument("--load", action="store_true", help="load the bundle first (idempotent)")
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--limit", type=int, default=100, help="questions to time")
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--no-cache", action="store_true", help="embed every question afresh (no disk cache)"
    )
    args = parser.parse_args()

    settings = Settings(openai_api_key=None, openai_base_url=None)
    driver = connect(settings)
    schema = schema_for(settings.schema_preset)
    try:
        if args.load:
            load_bundle(driver, settings, schema, args.bundle)
        questions = [q for q in read_questions(args.bundle) if q.answerable][: args.limit]
        embedder = embedder_for(settings, cache=not args.no_cache)
        rag = GuidedRAG(settings, driver=driver, schema=schema, embedder=embedder)
        # A second pipeline (its own GraphContext, so its own cache) for the cold runs.
        cold = GuidedRAG(settings, driver=driver, schema=schema, embedder=embedder)
        runs: dict[str, list[dict[str, float]]] = {
            "rag": [],
            "guidedrag": [],
            "guidedrag-cold": [],
            "paper-hard": [],
        }
        sizes: list[int] = []
        load_before = os.getloadavg()
        for warm in (True, False):
            for q in questions:
                timed: dict[str, dict[str, float]] = {}
                for name in runs:
                    if name == "guidedrag-cold":
                        # Names asked afresh; the relation types (the schema) stay known, as
                        # they do for every question within GUIDEDRAG_RESOLUTION_CACHE_S.
                        cold.graph.data.clear("entity")
                    started = time.perf_counter()
                    if name == "rag":
                        answer = rag.ask(q.question, None, k=args.k, steering="hard")
                    elif name == "guidedrag":  # exactly the default: semantics, no options
                        answer = rag.ask(q.question, semantics=q.semantics, k=args.k)
                    elif name == "guidedrag-cold":
                        answer = cold.ask(q.question, semantics=q.semantics, k=args.k)
                    else:
                        expr = default_selection(q.semantics)
                        answer = rag.ask(
                            q.question, expr, semantics=q.semantics, k=args.k, steering="hard"
                        )
                    timed[name] = {**answer.timings, "total": time.perf_counter() - started}
                    if name == "paper-hard" and answer.retrieval.selection_size is not None:
                        sizes.append(answer.retrieval.selection_size)
                if not warm:
                    for name, timings in timed.items():
                        runs[name].append(timings)
        load_after = os.getloadavg()
        summary: dict[str, Any] = {
            "neo4j_version": server_info(driver).version,
            "bundle": str(args.bundle),
            "questions": len(questions),
            "k": args.k,
            "embedding_cache": not args.no_cache,
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in load_after],
            "cpus": os.cpu_count(),
            "paper_hard_selection_size_median": statistics.median(sizes) if sizes else None,
            "median_ms": {},
        }
        for name, timings in runs.items():
            stages = sorted({s for t in timings for s in t})
            medians = {s: 1000 * statistics.median(t[s] for t in timings if s in t) for s in stages}
            summary["median_ms"][name] = {s: round(v, 2) for s, v in medians.items()}
        rag_total = summary["median_ms"]["rag"]["total"]
        summary["ratio_to_rag"] = {
            name: round(summary["median_ms"][name]["total"] / rag_total, 3) for name in runs
        }
        print(json.dumps(summary, indent=2))
        if args.out:
            args.out.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    finally:
        driver.close()


if __name__ == "__main__":
    main()
