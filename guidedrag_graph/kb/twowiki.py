"""2WikiMultihopQA (development split, HippoRAG's corpus) -> KB bundle v1 with typed relations.

The recipe is ``data/2wiki/README.md``'s, step by step:

- one document and one chunk per passage (``title\\ntext``), one entity per title, declared with
  its alias: the title without its trailing parenthetical (``Do You Believe? (film)`` ->
  ``Do You Believe?``);
- a chunk mentions its own title and every title its text names (case-sensitive, on word
  boundaries, never a piece of a longer capitalised name; an alias counts when exactly one
  title owns it and it is no other title's name),
  and a ``links to`` relation runs from the passage's title to each title it names (a stand-in
  for hyperlinks);
- typed relations: the ``evidences`` triples whose head and tail are both titles (a title, or an
  alias owned by one title, a supporting paragraph's first). They exist only for the questions'
  own facts, as gold annotations do;
- gold: the supporting paragraphs that contain the answer (else every supporting paragraph);
  ``all_gold_chunk_ids`` = every supporting paragraph;
- semantics: the evidence subjects the question names (the supporting paragraphs' titles it
  names, by title or alias) and, for compositional and inference questions, the first
  evidence's relation. Never the answer or a bridge entity.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from guidedrag_graph.embeddings import Embedder
from guidedrag_graph.errors import BundleError
from guidedrag_graph.kb.musique import ConversionReport, _vectors
from guidedrag_graph.kb.musique_bundles import Passage, write_bundle
from guidedrag_graph.linking.name_spans import NAME_PARTICLES
from guidedrag_graph.linking.text import capitalised
from guidedrag_graph.schema.presets import name_key, relation_type_name

__all__ = ["CREDITS", "alias_of", "chunk_id_for", "convert_2wiki", "names_in"]

LINKS_TO = "links to"
_PARENTHETICAL = re.compile(r"\s*\([^()]*\)\s*$")
_TOKEN = re.compile(r"\w+")
# The longest name matched in a text, in words (titles longer than this are never named).
_MAX_NAME_WORDS = 12
# Question types whose first evidence's relation a user could state (the hop the question asks).
_RELATIONAL_TYPES = frozenset({"compositional", "inference"})

CREDITS = """\
# Data credits

This bundle is derived from:

- **2WikiMultihopQA** (Ho, Duong Nguyen, Sugawara, Aizawa, 2020), Apache-2.0
  (https://github.com/Alab-NII/2wikimultihop).
- The passage corpus as released in the **HippoRAG** repository (OSU-NLP-Group/HippoRAG), MIT
  licence.
- Paragraph text from **Wikipedia**, licensed CC BY-SA (https://creativecommons.org/licenses/by-sa/4.0/).

Changes: passages became chunks (title + text), titles became entities (alias: the title without
its parenthetical), titles named in a text became mentions and `links to` relations, the
questions' evidence triples between titles became typed relations (they exist only for these
questions' own facts, as gold annotations do), questions gained gold chunk ids and semantics; see
`bundle.json`. Embeddings, where present, were computed with the configured embedder.
"""

LICENSE_TEXT = "CC BY-SA 4.0 (Wikipedia text); 2WikiMultihopQA Apache-2.0; HippoRAG corpus MIT"


def chunk_id_for(title: str, text: str) -> str:
    """Stable id of a passage: a hash of its title and text (independent of corpus order)."""
    return "2w-" + hashlib.sha256(f"{title}\n{text}".encode()).hexdigest()[:16]


def alias_of(title: str) -> str | None:
    """The title without its trailing parenthetical, or None when there is none."""
    alias = _PARENTHETICAL.sub("", title).strip()
    return alias if alias and alias != title else None


def _surface_forms(titles: Sequence[str]) -> dict[str, str]:
    """Spelling in a text -> the title it names: every title, and every alias owned by one
    title that is no other title's own name."""
    owners: dict[str, set[str]] = defaultdict(set)
    for title in titles:
        alias = alias_of(title)
        if alias is not None:
            owners[alias].add(title)
    forms = {title: title for title in titles}
    for alias, owned in owners.items():
        if len(owned) == 1 and alias not in forms:
            forms[alias] = next(iter(owned))
    return forms


def names_in(text: str, forms: dict[str, str]) -> list[str]:
    """The titles ``text`` names, first-met order: the longest form at each word start wins,
    and a form that is only part of a longer capitalised run names nothing ("Princess" in
    "Princess Adrienne", "Los" in "Los Angeles": the run is another name)."""
    starts = [(m.start(), m.end()) for m in _TOKEN.finditer(text)]
    found: dict[str, None] = {}
    i = 0
    while i < len(starts):
        matched = 0
        for j in range(min(len(starts), i + _MAX_NAME_WORDS) - 1, i - 1, -1):
            end = starts[j][1]
            # A name may end in punctuation ("Do You Believe?"): try one more character too.
            candidates = [text[starts[i][0] : end]]
            if end < len(text) and not text[end].isspace():
                candidates.insert(0, text[starts[i][0] : end + 1])
            title = next((forms[c] for c in candidates if c in forms), None)
            if title is not None and not _inside_longer_name(text, starts, i, j):
                found.setdefault(title, None)
                matched = j - i + 1
                break
        i += max(matched, 1)
    return list(found)


def _inside_longer_name(text: str, starts: list[tuple[int, int]], i: int, j: int) -> bool:
    """Whether words ``i``..``j`` continue a capitalised word before or after them (joined by a
    space or a hyphen, or by a name particle after them: "Princess of Cambodia")."""

    def word(k: int) -> str:
        return text[starts[k][0] : starts[k][1]] if 0 <= k < len(starts) else ""

    def joined(k: int) -> bool:  # word k and word k + 1
        return 0 <= k < len(starts) - 1 and text[starts[k][1] : starts[k + 1][0]] in (" ", "-")

    if joined(i - 1) and capitalised(word(i - 1)):
        return True
    if joined(j) and capitalised(word(j + 1)):
        return True
    return (
        joined(j)
        and word(j + 1) in NAME_PARTICLES
        and joined(j + 1)
        and (capitalised(word(j + 2)) if word(j + 2) else False)
    )


def _load(source: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    corpus_path = source / "2wikimultihopqa_corpus.json"
    questions_path = source / "questions_dev.json"
    for path in (corpus_path, questions_path):
        if not path.is_file():
            raise BundleError(f"{path}: missing; point at the folder with the 2Wiki files")
    corpus = json.loads(corpus_path.read_text("utf-8"))
    questions = json.loads(questions_path.read_text("utf-8"))
    return corpus, questions


def convert_2wiki(
    source: str | Path,
    out_dir: str | Path,
    *,
    limit: int | None = None,
    embedder: Embedder | None = None,
    round_digits: int | None = None,
) -> ConversionReport:
    """Write ``out_dir``, one bundle: every passage of the corpus and the questions.

    ``limit`` keeps the first N questions (the corpus stays whole: it is the distractor pool);
    ``embedder`` precomputes chunk embeddings (rounded to ``round_digits`` decimals).
    """
    src, out = Path(source), Path(out_dir)
    corpus, questions = _load(src)
    if limit is not None:
        questions = questions[:limit]
    report = ConversionReport(out_dir=str(out))
    dropped: Counter[str] = Counter()
    texts: dict[str, str] = {}
    for doc in corpus:
        if doc["title"] in texts:
            dropped["duplicate title (first passage kept)"] += 1
            continue
        texts[doc["title"]] = doc["text"]
    titles = list(texts)
    forms = _surface_forms(titles)
    named = {title: names_in(text, forms) for title, text in texts.items()}
    typed = _typed_triples(questions, titles, dropped)
    passages = _passages(texts, named, typed)
    rows = _question_rows(questions, texts, titles, {t: p.id for t, p in passages.items()})
    vectors = _vectors(list(passages.values()), embedder, round_digits)
    entities = [{"name": t, "aliases": [a]} if (a := alias_of(t)) else {"name": t} for t in titles]
    counts = write_bundle(
        out,
        list(passages.values()),
        rows,
        vectors,
        embedder,
        name=out.name,
        description="2WikiMultihopQA development questions over Wikipedia passages, with "
        "title links and the questions' typed evidence relations",
        credits=CREDITS,
        license_text=LICENSE_TEXT,
        source="2WikiMultihopQA (HippoRAG corpus), development split",
        entities=entities,
    )
    counts["source_questions"] = len(questions)
    counts["source_passages"] = len(corpus)
    counts["typed_relations"] = sum(len(v) for v in typed.values())
    counts["questions_relational"] = sum(bool(r["semantics"]["relational"]) for r in rows)
    counts["questions_without_stated_entity"] = sum(not r["semantics"]["entities"] for r in rows)
    counts["questions_gold_all_supporting"] = sum(
        r["metadata"]["gold_rule"] == "all supporting" for r in rows
    )
    report.counts = counts
    report.dropped = dict(dropped)
    report.unanswerable = {"path": None}
    return report


def _title_for(name: str, titles: set[str], preferred: Sequence[str]) -> str | None:
    """The title ``name`` is: itself, else the alias of a preferred (supporting) title, else the
    alias of exactly one title."""
    if name in titles:
        return name
    for title in preferred:
        if name_key(alias_of(title) or "") == name_key(name):
            return title
    owners = [t for t in titles if name_key(alias_of(t) or "") == name_key(name)]
    return owners[0] if len(owners) == 1 else None


def _typed_triples(
    questions: Sequence[dict[str, Any]], titles: Sequence[str], dropped: Counter[str]
) -> dict[str, list[tuple[str, str, str]]]:
    """Head title -> its evidence triples whose two ends are titles (each triple once)."""
    title_set = set(titles)
    out: dict[str, dict[tuple[str, str, str], None]] = defaultdict(dict)
    for q in questions:
        supporting = list(dict.fromkeys(t for t, _ in q["supporting_facts"]))
        for head, relation, tail in q["evidences"]:
            h = _title_for(head, title_set, supporting)
            t = _title_for(tail, title_set, supporting)
            if h is None or t is None:
                dropped["evidence triple: an end is no title (a value, or not in the corpus)"] += 1
                continue
            out[h][(h, relation, t)] = None
    return {h: list(triples) for h, triples in out.items()}


def _passages(
    texts: dict[str, str],
    named: dict[str, list[str]],
    typed: dict[str, list[tuple[str, str, str]]],
) -> dict[str, Passage]:
    passages: dict[str, Passage] = {}
    for title, text in texts.items():
        others = [t for t in named[title] if t != title]
        triples = [(title, LINKS_TO, t) for t in others] + typed.get(title, [])
        passages[title] = Passage(
            chunk_id_for(title, text), title, f"{title}\n{text}", [title, *others], triples
        )
    return passages


def _question_rows(
    questions: Sequence[dict[str, Any]],
    texts: dict[str, str],
    titles: Sequence[str],
    chunk_of: dict[str, str],
) -> list[dict[str, Any]]:
    title_set = set(titles)
    rows: list[dict[str, Any]] = []
    for q in questions:
        supporting = list(dict.fromkeys(t for t, _ in q["supporting_facts"]))
        missing = [t for t in supporting if t not in title_set]
        if missing:
            raise BundleError(f"question {q['_id']}: supporting title {missing[0]!r} not in corpus")
        answer = name_key(q["answer"])
        with_answer = [t for t in supporting if answer and answer in name_key(texts[t])]
        gold = with_answer or supporting
        entities = _stated_entities(q, supporting)
        relations = (
            [relation_type_name(q["evidences"][0][1])]
            if q["type"] in _RELATIONAL_TYPES and entities and q["evidences"]
            else []
        )
        rows.append(
            {
                "id": q["_id"],
                "question": q["question"],
                "answer": q["answer"],
                "answerable": True,
                "semantics": {
                    "entities": entities,
                    "relations": relations,
                    "question_type": "factoid",
                    "complexity": 2 if len(entities) > 1 else 1,
                    "relational": bool(relations),
                },
                "gold_chunk_ids": [chunk_of[t] for t in gold],
                "all_gold_chunk_ids": [chunk_of[t] for t in supporting],
                "metadata": {
                    "type": q["type"],
                    "gold_rule": "contains the answer" if with_answer else "all supporting",
                },
            }
        )
    return rows


def _stated_entities(q: dict[str, Any], supporting: Sequence[str]) -> list[str]:
    """The supporting paragraphs' titles the question names (by title or alias): the evidence
    subjects, spelled as the KB spells them (an evidence head is a Wikidata label, often no
    title). Never the answer or a bridge entity (an evidence's tail: what one hop finds)."""
    hidden = {name_key(q["answer"])} | {name_key(tail) for _, _, tail in q["evidences"]}
    question = name_key(q["question"])
    entities: list[str] = []
    for title in supporting:
        names = {name_key(title), name_key(alias_of(title) or title)}
        if names & hidden or not any(n in question for n in names):
            continue
        entities.append(title)
    return entities
