"""``guidedrag demo``: the library's default next to base RAG on a bundle's questions.

The headline is what a user gets with no options (``steering="auto"``: every chunk ranked,
boosted by graded graph tiers built from the question's semantics) against base RAG (cosine
over every chunk); the paper's mapping (Table 2, GraphRAG* column, hard steering) runs beside
them. Whether the gold chunk made the top k is the evaluation's own metric (relevant@k), so the
demo's tally and ``guidedrag eval`` count the same thing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from guidedrag_graph.evaluation.metrics import hit_position
from guidedrag_graph.kb import Question, read_questions
from guidedrag_graph.pipeline import GuidedRAG, RetrievalResult, default_selection

# (what the demo prints, tally key): the default, base RAG, and the paper's mapping.
DEMO_RUNS: tuple[tuple[str, str], ...] = (
    ("GuidedRAG default (auto: graded graph tiers over every chunk)", "auto"),
    ("base RAG (all chunks)", "rag"),
    ("GuidedRAG, paper mapping, hard", "hard"),
)


def demo_questions(bundle_dir: Path, limit: int | None = None) -> list[Question]:
    """The bundle's answerable questions that name an entity, one per configuration first.

    One question of each kind (C1/C2, relational or not) leads, so the first few shown in
    detail cover every configuration; then the rest in file order; ``limit`` keeps the first N.
    """
    questions = [q for q in read_questions(bundle_dir) if q.answerable and q.semantics.entities]
    seen: set[tuple[int, bool]] = set()
    ordered = []
    for q in questions:
        key = (q.semantics.complexity, q.semantics.relational)
        if key not in seen:
            seen.add(key)
            ordered.append(q)
    ordered += [q for q in questions if q not in ordered]
    if limit is not None:
        ordered = ordered[: max(limit, 0)]
    return ordered


@dataclass(frozen=True)
class DemoRetrieval:
    """One of the demo's three retrievals of a question, and where its gold chunk landed."""

    label: str
    key: str
    result: RetrievalResult
    hit: int | None  # rank of the first gold chunk in the top k; None when it missed

    @property
    def rank_text(self) -> str:
        return "miss" if self.hit is None else f"#{self.hit}"


def compare(rag: GuidedRAG, question: Question, k: int) -> list[DemoRetrieval]:
    """The default, base RAG and the paper's mapping for ``question`` (:data:`DEMO_RUNS`)."""
    s = question.semantics
    results = {
        "auto": rag.retrieve(question.question, semantics=s, k=k),
        "rag": rag.retrieve(question.question, None, k=k, steering="hard"),
        "hard": rag.retrieve(
            question.question, default_selection(s), semantics=s, k=k, steering="hard"
        ),
    }
    out = []
    for label, key in DEMO_RUNS:
        hit = hit_position([c.id for c in results[key].chunks], question.gold_chunk_ids, k)
        out.append(DemoRetrieval(label, key, results[key], hit if hit <= k else None))
    return out


@dataclass
class DemoTally:
    """relevant@k per demo run, over every question compared so far."""

    questions: int = 0
    relevant: dict[str, int] = field(default_factory=lambda: {key: 0 for _, key in DEMO_RUNS})

    def add(self, retrievals: Sequence[DemoRetrieval]) -> None:
        self.questions += 1
        for r in retrievals:
            self.relevant[r.key] += r.hit is not None
