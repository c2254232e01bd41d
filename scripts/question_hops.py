"""The hops of a question's way: which ``guidedrag_graph`` modules one ``GuidedRAG.retrieve``
crosses, and how many distinct module-to-module calls it makes (issue 37 counted "about 30
modules in about 45 hops").

A profile hook (``sys.setprofile``) sees every Python call made while one question is retrieved;
each call into a ``guidedrag_graph`` module from another one (the nearest ``guidedrag_graph``
frame below it) is a hop. ``modules`` counts the distinct modules entered, ``hops`` the distinct
(caller module → callee module) pairs, ``calls`` every such crossing (not deduplicated). Two
questions, each traced once warm (after one untraced call, so the link index and the cached
names are loaded, as on a serving process): one bare, one with stated semantics.

Run against the sample KB (the tests' ``sample_db``: the bundled MuSiQue subset; the question
is its first row's), with the tree to measure first on ``PYTHONPATH``::

    PYTHONPATH=. python scripts/question_hops.py            # this tree
    PYTHONPATH=/tmp/before python scripts/question_hops.py  # another tree (git archive)

``--edges`` prints the pairs; ``--cold`` traces the first call instead.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

PACKAGE = "guidedrag_graph"
JOURNAL = "Journal of Psychotherapy Integration"
BARE = "Who was the first president of the association which published " + JOURNAL + "?"


def _module(frame: FrameType | None) -> str | None:
    """The nearest ``guidedrag_graph`` module on the stack from ``frame`` down."""
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if name == PACKAGE or name.startswith(PACKAGE + "."):
            return str(name)
        frame = frame.f_back
    return None


def trace(call: Callable[[], Any]) -> dict[str, Any]:
    """``call()`` under a profile hook: the modules it entered and the hops between them."""
    modules: set[str] = set()
    edges: dict[tuple[str, str], int] = {}

    def hook(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        name = frame.f_globals.get("__name__", "")
        if not (name == PACKAGE or name.startswith(PACKAGE + ".")):
            return
        modules.add(name)
        caller = _module(frame.f_back)
        if caller is not None and caller != name:
            edges[(caller, name)] = edges.get((caller, name), 0) + 1

    sys.setprofile(hook)
    try:
        result = call()
    finally:
        sys.setprofile(None)
    return {
        # an abstention takes a shorter way: not the sample KB, or not the question it knows
        "abstained": bool(getattr(result, "abstained", False)),
        "modules": len(modules),
        "hops": len(edges),
        "calls": sum(edges.values()),
        "module_list": sorted(modules),
        "edges": sorted(f"{a} -> {b}" for a, b in edges),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--question", default=BARE)
    parser.add_argument("--entity", default=JOURNAL, help="the stated semantics' entity")
    parser.add_argument("--edges", action="store_true", help="print every hop")
    parser.add_argument("--cold", action="store_true", help="trace the first call, not a warm one")
    args = parser.parse_args(argv)

    from guidedrag_graph.pipeline import GuidedRAG
    from guidedrag_graph.semantics import Semantics

    stated = Semantics(entities=(args.entity,))
    report: dict[str, Any] = {"tree": __import__(PACKAGE).__file__}
    with GuidedRAG() as rag:
        for label, call in (
            ("bare", lambda: rag.retrieve(args.question)),
            ("stated", lambda: rag.retrieve(args.question, semantics=stated)),
        ):
            if not args.cold:
                call()
            seen = trace(call)
            if not args.edges:
                seen.pop("edges")
                seen.pop("module_list")
            report[label] = seen
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
