"""Differential check of the entity linker: another version's ``link()`` against this one's.

The in-process key index (``guidedrag_graph/linking/index.py``) must link exactly what the query
path linked. This links every question of a bundle (and, with ``--extra``, more texts) with an
old ``linking/entities.py`` (``git show main:guidedrag_graph/linking/entities.py >
/tmp/old_linking.py``) and with
this checkout's linker — in-process and by query — on one server, READ transactions only, and
prints how many differ, with the differences. Compared: every field of every Link, in order
(name, kind, the span's words, text and keys, mentions, document subject, context, alternate).

    python scripts/link_differential.py /tmp/old_linking.py /tmp/link-mus \
        [--extra /work/shared/data/musique/musique_train.json] [--chunks 2000] [--json out.json]

The server comes from NEO4J_URI / NEO4J_PASSWORD / NEO4J_DATABASE, as for every command.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.kb import read_questions
from guidedrag_graph.linking.entities import EntityLinker


def _module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("old_linking", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["old_linking"] = module
    spec.loader.exec_module(module)
    return module


def _row(link: Any) -> tuple[Any, ...]:
    s = link.span
    return (
        link.name,
        link.kind,
        s.start,
        s.end,
        s.text,
        tuple(sorted(s.keys)),
        tuple(sorted(s.folded)),
        s.proper,
        s.partial,
        s.content_words,
        link.mentions,
        link.document_subject,
        link.context,
        link.alternate,
    )


def _texts(bundle: Path, extra: Path | None, chunks: int) -> dict[str, list[str]]:
    sets: dict[str, list[str]] = {}
    for label, folder in (("questions", bundle), ("unanswerable", bundle / "unanswerable")):
        if (folder / "questions.jsonl").is_file():
            qs = read_questions(folder)
            sets[label] = [q.question for q in qs]
            sets.setdefault("paraphrases", []).extend(p for q in qs for p in q.paraphrases)
    if extra:
        rows = json.loads(extra.read_text("utf-8"))
        sets["sub-questions"] = [s["question"] for r in rows for s in r["question_decomposition"]]
    if chunks:
        sentences: list[str] = []
        with (bundle / "chunks.jsonl").open(encoding="utf-8") as f:
            for line in f:
                text = json.loads(line)["text"]
                sentences += [s for s in re.split(r"(?<=[.!?])\s+|\n", text) if s.strip()]
        sets["chunk sentences"] = sentences[:chunks]
    return {k: v for k, v in sets.items() if v}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path, help="the other version's linking/entities.py")
    parser.add_argument("bundle", type=Path, help="a bundle folder (questions.jsonl)")
    parser.add_argument("--extra", type=Path, help="a MuSiQue JSON file: its sub-questions too")
    parser.add_argument("--chunks", type=int, default=0, help="this many chunk sentences too")
    parser.add_argument("--json", type=Path, help="write the differences here")
    args = parser.parse_args()
    old = _module(args.old)
    graph = GraphContext.open(Settings())
    try:
        before = old.EntityLinker(graph)
        after = EntityLinker(graph)
        report: dict[str, Any] = {}
        for label, texts in _texts(args.bundle, args.extra, args.chunks).items():
            differ: list[dict[str, Any]] = []
            for text in texts:
                want = [_row(lk) for lk in before.link(text)]
                held = [_row(lk) for lk in after.link(text)]
                query = [_row(lk) for lk in after.link_by_query(text)]
                if held != want or query != want:
                    differ.append(
                        {
                            "text": text,
                            "old": want,
                            "held": held,
                            "query": query,
                            "held_only": sorted({r[0] for r in held} - {r[0] for r in want}),
                            "old_only": sorted({r[0] for r in want} - {r[0] for r in held}),
                        }
                    )
            report[label] = {"texts": len(texts), "differ": len(differ), "cases": differ}
            print(f"{label}: {len(texts)} texts, {len(differ)} differ", flush=True)
            for case in differ[:10]:
                print(f"  {case['text'][:100]!r}")
                print(f"    held only: {case['held_only']}  old only: {case['old_only']}")
                if case["query"] != case["old"]:
                    print("    (the query path differs from the old linker too)")
        if args.json:
            args.json.write_text(json.dumps(report, indent=1, default=list), encoding="utf-8")
        return 1 if any(r["differ"] for r in report.values()) else 0
    finally:
        graph.close()


if __name__ == "__main__":
    raise SystemExit(main())
