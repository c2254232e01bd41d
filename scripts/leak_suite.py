"""The scope leak suite, long form (issue 35): prints the counts for docs/security.md.

    python scripts/leak_suite.py                 # NEO4J_URI's database: WIPED, two tenants loaded
    python scripts/leak_suite.py --requests 3000 --seed 7
    python scripts/leak_suite.py --scope '{"filters": {"id": {"$like": "ta-chunk-"}}}'

With the scope set to tenant A (``source('tenant-a')``), every hostile request of
``tests/scope_leaks.requests`` (B's names and near-misses, B-only relation types, selections
with ``|`` to B, ``near``/``khop`` from shared hubs, widening filters, ``all()``-like
selections, MCP arguments including ``scope``, Browser scripts run as printed, ``ask`` with the
prompts a local OpenAI-compatible server received, LangChain and LlamaIndex documents), plus
the CLI's ``--json`` doors (``--cli``), is sent and every output scanned. Prints requests,
outputs scanned and the B chunks / entity names / triplets / suggestions found; exit status 1
if any is not 0. ``tests/test_scope_leaks.py`` is the short form.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from guidedrag_graph.config import load_settings  # noqa: E402
from guidedrag_graph.db.connection import connect  # noqa: E402
from tests import scope_leaks as L  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=0, help="0: every request (1,000+)")
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument("--cli", action="store_true", help="also the CLI's doors (a process each)")
    parser.add_argument(
        "--scope",
        default=None,
        help="tenant A's scope in another form, e.g. a property scope: "
        '\'{"filters": {"id": {"$like": "ta-chunk-"}}}\' (default: source(\'tenant-a\'))',
    )
    args = parser.parse_args(argv)
    if args.scope:  # every door of the suite reads the tenant KB's SCOPE_A
        L.T.SCOPE_A = args.scope
    settings = load_settings()
    driver = connect(settings)
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        L.load_if_needed(driver, settings, Path(tmp) / "tenants")
        batch = L.requests(rng)
        batch = L.sample(rng, batch, args.requests) if args.requests else batch
        cwd = Path(tmp) if args.cli else None
        with L.opened_doors(settings, driver, cli_cwd=cwd) as doors:
            figures = L.run(doors, batch + (L.cli_requests() if args.cli else []))
    driver.close()
    print("\n".join(figures.lines()))
    return 1 if figures.leaks else 0


if __name__ == "__main__":
    sys.exit(main())
