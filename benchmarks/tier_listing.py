"""What listing a tier costs: ``auto``'s tiers query with its tiers of entity terms listed, tested
by their entities, and as the planner chooses, side by side in one process.

``cypher/select_mentioned.cypher`` gives a tier of entity terms (entity, hop, khop, near) by its
entities and lists its chunks only when its entities' mentions add up to at most
``tier_list_max`` (and none of them is in more than ``exact_max`` chunks); an unlisted tier is
ranked from U's over-fetched top and each candidate tested for membership. This times, per
question, interleaved in a rotating order after a warm-up:

- ``listed``: every tier listed (the compile before select_mentioned, ``by_entities=False``);
- ``lower bound only``: entity form, ``tier_list_max`` unbounded (only the exact rule);
- ``unlisted``: entity form, ``tier_list_max`` 0 (every non-empty tier of entity terms tested);
- ``default``: entity form at the measured ``MEASURED_TIER_LIST_MAX``.

Reported: p50 of each (wall, one ``Retriever.rank_tiers`` call), the ratio to ``listed``, how
often each variant's top k equals ``listed``'s, and the crossover table: questions binned by
the size of their largest tier (chunks, from ``listed``), the median of ``listed`` and
``unlisted`` in each bin: the crossover is where ``unlisted`` becomes the faster. The bound
itself is on mentions, which are at least the chunks (a chunk may mention several of the tier's
entities). The load average is printed after each pass; compare rows of one run only.

    NEO4J_URI=... python benchmarks/tier_listing.py --bundle /work/scale/synthetic-100000 \\
        --out tier_listing.json

``--sweep`` (a bundle with no questions): the crossover itself. Questions name entities whose
mention counts spread log-evenly from 1 to the KB's largest hub, each asked with the E tier
only (``entity(x)``: its size is the entity's chunks), the vector of one of its chunks.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.doors import questions_and_rag  # noqa: E402
from guidedrag_graph.config import Settings  # noqa: E402
from guidedrag_graph.context import GraphContext  # noqa: E402
from guidedrag_graph.db.connection import connect  # noqa: E402
from guidedrag_graph.kb import Question  # noqa: E402
from guidedrag_graph.retrieval import Retriever  # noqa: E402
from guidedrag_graph.retrieval.planner import MEASURED_TIER_LIST_MAX  # noqa: E402
from guidedrag_graph.selection import Expr  # noqa: E402
from guidedrag_graph.selection.compiler import compile_plan  # noqa: E402
from guidedrag_graph.selection.primitives import Resolved  # noqa: E402
from guidedrag_graph.semantics import Semantics  # noqa: E402
from guidedrag_graph.steering.tier_prep import prepare_tiers  # noqa: E402
from guidedrag_graph.steering.tiers import TierWeights, plan_auto  # noqa: E402

LISTED, LOWER, UNLISTED, DEFAULT = "listed", "lower bound only", "unlisted", "default"
BINS = (0, 100, 300, 1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 10**12)


def load_text() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f}"


def sweep_questions(bundle: Path, limit: int) -> tuple[list[Question], list[list[float]]]:
    """``limit`` entities whose mention counts spread log-evenly over the KB's range, each asked
    about by name, with the vector of the first chunk that mentions it."""
    entity_ids = re.compile(r'"entities":\s*\[([^\]]*)\]')
    mentions: Counter[str] = Counter()
    with (bundle / "chunks.jsonl").open(encoding="utf-8") as rows:
        for line in rows:
            if found := entity_ids.search(line):
                mentions.update(json.loads(f"[{found.group(1)}]"))
    by_count = sorted(mentions, key=lambda e: (mentions[e], e))
    top = mentions[by_count[-1]]
    wanted: dict[str, None] = {}
    for j in range(limit):
        target = top ** (j / max(1, limit - 1))
        wanted[min(by_count, key=lambda e: (abs(mentions[e] - target), e))] = None
    names: dict[str, str] = {}
    with (bundle / "entities.jsonl").open(encoding="utf-8") as rows:
        for line in rows:
            entity = json.loads(line)
            if str(entity["id"]) in wanted:
                names[str(entity["id"])] = str(entity["name"])
    vectors: dict[str, list[float]] = {}
    with (bundle / "chunks.jsonl").open(encoding="utf-8") as rows:
        for line in rows:
            if len(vectors) == len(wanted):
                break
            chunk = json.loads(line)
            for e in chunk.get("entities", []):
                if e in wanted and e not in vectors:
                    vectors[e] = [float(x) for x in chunk["embedding"]]
    questions = [
        Question(
            id=f"sweep-{e}-{mentions[e]}",
            question=f"What does the KB say about {names[e]}?",
            semantics=Semantics(entities=(names[e],)),
            gold_chunk_ids=[],
        )
        for e in wanted
    ]
    return questions, [vectors[e] for e in wanted]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", type=Path, required=True)
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--sweep", action="store_true", help="E tier only, entities by degree")
    args = parser.parse_args(argv)

    settings = Settings(openai_api_key=None, openai_base_url=None)
    driver = connect(settings)
    try:
        questions, vectors, rag = questions_and_rag(settings, driver, args.bundle, args.limit)
        if args.sweep:
            questions, vectors = sweep_questions(args.bundle, args.limit)
        bounds = {LISTED: None, LOWER: 10**12, UNLISTED: 0, DEFAULT: MEASURED_TIER_LIST_MAX}
        retrievers = {
            name: Retriever(
                GraphContext.open(
                    settings.model_copy(update={"planner_tier_list_max": bound}), driver
                )
            )
            for name, bound in bounds.items()
        }
        cases = []
        for q, v in zip(questions, vectors, strict=True):
            weights = rag.policy.tier_weights(q.semantics)
            if args.sweep:  # the E tier alone (the calibrated policies may weigh it 0)
                weights = TierWeights(entity=0.1)
            plan = plan_auto(q.semantics, weights)
            prepared = prepare_tiers(rag.selector, plan, rag.retriever.paths.variant)
            if prepared.compiled is None or prepared.expr is None:
                continue
            res = rag.selector.resolution(plan.entities, diagnose=False)
            resolved: dict[Expr, Resolved] = {
                leaf: leaf.resolve(res) for leaf in prepared.expr.leaves()
            }
            listed = compile_plan(
                prepared.expr, resolved, rag.schema, hop_cap=settings.hop_cap
            ).selection(rag.schema)
            cases.append((q, v, prepared.compiled, listed))

        def call(name: str, case: Any) -> tuple[float, list[str], dict[str, int]]:
            _, v, entity_form, listed = case
            compiled = listed if name == LISTED else entity_form
            started = time.perf_counter()
            ranking = retrievers[name].rank_tiers(v, compiled, k=args.k)
            took = 1000 * (time.perf_counter() - started)
            return took, [c.id for c in ranking.chunks], ranking.tier_sizes

        names = list(bounds)
        for case in cases:  # warm-up: plans cached, pages in
            for name in names:
                call(name, case)
        times: dict[str, list[list[float]]] = {n: [[] for _ in cases] for n in names}
        tops: dict[str, list[list[str]]] = {n: [[] for _ in cases] for n in names}
        sizes: list[dict[str, int]] = [{} for _ in cases]
        loads = []
        for p in range(args.passes):
            for i, case in enumerate(cases):
                order = names[(i + p) % len(names) :] + names[: (i + p) % len(names)]
                for name in order:
                    took, ids, tier_sizes = call(name, case)
                    times[name][i].append(took)
                    tops[name][i] = ids
                    if name == LISTED:
                        sizes[i] = tier_sizes
            loads.append(load_text())
            print(f"pass {p + 1}: {loads[-1]}", flush=True)
    finally:
        driver.close()

    per_case = {n: [statistics.median(t) for t in times[n]] for n in names}
    p50 = {n: round(statistics.median(per_case[n]), 2) for n in names}
    same_top = {n: sum(tops[n][i] == tops[LISTED][i] for i in range(len(cases))) for n in names}
    largest = [max([s for s in sz.values() if s >= 0] or [0]) for sz in sizes]
    table = []
    for lo, hi in itertools.pairwise(BINS):
        inside = [i for i, n in enumerate(largest) if lo <= n < hi]
        if inside:
            table.append(
                {
                    "largest_tier_chunks": [lo, hi],
                    "questions": len(inside),
                    "listed_ms": round(statistics.median(per_case[LISTED][i] for i in inside), 2),
                    "unlisted_ms": round(
                        statistics.median(per_case[UNLISTED][i] for i in inside), 2
                    ),
                }
            )
    out = {
        "bundle": str(args.bundle),
        "questions": len(cases),
        "sweep": args.sweep,
        "k": args.k,
        "tier_list_max": MEASURED_TIER_LIST_MAX,
        "p50_ms": p50,
        "ratio_to_listed": {n: round(p50[n] / p50[LISTED], 3) for n in names},
        "same_top_k_as_listed": same_top,
        "crossover": table,
        "load": loads,
    }
    print(json.dumps(out, indent=2))
    args.out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
