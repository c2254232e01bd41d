"""Does linking relation types from the question's words help a bare question? (issue 19)

For each answerable question of a bundle (the database must hold its KB), the question alone is
retrieved as the default does (``auto``, entities linked), then again with relation types linked
from its words added: the relation types on the linked entities whose normalised words (stemmed,
stop words left out, ``selection.resolver.type_key``) all occur in the question. Prints
relevant@k both ways. On MuSiQue (100 questions, k = 5): 55% without, 54% with (25 questions got
relation types), so the default does not link relation types.

    python benchmarks/relation_linking.py out/musique [-k 5]
"""

from __future__ import annotations

import argparse
import json
import re

from guidedrag_graph.config import Settings
from guidedrag_graph.db.connection import connect
from guidedrag_graph.kb import read_bundle
from guidedrag_graph.linking.entities import STOP_WORDS
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.selection.resolver import stem, type_key
from guidedrag_graph.semantics import Semantics

# An experiment outside the package: its one query stays here.
ADJACENT_TYPES = (
    "MATCH (e:Entity)-[x]-(:Entity) WHERE e.name IN $names RETURN DISTINCT type(x) AS t"
)


def _words(text: str) -> set[str]:
    return {stem(w.upper()) for w in re.findall(r"\w+", text) if w.lower() not in STOP_WORDS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle")
    parser.add_argument("-k", type=int, default=5)
    args = parser.parse_args()
    settings = Settings()
    driver = connect(settings)
    rag = GuidedRAG(settings, driver=driver)
    questions = [q for q in read_bundle(args.bundle).questions if q.answerable]
    plain = linked = changed = 0
    for q in questions:
        first = rag.retrieve(q.question, k=args.k)
        names = [n["entity"] for n in first.linked]
        words = _words(q.question)
        relations: set[str] = set()
        if names:
            for row in driver.execute_query(ADJACENT_TYPES, names=names).records:
                key = {w for w in type_key(row["t"]) if w.lower() not in STOP_WORDS}
                if key and key <= words:
                    relations.add(row["t"])
        second = first
        if relations:
            changed += 1
            semantics = Semantics(
                entities=tuple(names),
                relations=tuple(sorted(relations)),
                relational=True,
                complexity=2 if len(names) > 1 else 1,
            )
            second = rag.retrieve(q.question, semantics=semantics, k=args.k)
        plain += any(c.id in q.gold_chunk_ids for c in first.chunks)
        linked += any(c.id in q.gold_chunk_ids for c in second.chunks)
    n = len(questions)
    print(
        json.dumps(
            {
                "questions": n,
                "with_relations_linked": changed,
                f"question_only_relevant@{args.k}": round(plain / n, 3),
                f"plus_linked_relations_relevant@{args.k}": round(linked / n, 3),
            }
        )
    )


if __name__ == "__main__":
    main()
