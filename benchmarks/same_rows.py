"""Do two trees return the same rows? A latency change must not change what is retrieved.

Takes a synthetic bundle's questions as ``doors.py`` makes them (``synthetic_questions``: each
names its chunk's least-mentioned entity, the chunk's own vector as the question's), retrieves
each one through the default (semantics stated, ``auto``) and as a bare question, at each ``-k``,
and writes every row that a caller sees (ids, scores, cosines, tiers, boosts, linked names and
relations, tier sizes, notes, semantics) to ``--out``. With ``--against`` (a file an earlier run
wrote, e.g. from the tree before, ``PYTHONPATH`` at it) it compares call by call and exits 1 on
any difference, printing the first few.

    PYTHONPATH=/path/to/main python benchmarks/same_rows.py --bundle B --out before.json
    python benchmarks/same_rows.py --bundle B --out after.json --against before.json

``GUIDEDRAG_RANK_PLUGIN=off`` runs the Cypher ranking variant (the server's plugin otherwise).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.append(str(REPO))

from benchmarks.doors import synthetic_questions  # noqa: E402
from guidedrag_graph.config import Settings  # noqa: E402
from guidedrag_graph.db.connection import connect  # noqa: E402
from guidedrag_graph.embeddings import embedder_for  # noqa: E402
from guidedrag_graph.pipeline import GuidedRAG  # noqa: E402
from guidedrag_graph.schema.presets import schema_for  # noqa: E402


def call_rows(result: Any) -> dict[str, Any]:
    """What a caller reads from one retrieval (timings and query text left out)."""
    return {
        "chunks": [
            [c.id, c.score, c.cosine, c.in_selection, c.tier, c.boost, list(c.tiers)]
            for c in result.chunks
        ],
        "linked": [dict(x) for x in result.linked],
        "tier_sizes": dict(result.tier_sizes),
        "notes": list(result.notes),
        "semantics": None if result.semantics is None else result.semantics.model_dump(mode="json"),
        "path": result.path,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=100, help="questions")
    parser.add_argument("-k", type=int, nargs="+", default=[5, 40])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--against", type=Path, help="rows an earlier run wrote")
    args = parser.parse_args(argv)

    settings = Settings(openai_api_key=None, openai_base_url=None)
    driver = connect(settings)
    try:
        questions, vectors = synthetic_questions(args.bundle, args.limit)
        rag = GuidedRAG(
            settings,
            driver=driver,
            schema=schema_for(settings.schema_preset),
            embedder=embedder_for(settings, cache=True),
        )
        rows: dict[str, Any] = {}
        for q, v in zip(questions, vectors, strict=True):
            for k in args.k:
                stated = rag.retrieve(q.question, semantics=q.semantics, query_vector=v, k=k)
                bare = rag.retrieve(q.question, query_vector=v, k=k)
                rows[f"{q.id} k={k} default"] = call_rows(stated)
                rows[f"{q.id} k={k} question"] = call_rows(bare)
    finally:
        driver.close()
    args.out.write_text(json.dumps(rows, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(rows)} calls, {len(questions)} questions ({rag.graph.rank_plugin=}, library at")
    print(f"{Path(sys.modules['guidedrag_graph'].__file__ or '').parent}); wrote {args.out}")
    if args.against is None:
        return 0
    before = json.loads(args.against.read_text(encoding="utf-8"))
    after = json.loads(json.dumps(rows, sort_keys=True))
    differ = [key for key in sorted(set(before) | set(after)) if before.get(key) != after.get(key)]
    for key in differ[:5]:
        print(f"differs: {key}\n  before {before.get(key)}\n  after  {after.get(key)}")
    print(f"{len(after) - len(differ)} of {len(after)} calls identical to {args.against}")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
