"""Probe (issue 19): how far can the default get by fusing in the ppr-reference's ranking?

    python scripts/ppr_fusion_probe.py --bundle out/musique     # NEO4J_URI etc. from the env

On a loaded KB with questions, ranks every answerable question two ways: the default
(``GuidedRAG.retrieve`` with its semantics, ``auto``, top 100) and the eval's ``ppr-reference``
(``evaluation/peers.py``: personalized PageRank over the entity-chunk graph, top 100). Then prints
relevant@5 of each, of their reciprocal-rank fusion over a small grid (weight of PPR ×
smoothing K), and of the oracle "either top 5 holds the answer" (no fusion can beat it).

The grid is a probe, not a fit: every cell is scored on the same questions it is chosen on, so
its best cell flatters fusion. It answers one question: is "+10 points over ppr-reference" in
reach of these two signals at all?
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from benchmarks.doors import questions_and_rag
from guidedrag_graph.config import Settings
from guidedrag_graph.db.connection import connect
from guidedrag_graph.evaluation.peers import Peers
from guidedrag_graph.evaluation.rows import Formulation

DEPTH = 100


def fuse(a: list[str], b: list[str], weight: float, smoothing: int) -> list[str]:
    """Reciprocal-rank fusion of two rankings (``b`` weighted), ties by id."""
    scores: dict[str, float] = {}
    for w, ranking in ((1.0, a), (weight, b)):
        for rank, chunk in enumerate(ranking, start=1):
            scores[chunk] = scores.get(chunk, 0.0) + w / (smoothing + rank)
    return sorted(scores, key=lambda c: (-scores[c], c))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=100)
    args = parser.parse_args(argv)
    settings = Settings(openai_api_key=None, openai_base_url=None)
    driver = connect(settings)
    try:
        questions, vectors, rag = questions_and_rag(settings, driver, args.bundle, args.limit)
        peers = Peers(rag)
        guided, ppr, gold = [], [], []
        for q, v in zip(questions, vectors, strict=True):
            found = rag.retrieve(q.question, semantics=q.semantics, query_vector=v, k=DEPTH)
            guided.append([c.id for c in found.chunks])
            asked = Formulation("answerable", q, q.question, 0)
            ppr.append(peers.ppr_ranking(asked, np.asarray(v, dtype=np.float64), DEPTH))
            gold.append(set(q.gold_chunk_ids))
    finally:
        driver.close()

    def relevant(rankings: list[list[str]]) -> float:
        hits = [any(c in g for c in r[:5]) for r, g in zip(rankings, gold, strict=True)]
        return 100.0 * sum(hits) / len(hits)

    print(f"{len(questions)} questions; relevant@5 (%)")
    print(f"  default (auto)      {relevant(guided):5.1f}")
    print(f"  ppr-reference       {relevant(ppr):5.1f}")
    for weight in (0.25, 0.5, 1.0, 2.0):
        for smoothing in (5, 20, 60):
            fused = [fuse(a, b, weight, smoothing) for a, b in zip(guided, ppr, strict=True)]
            print(f"  fused w={weight:<4} K={smoothing:<3} {relevant(fused):5.1f}")
    either = [a[:5] + b[:5] for a, b in zip(guided, ppr, strict=True)]
    hits = [any(c in g for c in e) for e, g in zip(either, gold, strict=True)]
    print(f"  either top 5 (oracle, not a ranking) {100.0 * sum(hits) / len(hits):5.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
