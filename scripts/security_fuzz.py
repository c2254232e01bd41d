"""Identifier fuzz of the hostile suite, long form: prints the figures for docs/security.md.

    python scripts/security_fuzz.py --names 1000            # every name rendered, and against
                                                            # the server (NEO4J_URI)
    python scripts/security_fuzz.py --names 5000 --db-names 200

Every name goes through every identifier source (mapping-file fields, index-name settings,
relationship types and property keys from the database) into select / retrieve / load / migrate
templates and the filter and hop compilers (``tests/security_fuzz.compile_fuzz``, with every
template that renders from a schema alone); ``--db-names`` of them (default: all) also run
against the server with the sample KB loaded (``db_fuzz``), with a listener on 127.0.0.1 that
the names' ``LOAD CSV`` payloads point at. Exit status 1 on any failure, write, schema change
or outbound request. ``tests/test_security_fuzz.py`` is the short form.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from guidedrag_graph.config import load_settings  # noqa: E402
from guidedrag_graph.db.connection import connect  # noqa: E402
from scripts.security_exhaustion import ensure_sample  # noqa: E402
from tests.security import hostile_names, listener  # noqa: E402
from tests.security_fuzz import Figures, compile_fuzz, db_fuzz  # noqa: E402


def show(title: str, figures: Figures) -> None:
    sources = sorted(set(figures.accepted) | set(figures.refused))
    per = ", ".join(
        f"{s} {figures.accepted[s]} accepted / {figures.refused[s]} refused" for s in sources
    )
    print(f"{title}: {per}; {figures.renders} renders checked; {figures.seconds:.1f} s")
    print(f"  failures (unsafe render, other shape, multi-line refusal): {len(figures.failures)}")
    for failure in figures.failures[:10]:
        print(f"    {failure}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", type=int, default=1_000)
    parser.add_argument("--db-names", type=int, default=None, help="default: all of them")
    parser.add_argument("--seed", type=int, default=22)
    args = parser.parse_args(argv)
    settings = load_settings()
    driver = connect(settings)
    try:
        ensure_sample(driver, settings)
        with listener() as seen:
            names = hostile_names(args.names, url=seen.url, seed=args.seed)
            offline = compile_fuzz(names, all_templates=True)
            show(f"rendered ({len(names)} names)", offline)
            vector = driver.execute_query(
                "MATCH (c:Chunk) RETURN c.embedding AS v ORDER BY c.id LIMIT 1"
            ).records[0]["v"]
            subset = names[: args.db_names] if args.db_names is not None else names
            online = db_fuzz(driver, settings, subset, seen.requests, [float(x) for x in vector])
        show(f"against the server ({len(subset)} names)", online)
        print(
            f"  writes {online.writes}, schema changes {online.schema_changes}, outbound "
            f"requests {online.outbound} (listener total {len(seen.requests)})"
        )
    finally:
        driver.close()
    bad = offline.failures or online.failures or online.writes or online.schema_changes
    return 1 if bad or online.outbound or seen.requests else 0


if __name__ == "__main__":
    raise SystemExit(main())
