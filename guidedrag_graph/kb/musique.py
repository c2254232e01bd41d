"""MuSiQue (HippoRAG subset with GPT-3.5 OpenIE) -> KB bundle v1, plus an unanswerable bundle.

What goes where, and why (see ``data/musique/README.md``):

- documents = Wikipedia titles; chunks = passages (``title\\ntext``, as HippoRAG indexes them), ids
  derived from the passage content so they are stable across runs and orderings;
- entities = each passage's title entity, its OpenIE entities, and the ends of its triples (a chunk
  mentions every entity extracted from it); relations = OpenIE triples, malformed ones dropped and
  counted;
- questions: ``gold_chunk_ids`` = the paragraph behind the **last** sub-question (it holds the
  answer), ``all_gold_chunk_ids`` = every ``is_supporting`` paragraph;
- semantics = what a user could know from the question: the entity it names (the title behind
  the first sub-question, if it is an entity of the KB), and the first hop's relation only when the
  question's own words name a predicate of that entity. Never the answer, never a bridge entity.
- the unanswerable bundle (:mod:`~guidedrag_graph.kb.musique_bundles`) removes one named
  entity's chunks and node per chosen question and asks about it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.errors import BundleError
from guidedrag_graph.kb.musique_bundles import (
    Passage,
    document_id_for,
    write_bundle,
    write_unanswerable,
)
from guidedrag_graph.schema.presets import name_key, relation_type_name

__all__ = ["ConversionReport", "chunk_id_for", "convert_musique", "document_id_for"]

_WORD = re.compile(r"[A-Za-z0-9]+")
_STOP = frozenset(
    {
        "a", "an", "the", "of", "in", "on", "at", "to", "for", "by", "with", "from", "and", "or",
        "is", "was", "were", "be", "been", "who", "what", "which", "when", "where", "whom", "whose",
        "how", "did", "does", "do", "has", "had", "have", "that", "this", "it", "its", "as",
    }
)  # fmt: skip


def chunk_id_for(title: str, text: str) -> str:
    """Stable id of a passage: a hash of its title and text (independent of corpus order)."""
    return "mq-" + hashlib.sha256(f"{title}\n{text}".encode()).hexdigest()[:16]


@dataclass
class ConversionReport:
    """Counts of what the converter wrote and dropped, with the reasons."""

    out_dir: str
    counts: dict[str, int] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)
    unanswerable: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def lines(self) -> list[str]:
        out = [f"wrote {self.out_dir}"]
        out += [f"  {k}: {v}" for k, v in self.counts.items()]
        out.append("dropped:")
        out += [f"  {k}: {v}" for k, v in self.dropped.items()] or ["  nothing"]
        out.append(f"unanswerable bundle: {self.unanswerable.get('path')}")
        out += [f"  {k}: {v}" for k, v in self.unanswerable.items() if k != "path"]
        return out


def _words(text: str) -> set[str]:
    # A crude stem (first 5 letters) so "published" matches "publisher" and "publishes".
    return {w.lower()[:5] for w in _WORD.findall(text) if w.lower() not in _STOP}


def _names_its_entity(question: dict[str, Any]) -> bool:
    decomposition = question["question_decomposition"]
    title = question["paragraphs"][decomposition[0]["paragraph_support_idx"]]["title"]
    return name_key(title) in name_key(question["question"])


def _load(source: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    questions_path = source / "musique_train.json"
    triples_path = source / "musique_openie_triples.json"
    for path in (questions_path, triples_path):
        if not path.is_file():
            raise BundleError(f"{path}: missing; point at the folder with the MuSiQue files")
    questions = json.loads(questions_path.read_text("utf-8"))
    docs = json.loads(triples_path.read_text("utf-8"))["docs"]
    return questions, docs


def convert_musique(
    source: str | Path,
    out_dir: str | Path,
    *,
    limit: int | None = None,
    embedder: Embedder | None = None,
    round_digits: int | None = None,
    unanswerable_every: int = 5,
    max_removed_chunks: int = 12,
    named_only: bool = False,
) -> ConversionReport:
    """Write ``out_dir`` (answerable bundle) and ``out_dir/unanswerable`` (second bundle).

    ``limit`` keeps the first N questions and only their paragraphs (the sample KB); ``embedder``
    precomputes chunk embeddings (rounded to ``round_digits`` decimals to keep files small).
    ``named_only`` keeps only questions whose text names their entity (a friendlier demo set).
    """
    src, out = Path(source), Path(out_dir)
    questions, docs = _load(src)
    report = ConversionReport(out_dir=str(out))
    dropped: Counter[str] = Counter()
    if named_only:
        questions = [q for q in questions if _names_its_entity(q)]
    if limit is not None:
        questions = questions[:limit]
        wanted = {(p["title"], p["paragraph_text"]) for q in questions for p in q["paragraphs"]}
        docs = [d for d in docs if (d["title"], d["text"]) in wanted]
    passages = _passages(docs, dropped)
    mentions: dict[str, set[str]] = {}
    for passage in passages.values():
        for entity in passage.entities:
            mentions.setdefault(name_key(entity), set()).add(passage.id)
    question_rows = _question_rows(questions, passages, mentions, dropped)
    vectors = _vectors(list(passages.values()), embedder, round_digits)
    kept_passages = list(passages.values())
    counts = write_bundle(out, kept_passages, question_rows, vectors, embedder, name=out.name)
    counts["source_questions"] = len(questions)
    counts["source_passages"] = len(docs)
    counts["questions_relational"] = sum(bool(r["semantics"]["relational"]) for r in question_rows)
    counts["questions_entity_named_in_question"] = sum(
        bool(r["metadata"]["entity_in_question"]) for r in question_rows
    )
    report.counts = counts
    report.dropped = dict(dropped)
    report.unanswerable = write_unanswerable(
        out / "unanswerable",
        kept_passages,
        question_rows,
        mentions,
        vectors,
        embedder,
        every=unanswerable_every,
        max_removed_chunks=max_removed_chunks,
    )
    return report


def _passages(docs: Sequence[dict[str, Any]], dropped: Counter[str]) -> dict[str, Passage]:
    """One passage per distinct (title, text), with its entities and well-formed triples."""
    passages: dict[str, Passage] = {}
    for doc in docs:
        pid = chunk_id_for(doc["title"], doc["text"])
        if pid in passages:
            dropped["duplicate passage (same title and text)"] += 1
            continue
        triples = _triples(doc, dropped)
        names = [doc["title"]]
        names += [e for e in doc.get("extracted_entities") or [] if isinstance(e, str)]
        names += [t[0] for t in triples] + [t[2] for t in triples]
        # One spelling per name key: the first one met, in first-met order.
        unique = list(
            {name_key(e): " ".join(e.split()) for e in reversed(names) if e.strip()}.values()
        )
        unique.reverse()
        passages[pid] = Passage(pid, doc["title"], doc["passage"], unique, triples)
    return passages


def _triples(doc: dict[str, Any], dropped: Counter[str]) -> list[tuple[str, str, str]]:
    triples: list[tuple[str, str, str]] = []
    for triple in doc.get("extracted_triples") or []:
        if not isinstance(triple, list) or len(triple) != 3:
            size = len(triple) if isinstance(triple, list) else "non-list"
            dropped[f"malformed triple: {size} elements instead of 3"] += 1
            continue
        if not all(isinstance(part, str) and part.strip() for part in triple):
            dropped["malformed triple: empty or non-text element"] += 1
            continue
        head, predicate, tail = (" ".join(part.split()) for part in triple)
        triples.append((head, predicate, tail))
    return triples


def _question_rows(
    questions: Sequence[dict[str, Any]],
    passages: dict[str, Passage],
    mentions: dict[str, set[str]],
    dropped: Counter[str],
) -> list[dict[str, Any]]:
    """``questions.jsonl`` rows: gold = the last hop's paragraph, semantics = what is stated."""
    by_paragraph = {(p.title, p.text.split("\n", 1)[1]): p.id for p in passages.values()}
    rows: list[dict[str, Any]] = []
    for q in questions:
        paragraphs = {p["idx"]: p for p in q["paragraphs"]}
        ids = {
            idx: by_paragraph.get((p["title"], p["paragraph_text"]))
            for idx, p in paragraphs.items()
        }
        if any(v is None for v in ids.values()):
            dropped["question with a paragraph missing from the corpus"] += 1
            continue
        decomposition = q["question_decomposition"]
        first = paragraphs[decomposition[0]["paragraph_support_idx"]]
        entity = first["title"]
        entities = _stated_entities(q, entity, mentions, dropped)
        relations: list[str] = []
        if entities:
            first_passage = passages[ids[first["idx"]]]  # type: ignore[index]
            relations = _stated_relations(q["question"], entity, first_passage)
        in_question = name_key(entity) in name_key(q["question"])
        rows.append(
            {
                "id": q["id"],
                "question": q["question"],
                "answer": q["answer"],
                "answerable": bool(q.get("answerable", True)),
                "semantics": {
                    "entities": entities,
                    "relations": relations[:2],
                    "question_type": "factoid",
                    "complexity": 1,
                    "relational": bool(relations),
                },
                "gold_chunk_ids": [ids[decomposition[-1]["paragraph_support_idx"]]],
                "all_gold_chunk_ids": [
                    ids[p["idx"]] for p in q["paragraphs"] if p["is_supporting"]
                ],
                "metadata": {
                    "hops": len(decomposition),
                    "answer_aliases": q.get("answer_aliases", []),
                    "entity_in_question": in_question,
                },
            }
        )
    return rows


def _stated_entities(
    q: dict[str, Any], entity: str, mentions: dict[str, set[str]], dropped: Counter[str]
) -> list[str]:
    """The first hop's entity, unless the KB lacks it or it is an answer or bridge entity."""
    hidden = {name_key(q["answer"]), *(name_key(a) for a in q.get("answer_aliases", []))}
    hidden |= {name_key(step["answer"]) for step in q["question_decomposition"]}
    if name_key(entity) not in mentions:
        dropped["semantics entity withheld: not an entity of the KB"] += 1
        return []
    if name_key(entity) in hidden:
        dropped["semantics entity withheld: it is an answer or bridge entity"] += 1
        return []
    return [entity]


def _stated_relations(question: str, entity: str, first_passage: Passage) -> list[str]:
    """Predicates of the entity's own triples whose words the question itself uses."""
    relations: list[str] = []
    question_words = _words(question) - _words(entity)
    for head, predicate, _tail in first_passage.triples:
        if name_key(head) != name_key(entity):
            continue
        if _words(predicate) and _words(predicate) <= question_words:
            rel = relation_type_name(predicate)
            if rel not in relations:
                relations.append(rel)
    return relations


def _vectors(
    passages: Sequence[Passage], embedder: Embedder | None, round_digits: int | None
) -> dict[str, list[float]]:
    if embedder is None:
        return {}
    vectors: dict[str, list[float]] = {}
    matrix = embedder.embed_passages([p.text for p in passages])
    for passage, vector in zip(passages, matrix, strict=True):
        values = [float(x) for x in vector]
        vectors[passage.id] = (
            [round(x, round_digits) for x in values] if round_digits is not None else values
        )
    return vectors
