"""Tagging accuracy (the eval harness's Table 3) and latency of each entity tagger on a bundle.

Accuracy is measured exactly as ``guidedrag eval`` does (``evaluation.metrics.tagging_accuracy``):
over the answerable questions, a gold entity counts when it is among the tagger's first
``len(gold)`` tags, compared by ``name_key``. All taggers run in one process, side by side, each
after one warm-up pass over the questions; the figures are the second pass. The machine's load
average is printed beside every figure. LLM-based taggers run only when an LLM is configured.

    python benchmarks/tagging_accuracy.py --bundle out/musique                 # NEO4J_URI etc.
    python benchmarks/tagging_accuracy.py --bundle out/musique --load --taggers linker,fulltext
    python benchmarks/tagging_accuracy.py --sample                              # the sample KB
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import time
from pathlib import Path
from typing import Any

from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.db.connection import connect
from guidedrag_graph.evaluation.metrics import tagging_accuracy, tags_correct
from guidedrag_graph.kb import load_bundle, read_questions, sample_kb_dir
from guidedrag_graph.kb.entity_names import embed_entity_names
from guidedrag_graph.linking.taggers import TAGGERS, tagger_for
from guidedrag_graph.schema.presets import schema_for


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--bundle", type=Path)
    where.add_argument("--sample", action="store_true", help="the bundled sample KB")
    parser.add_argument("--load", action="store_true", help="load the bundle first (idempotent)")
    parser.add_argument("--taggers", default="linker,fulltext,embedding")
    parser.add_argument("--misses", action="store_true", help="print each tagger's misses")
    parser.add_argument("--out", type=Path, help="write the figures as JSON")
    args = parser.parse_args()
    logging.getLogger("neo4j.notifications").setLevel(logging.ERROR)  # deprecation notices

    bundle = sample_kb_dir() if args.sample else args.bundle
    names = [n.strip() for n in args.taggers.split(",") if n.strip()]
    unknown = [n for n in names if n not in TAGGERS]
    if unknown:
        parser.error(f"unknown tagger(s) {', '.join(unknown)}; choose from {', '.join(TAGGERS)}")
    settings = Settings()
    driver = connect(settings)
    schema = schema_for(settings.schema_preset)
    results: list[dict[str, Any]] = []
    try:
        if args.load:
            load_bundle(driver, settings, schema, bundle)
        questions = [q for q in read_questions(bundle) if q.answerable]
        if "embedding" in names or "hybrid" in names:
            start = time.perf_counter()
            done = embed_entity_names(driver, settings, schema)
            driver.execute_query("CALL db.awaitIndexes(600)")
            print(f"entity names embedded: {done} in {time.perf_counter() - start:.1f}s")
        golds = [list(q.semantics.entities) for q in questions]
        print(
            f"{bundle}: {len(questions)} answerable questions, "
            f"{sum(len(g) for g in golds)} named entities"
        )
        head = f"{'tagger':<10} {'accuracy':>9} {'correct':>8} {'median ms':>10} {'p90 ms':>8}"
        print(f"{head}  load")
        for name in names:
            if name in ("llm", "hybrid") and not settings.llm_configured:
                print(f"{name:<10} skipped: no LLM configured")
                continue
            tagger = tagger_for(name, GraphContext.open(settings, driver, schema))
            tags: list[list[str]] = []
            times: list[float] = []
            for warm in (True, False):
                for q in questions:
                    start = time.perf_counter()
                    found = list(tagger.tag(q.question))
                    if not warm:
                        times.append(time.perf_counter() - start)
                        tags.append(found)
            score = tagging_accuracy(name, golds, tags)
            median = statistics.median(times) * 1000
            p90 = statistics.quantiles(times, n=10)[-1] * 1000 if len(times) > 1 else median
            print(
                f"{name:<10} {score.accuracy:>8.1%} {score.correct:>4}/{score.gold_entities:<3} "
                f"{median:>10.1f} {p90:>8.1f}  {_load()}"
            )
            results.append(
                {
                    "tagger": name,
                    "accuracy": score.accuracy,
                    "correct": score.correct,
                    "gold_entities": score.gold_entities,
                    "median_ms": median,
                    "p90_ms": p90,
                    "loadavg": _load(),
                }
            )
            if args.misses:
                for q, gold, found in zip(questions, golds, tags, strict=True):
                    if gold and tags_correct(gold, found) < len(gold):
                        print(f"    miss {gold} got {found[:3]} | {q.question}")
    finally:
        driver.close()
    if args.out:
        args.out.write_text(json.dumps({"bundle": str(bundle), "taggers": results}, indent=2))


if __name__ == "__main__":
    main()
