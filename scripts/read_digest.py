"""Record every read a set of requests sends, and print one digest of them (issue 37).

A refactor that moves deciding out of the code that reads (name resolution's facts, the
ranking's) must leave the reads themselves as they were: the same templates, parameters and
order, and the same answers. This runs a fixed list of requests against the KB ``NEO4J_URI``
names (the sample KB: ``guidedrag load --sample``), cold and then warm, and writes one line per
read — template name, its parameters (vectors left out), the ids of the rows it returned — and
the digest of all of them. Run it on two builds against the same KB: equal digests, equal reads.

    python scripts/read_digest.py --out /tmp/reads-branch.txt
"""

from __future__ import annotations

import argparse
import hashlib
import json
import threading
from collections.abc import Callable
from typing import Any

from guidedrag_graph.config import Settings
from guidedrag_graph.db import fit, reads
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.retrieval.filters import FilterError
from guidedrag_graph.selection import scope_names
from guidedrag_graph.semantics import Semantics

QUESTION = "Which countries use the euro?"

# (label, call): stated entities known and unknown, relations, documents, a bare question,
# hard selections with unknown names (suggestions and the index diagnosis), scoped requests;
# then (FILTERED) chunk filters and (SCOPE_COMPILED) scopes compiled on each path.
REQUESTS: list[tuple[str, Callable[[GuidedRAG], Any]]] = [
    ("bare question", lambda rag: rag.retrieve(QUESTION)),
    ("stated entity", lambda rag: rag.retrieve(QUESTION, semantics=Semantics(entities=("Euro",)))),
    (
        "stated unknown entity",
        lambda rag: rag.retrieve(QUESTION, semantics=Semantics(entities=("Eurro",))),
    ),
    (
        "stated entity and relation",
        lambda rag: rag.retrieve(
            QUESTION,
            semantics=Semantics(entities=("Euro",), relations=("is currency of",), relational=True),
        ),
    ),
    (
        "stated unknown relation",
        lambda rag: rag.retrieve(
            QUESTION,
            semantics=Semantics(entities=("Euro",), relations=("is curency of",), relational=True),
        ),
    ),
    ("hard entity", lambda rag: rag.retrieve(QUESTION, "entity('Euro')", steering="hard")),
    (
        "hard hop",
        lambda rag: rag.retrieve(QUESTION, "hop('Euro', ['IS_CURRENCY_OF'])", steering="hard"),
    ),
    (
        "hard unknown hop types, twice",
        lambda rag: rag.retrieve(
            QUESTION,
            "hop('Euro', ['IS_CURENCY_OF']) | hop('Monaco', ['IS_CURENCY_OF'])",
            steering="hard",
        ),
    ),
    (
        "hard unknown names",
        lambda rag: rag.retrieve(
            QUESTION,
            "entity('Atlantiss') | khop('Atlantiss', 1) | entity(['Zqxwv', 'Euro', 'Eurro'])",
            steering="hard",
        ),
    ),
    (
        "hard documents",
        lambda rag: rag.retrieve(
            QUESTION,
            "document('wiki:Journal of Mathematical Physics') | document('Film Journal "
            "International') | document('No such title')",
            steering="hard",
        ),
    ),
    (
        "hard all unknown",
        lambda rag: rag.retrieve(QUESTION, "entity('Qqqq') & near('Wwww')", steering="hard"),
    ),
]
SCOPE = "entity('Euro') | document('Film Journal International')"
SCOPED: list[tuple[str, Callable[[GuidedRAG], Any]]] = [
    ("scoped bare", lambda rag: rag.retrieve(QUESTION)),
    ("scoped stated", lambda rag: rag.retrieve(QUESTION, semantics=Semantics(entities=("Euro",)))),
    (
        "scoped outside names",
        lambda rag: rag.retrieve(
            QUESTION,
            "entity(['Monaco', 'Euro']) | hop('Euro', ['IS_CURRENCY_OF', 'ESTABLISHED_IN'])"
            " | document('wiki:Journal of Mathematical Physics') | entity('Eurr')",
            steering="hard",
        ),
    ),
]

# Under the scope too large to hold, a name the KB has only outside it, asked twice: its scope
# check, then (kept as [] under the scope's key, as a name outside a held scope) no read.
OUTSIDE = "entity(['Journal of Mathematical Physics', 'Euro'])"
UNHELD: list[tuple[str, Callable[[GuidedRAG], Any]]] = [
    ("outside name", lambda rag: rag.retrieve(QUESTION, OUTSIDE, steering="hard")),
    ("outside name again", lambda rag: rag.retrieve(QUESTION, OUTSIDE, steering="hard")),
]

# Chunk filters: one chunk passes (one only: which passing chunk the check reads first depends
# on the store's order, so a filter passing many would make the digest depend on how the KB was
# loaded), none passes (the request abstains after the property keys and the check are read),
# and a property no node has (refused after the keys are read).
ONE_CHUNK = "mq-207443eaaee1cc5f"
FILTERED: list[tuple[str, Callable[[GuidedRAG], Any]]] = [
    ("filtered", lambda rag: rag.retrieve(QUESTION, filters={"id": ONE_CHUNK})),
    ("filtered to nothing", lambda rag: rag.retrieve(QUESTION, filters={"position": {"$lt": -1}})),
    (
        "filter on an unknown property",
        lambda rag: _refused(lambda: rag.retrieve(QUESTION, filters=UNKNOWN_PROPERTY)),
    ),
]
UNKNOWN_PROPERTY = {"no_such_property": 1}


def _refused(call: Callable[[], Any]) -> None:
    """``call`` refused for a filter on a property no node has, as it must be."""
    try:
        call()
    except FilterError:
        return
    raise AssertionError(f"filters {UNKNOWN_PROPERTY!r} were not refused")


# Trusted scopes compiled on each path (``selection/scope_compiled.py``): a property filter alone
# (one chunk: the property keys, then its size), beside a selection (keys, names, size), on a
# property no node has (refused after the keys), passing no chunk (empty: abstains), passing
# every chunk (whole: the unscoped plan), and names the KB lacks (empty before any size).
ALL_CHUNKS = {"position": {"$gte": 0}}
SCOPE_COMPILED: list[tuple[str, Callable[[GuidedRAG], Any]]] = [
    ("property scope", lambda rag: rag.scoped({"filters": {"id": ONE_CHUNK}}).retrieve(QUESTION)),
    (
        "selection and property scope",
        lambda rag: rag.scoped({"selection": SCOPE, "filters": ALL_CHUNKS}).retrieve(QUESTION),
    ),
    (
        "scope on an unknown property",
        lambda rag: _refused(lambda: rag.scoped({"filters": UNKNOWN_PROPERTY}).retrieve(QUESTION)),
    ),
    (
        "scope passing no chunk",
        lambda rag: rag.scoped({"filters": {"position": {"$lt": -1}}}).retrieve(QUESTION),
    ),
    (
        "scope passing every chunk",
        lambda rag: rag.scoped({"filters": ALL_CHUNKS}).retrieve(QUESTION),
    ),
    (
        "scope of unknown names",
        lambda rag: rag.scoped("document('No such title') | entity('Eurro')").retrieve(QUESTION),
    ),
]


# Relation linking on (GUIDEDRAG_LINK_RELATIONS=on: the sample KB's free-text vocabulary read
# as a typed one's): a bare question's relation types linked, whole KB and under the scopes.
TYPED: list[tuple[str, Callable[[GuidedRAG], Any]]] = [
    ("typed bare question", lambda rag: rag.retrieve(QUESTION)),
    ("typed bare question again", lambda rag: rag.retrieve(QUESTION)),
    ("typed scoped bare", lambda rag: rag.scoped(SCOPE).retrieve(QUESTION)),
    (
        "typed unheld scoped bare",
        lambda rag: rag.scoped("entity('Euro') | entity('Monaco')").retrieve(QUESTION),
    ),
]


def _plain(value: Any) -> Any:
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, float) for v in value):
        return f"<vector {len(value)}>"
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in sorted(value.items())}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value if isinstance(value, (str, int, float, bool, type(None))) else repr(value)


def _row_ids(rows: list[dict[str, Any]]) -> Any:
    """The rows' ids (or names: suggestions); else their number and columns only (a server
    fact such as the rank plugin's free cache memory differs from run to run)."""
    for column in ("id", "name"):
        if rows and all(column in r for r in rows):
            return [_plain(r[column]) for r in rows]
    return [len(rows), sorted({k for r in rows for k in r})]


def record(lines: list[str]) -> None:
    """Every read, as sent: the one read function's sync runner and the fit module's reads."""
    inner = reads.read_query

    def traced(driver: Any, query: str, params: Any = None, **kw: Any) -> Any:
        try:
            rows = inner(driver, query, params, **kw)
        except Exception as exc:
            lines.append(json.dumps([threading.current_thread().name, "failed", repr(exc)]))
            raise
        shown = _plain(dict(params or {}))
        digest = hashlib.sha256(query.encode()).hexdigest()[:12]
        lines.append(
            json.dumps(
                [threading.current_thread().name, digest, shown, _row_ids(rows)], sort_keys=True
            )
        )
        return rows

    reads.read_query = traced  # type: ignore[assignment]
    fit.read_query = traced  # type: ignore[assignment]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--small-scope", type=int, default=50, help="entities a scope may hold")
    args = parser.parse_args()
    lines: list[str] = []
    record(lines)
    with GuidedRAG(Settings()) as rag:
        for rounds in ("cold", "warm"):
            for label, call in REQUESTS:
                lines.append(f"## {rounds} {label}")
                call(rag)
            view = rag.scoped(SCOPE)
            for label, call in SCOPED:
                lines.append(f"## {rounds} {label}")
                call(view)
            for label, call in FILTERED:
                lines.append(f"## {rounds} {label}")
                call(rag)
            for label, call in SCOPE_COMPILED:
                lines.append(f"## {rounds} {label}")
                call(rag)
        # a scope over more entities than it may hold: its names are checked per request
        scope_names.scope_names.__defaults__ = (args.small_scope,)
        view = rag.scoped("entity('Euro') | entity('Monaco')")
        for label, call in SCOPED + UNHELD:
            lines.append(f"## unheld {label}")
            call(view)
    with GuidedRAG(Settings(link_relations="on")) as rag:
        for label, call in TYPED:
            lines.append(f"## {label}")
            call(rag)
    text = "\n".join(lines) + "\n"
    with open(args.out, "w", encoding="utf-8") as out:
        out.write(text)
    reads_sent = sum(1 for line in lines if not line.startswith("## "))
    print(f"{reads_sent} reads, digest {hashlib.sha256(text.encode()).hexdigest()[:16]}")


if __name__ == "__main__":
    main()
