"""One question set (answerable, or unanswerable) on the KB now loaded: embed, tag, retrieve.

Every (formulation, approach) pair becomes one :class:`~guidedrag_graph.evaluation.records.Row`;
the taggers' output is kept for Table 3 and for GraphRAG's selections.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from neo4j import Driver
from tqdm import tqdm

from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.evaluation.approaches import Approach, plan_selection
from guidedrag_graph.evaluation.auto_rows import AutoPolicies, auto_row
from guidedrag_graph.evaluation.kb_queries import corpus_size
from guidedrag_graph.evaluation.options import EvalOptions
from guidedrag_graph.evaluation.peers import Peers
from guidedrag_graph.evaluation.records import Row, Tagging
from guidedrag_graph.evaluation.rows import Formulation, SelectionSizer, planned_row
from guidedrag_graph.evaluation.tagger_runs import tag_question_set
from guidedrag_graph.kb import Question
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.selection import Selector, entity


@dataclass(frozen=True)
class SetOptions:
    """What every question set runs with (the same for both sets of one evaluation)."""

    opts: EvalOptions
    approaches: Sequence[Approach]
    progress: bool
    on_row: Callable[[Row], None] | None
    policies: AutoPolicies
    log: Callable[[str], None] | None

    def say(self, message: str) -> None:
        if self.log is not None:
            self.log(message)


@dataclass
class SetRun:
    """What one question set recorded, and the facts about its KB the run's metadata reports."""

    rows: list[Row]
    taggings: list[Tagging]
    tagger_errors: dict[str, str]
    warnings: list[str]
    corpus_chunks: int
    embed_s: float
    names_embedded: int


def run_question_set(
    settings: Settings,
    driver: Driver,
    set_name: str,
    questions: Sequence[Question],
    run: SetOptions,
) -> SetRun:
    """Tag, then retrieve with every approach, for one question set on the KB now loaded."""
    opts, approaches = run.opts, run.approaches
    rag = GuidedRAG(settings, driver=driver)
    selector = Selector(GraphContext.open(settings, driver))
    total_chunks = corpus_size(driver, settings)
    embed_s = _embed_question_texts(rag, set_name, questions, run)
    tagging = tag_question_set(
        rag,
        set_name,
        questions,
        graphrag_tagger=opts.tagger,
        accuracy_taggers=opts.accuracy_taggers,
        needs_tags=any(a.tagged for a in approaches),
        progress=run.progress,
        say=run.say,
    )
    warnings = _unanswerable_check(selector, set_name, questions)
    jobs: list[Formulation] = []
    for q in questions:
        jobs.append(Formulation(set_name, q, q.question, 0))
        if opts.paraphrases and set_name == "answerable":
            jobs += [Formulation(set_name, q, p, i) for i, p in enumerate(q.paraphrases, start=1)]
    if set_name == "answerable" and any(a.calibrated for a in approaches):
        run.policies.ensure_calibrated(rag, list(questions), opts.k)
    retrieve = _Retrieval(rag, SelectionSizer(selector), set_name, run, tagging.graphrag_tags)
    rows = retrieve.all(jobs, total_chunks)
    run.say(f"{set_name}: {len(rows)} retrievals done")
    return SetRun(
        rows,
        tagging.taggings,
        tagging.errors,
        warnings,
        total_chunks,
        embed_s,
        tagging.names_embedded,
    )


def _embed_question_texts(
    rag: GuidedRAG, set_name: str, questions: Sequence[Question], run: SetOptions
) -> float:
    """Embed every formulation up front (seconds taken): latencies then exclude the embedder."""
    texts = [q.question for q in questions]
    if run.opts.paraphrases:
        texts += [p for q in questions for p in q.paraphrases]
    started = time.perf_counter()
    run.say(f"{set_name}: embedding {len(texts)} question texts (cached ones are reused)")
    rag.embedder.embed_queries(texts)  # fills the disk cache; every retrieve below hits it
    embed_s = time.perf_counter() - started
    run.say(f"{set_name}: question texts embedded in {embed_s:.0f}s")
    return embed_s


def _unanswerable_check(
    selector: Selector, set_name: str, questions: Sequence[Question]
) -> list[str]:
    """A warning when unanswerable questions name entities the loaded KB still holds."""
    if set_name != "unanswerable":
        return []
    still_there = _present_entities(selector, questions)
    if not still_there:
        return []
    return [
        f"{len(still_there)} unanswerable question(s) name an entity the database still "
        "holds (run with --reload, or load the unanswerable bundle's KB): "
        + ", ".join(still_there[:5])
    ]


def _present_entities(selector: Selector, questions: Sequence[Question]) -> list[str]:
    """Unanswerable questions whose named entity the database still knows.

    The precision experiment only means something if the entity was removed from the KB; if it
    resolves, the wrong KB is loaded, and the report says so instead of counting a false result.
    """
    present: list[str] = []
    for q in questions:
        for name in q.semantics.entities[:1]:
            if selector.prepare(entity(name)).empty is None:
                present.append(f"{q.id}: {name!r}")
    return present


class _Retrieval:
    """Every (formulation, approach) retrieval of one question set, as rows."""

    def __init__(
        self,
        rag: GuidedRAG,
        sizer: SelectionSizer,
        set_name: str,
        run: SetOptions,
        graphrag_tags: dict[str, list[str]],
    ) -> None:
        self.rag, self.sizer, self.set_name, self.run = rag, sizer, set_name, run
        self.graphrag_tags = graphrag_tags
        self.peers = Peers(rag)

    def all(self, jobs: Sequence[Formulation], total_chunks: int) -> list[Row]:
        approaches = self.run.approaches
        rows: list[Row] = []
        self.run.say(
            f"{self.set_name}: retrieving, {len(jobs)} questions x {len(approaches)} approaches"
        )
        bar = tqdm(
            total=len(jobs) * len(approaches),
            desc=f"retrieval ({self.set_name})",
            unit="run",
            disable=not self.run.progress,
        )
        try:
            for asked in jobs:
                for approach in approaches:
                    row = self.one(asked, approach, total_chunks)
                    rows.append(row)
                    if self.run.on_row is not None:
                        self.run.on_row(row)
                    bar.update(1)
        finally:
            bar.close()
        return rows

    def one(self, asked: Formulation, approach: Approach, total_chunks: int) -> Row:
        k, q = self.run.opts.k, asked.question
        if approach.runner:
            return self.peers.row(asked, approach, k, total_chunks)
        if approach.steering == "auto":
            policy = self.run.policies.policy(approach, q)
            return auto_row(
                self.rag, asked, approach=approach, policy=policy, k=k, total_chunks=total_chunks
            )
        plan = plan_selection(
            approach,
            q.semantics,
            tags=self.graphrag_tags.get(q.id, []) if approach.tagged else [],
            size_of=self.sizer if approach.relaxed else None,
            k=k,
        )
        return planned_row(
            self.rag, asked, plan=plan, k=k, total_chunks=total_chunks, path=self.run.opts.path
        )
