"""Median latency per pipeline stage, base RAG vs GuidedRAG, over a bundle's questions.

Runs ``GuidedRAG.ask`` with no LLM configured (so the stages are: selection preparation,
question embedding, selection size, ranking in Neo4j, MMR, augmentation) for every answerable
question, once as base RAG (every chunk) and once as GuidedRAG (the semantics' selection, hard
steering), after one warm-up pass. Question embeddings come from the on-disk cache after the
first pass unless ``--no-cache``.

    python benchmarks/pipeline_latency.py --bundle out/musique            # uses NEO4J_URI etc.
    python benchmarks/pipeline_latency.py --bundle out/musique --load     # load it first
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

from guidedrag_graph.config import Settings
from guidedrag_graph.db import connect, server_info
from guidedrag_graph.embeddings import embedder_for
from guidedrag_graph.kb import load_bundle, read_questions
from guidedrag_graph.pipeline import GuidedRAG, default_selection
from guidedrag_graph.schema import schema_for


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
        runs: dict[str, list[dict[str, float]]] = {"rag": [], "guidedrag": []}
        sizes: list[int] = []
        for warm in (True, False):
            for q in questions:
                base = rag.ask(q.question, None, k=args.k, ranker="cosine")
                expr = default_selection(q.semantics)
                guided = rag.ask(q.question, expr, semantics=q.semantics, k=args.k, ranker="cosine")
                if warm:
                    continue
                runs["rag"].append(base.timings)
                runs["guidedrag"].append(guided.timings)
                if guided.retrieval.selection_size is not None:
                    sizes.append(guided.retrieval.selection_size)
        summary: dict[str, Any] = {
            "neo4j_version": server_info(driver).version,
            "bundle": str(args.bundle),
            "questions": len(questions),
            "k": args.k,
            "embedding_cache": not args.no_cache,
            "guided_selection_size_median": statistics.median(sizes) if sizes else None,
            "median_ms": {},
        }
        for name, timings in runs.items():
            stages = sorted({s for t in timings for s in t})
            medians = {s: 1000 * statistics.median(t[s] for t in timings if s in t) for s in stages}
            medians["total"] = 1000 * statistics.median(sum(t.values()) for t in timings)
            summary["median_ms"][name] = medians
        print(json.dumps(summary, indent=2))
        if args.out:
            args.out.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    finally:
        driver.close()


if __name__ == "__main__":
    main()
