"""What a scope costs the default (issue 35): ``auto``'s p50 with a scope of 1% of the KB's
documents against no scope, in the same process, calls alternating.

The database must hold the bundle's KB (``guidedrag load``); the connection is the usual
settings' (``NEO4J_URI``, ``NEO4J_PASSWORD``). Each answerable question is retrieved as the
default does (``auto``, its stated semantics; ``--bare``: the question alone, entities linked),
with the question embedded once beforehand (``--embed``: embedded on every call, as a door
does), so the figure is the pipeline's own. Both pipelines share one driver and the KB's warm
state; each is warmed on every question first (the scope is compiled and sized once per KB
version, as in a server), then ``--rounds`` rounds alternate which one goes first. Prints
p50/p90 of each and the ratio; the acceptance is p50 scoped / unscoped ≤ 1.1.

    python benchmarks/scope_cost.py /work/dev/ev/musique [--rounds 5] [--fraction 0.01]

Run it on a quiet machine: it times calls, and a shared machine's load moves both sides.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import Any

from guidedrag_graph.config import Settings
from guidedrag_graph.db.connection import connect
from guidedrag_graph.kb import read_bundle
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.selection import document


def scope_of(documents: list[str], fraction: float, seed: int) -> str:
    """``fraction`` of the documents (at least one), drawn with ``seed``, as a scope."""
    count = max(1, round(len(documents) * fraction))
    chosen = sorted(random.Random(seed).sample(sorted(documents), count))
    expr = document(chosen[0])
    for name in chosen[1:]:
        expr = expr | document(name)
    return expr.to_text()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--fraction", type=float, default=0.01, help="of the documents")
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--bare", action="store_true", help="the question alone (linked)")
    parser.add_argument("--embed", action="store_true", help="embed on every call")
    args = parser.parse_args()

    bundle = read_bundle(args.bundle)
    questions = [q for q in bundle.questions if q.answerable]
    scope = scope_of([d.id for d in bundle.documents], args.fraction, args.seed)
    settings = Settings()
    driver = connect(settings)
    plain = GuidedRAG(settings, driver=driver)
    scoped = plain.scoped(scope)
    compiled = plain.selector.scope(scoped.scope)
    assert compiled is not None and not compiled.empty
    vectors = plain.embedder.embed_queries([q.question for q in questions])

    def call(rag: GuidedRAG, i: int) -> float:
        q = questions[i]
        options: dict[str, Any] = {"k": args.k}
        if not args.bare:
            options["semantics"] = q.semantics
        if not args.embed:
            options["query_vector"] = [float(x) for x in vectors[i]]
        started = time.perf_counter()
        rag.retrieve(q.question, **options)
        return time.perf_counter() - started

    for i in range(len(questions)):  # warm both: resolved names, the scope, the plugin's cache
        call(plain, i)
        call(scoped, i)
    times: dict[str, list[float]] = {"none": [], "scope": []}
    for r in range(args.rounds):
        for i in range(len(questions)):
            pair = [("none", plain), ("scope", scoped)]
            for name, rag in pair if (r + i) % 2 == 0 else reversed(pair):
                times[name].append(call(rag, i))
    driver.close()

    print(
        f"{len(questions)} questions x {args.rounds} rounds, k={args.k}, "
        f"{'bare (linked)' if args.bare else 'stated semantics'}, "
        f"{'embedded per call' if args.embed else 'pre-embedded'}; scope: "
        f"{args.fraction:.1%} of {len(bundle.documents)} documents = {compiled.size} chunks"
    )
    for name, values in times.items():
        print(
            f"  {name:5s}  p50 {1000 * statistics.median(values):7.2f} ms   "
            f"p90 {1000 * percentile(values, 0.9):7.2f} ms"
        )
    ratio = statistics.median(times["scope"]) / statistics.median(times["none"])
    print(f"  p50 scope / none = {ratio:.3f} (acceptance: <= 1.1)")


if __name__ == "__main__":
    main()
