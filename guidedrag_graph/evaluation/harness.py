"""Run the approaches over a bundle's questions and record what each retrieved.

The harness only records; :mod:`~guidedrag_graph.evaluation.summary`, :mod:`report` and
:mod:`plots` turn the record into numbers and pictures. Every row of ``results.json`` is one
(question, approach) retrieval: the selection that ran, its size, the ranked chunk ids with their
scores, the hit position and the latency. Keeping the raw rows means a report can be recomputed,
or checked by hand, without rerunning anything.

Usage::

    from guidedrag_graph.evaluation.harness import EvalOptions, run_evaluation
    run = run_evaluation(settings, driver, read_bundle(path), options=EvalOptions(k=5))
    run.write_json(out / "results.json")
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.db.connection import server_info
from guidedrag_graph.errors import GuidedRAGError
from guidedrag_graph.evaluation.approaches import APPROACHES, Approach, approach_named
from guidedrag_graph.evaluation.auto_rows import AutoPolicies
from guidedrag_graph.evaluation.kb_queries import clear_kb, corpus_size
from guidedrag_graph.evaluation.options import DEFAULT_APPROACHES, EvalOptions
from guidedrag_graph.evaluation.paraphrase import synthetic_paraphrases
from guidedrag_graph.evaluation.question_set import SetOptions, SetRun, run_question_set
from guidedrag_graph.evaluation.records import EvalRun, Row
from guidedrag_graph.kb import Bundle, Question
from guidedrag_graph.pipeline import GuidedRAG
from guidedrag_graph.vocabulary import TAGGERS

__all__ = [
    "DEFAULT_APPROACHES",
    "TAGGERS",
    "EvalOptions",
    "PrepareSet",
    "clear_kb",
    "corpus_size",
    "run_evaluation",
]

PrepareSet = Callable[[str, Bundle], None]


def run_evaluation(
    settings: Settings,
    driver: Driver,
    bundle: Bundle,
    *,
    unanswerable: Bundle | None = None,
    options: EvalOptions | None = None,
    bundle_label: str = "",
    unanswerable_label: str = "",
    prepare: PrepareSet | None = None,
    progress: bool = True,
    on_row: Callable[[Row], None] | None = None,
    log: Callable[[str], None] | None = None,
) -> EvalRun:
    """Run every approach in ``options`` over the bundle's questions (and the unanswerable set).

    The database must hold each set's KB when that set runs: ``prepare(set_name, bundle)`` is
    called before each set and may (re)load it; without it the KB already loaded is used. Query
    embeddings are computed up front, so the latencies measure selection and ranking, not the
    embedder. ``log`` receives a line as each stage starts and ends (the CLI prints them, so a
    long embedding is never silent).
    """
    opts = options or EvalOptions()
    started = time.perf_counter()
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    approaches: list[Approach] = [approach_named(a) for a in opts.approaches]
    sets = _question_sets(bundle, unanswerable, opts)
    results: dict[str, SetRun] = {}
    prepare_s: dict[str, float] = {}
    policies = AutoPolicies()  # shared: the calibration fitted on the answerable set
    set_options = SetOptions(opts, approaches, progress, on_row, policies, log)
    for set_name, set_bundle, questions in sets.runs:
        if prepare is not None:
            t0 = time.perf_counter()
            prepare(set_name, set_bundle)
            prepare_s[set_name] = round(time.perf_counter() - t0, 3)
        results[set_name] = run_question_set(settings, driver, set_name, questions, set_options)
    meta = {
        **_inputs_meta(bundle, unanswerable, opts, sets, bundle_label, unanswerable_label),
        **_run_facts_meta(settings, driver, results, started_at, prepare_s, started),
    }
    if policies.calibration is not None:
        meta["calibration"] = policies.calibration.summary()
    return EvalRun(
        meta=meta,
        rows=[row for r in results.values() for row in r.rows],
        taggings=results["answerable"].taggings,
        tagger_errors={k: v for r in results.values() for k, v in r.tagger_errors.items()},
        warnings=[w for r in results.values() for w in r.warnings],
    )


@dataclass(frozen=True)
class _QuestionSets:
    """The questions each set runs: the answerable ones (with any synthetic paraphrases) and
    the unanswerable bundle's answerable=false ones."""

    answerable: list[Question]
    unanswered: list[Question]
    generated: int  # synthetic paraphrase sets made by the harness
    runs: list[tuple[str, Bundle, list[Question]]]


def _question_sets(bundle: Bundle, unanswerable: Bundle | None, opts: EvalOptions) -> _QuestionSets:
    answerable = [q for q in bundle.questions if q.answerable][: opts.limit]
    generated = 0
    if opts.paraphrases and opts.synthetic_paraphrases:
        with_synthetic: list[Question] = []
        for q in answerable:
            if not q.paraphrases:
                q = q.model_copy(update={"paraphrases": synthetic_paraphrases(q.question)})
                generated += 1
            with_synthetic.append(q)
        answerable = with_synthetic
    if not answerable:
        raise GuidedRAGError(
            "the bundle has no answerable questions (questions.jsonl); nothing to evaluate"
        )
    unanswered = (
        [q for q in unanswerable.questions if not q.answerable][: opts.limit]
        if unanswerable is not None
        else []
    )
    if unanswerable is not None and not unanswered:
        raise GuidedRAGError(
            f"the unanswerable bundle {unanswerable.path} has no question with answerable=false"
        )
    runs: list[tuple[str, Bundle, list[Question]]] = [("answerable", bundle, answerable)]
    if unanswerable is not None:
        runs.append(("unanswerable", unanswerable, unanswered))
    return _QuestionSets(answerable, unanswered, generated, runs)


def _inputs_meta(
    bundle: Bundle,
    unanswerable: Bundle | None,
    opts: EvalOptions,
    sets: _QuestionSets,
    bundle_label: str,
    unanswerable_label: str,
) -> dict[str, Any]:
    """What was asked for: the bundles, approaches, k, tagger and question counts."""
    answerable = sets.answerable
    return {
        "bundle": bundle_label or str(bundle.path),
        "unanswerable_bundle": (unanswerable_label or str(unanswerable.path))
        if unanswerable is not None
        else None,
        "k": opts.k,
        "approaches": list(opts.approaches),
        "approach_descriptions": {a: APPROACHES[a].description for a in opts.approaches},
        "tagger": opts.tagger,
        "path": opts.path,
        "questions": len(answerable),
        "unanswerable_questions": len(sets.unanswered),
        "paraphrased_questions": sum(1 for q in answerable if q.paraphrases)
        if opts.paraphrases
        else 0,
        # Generated paraphrases must be labelled so (manifest or per-question metadata flag).
        "paraphrases_generated": sets.generated,
        "paraphrases_synthetic": bool(
            sets.generated
            or (bundle.manifest.model_extra or {}).get("paraphrases_synthetic")
            or any(q.metadata.get("paraphrases_synthetic") for q in answerable)
        ),
    }


def _run_facts_meta(
    settings: Settings,
    driver: Driver,
    results: dict[str, SetRun],
    started_at: str,
    prepare_s: dict[str, float],
    started: float,
) -> dict[str, Any]:
    """Where and how it ran: corpus sizes, embedder, server, machine and timings."""
    info = server_info(driver, settings.neo4j_database)
    rag = GuidedRAG(settings, driver=driver)
    return {
        "corpus_chunks": results["answerable"].corpus_chunks,
        "unanswerable_corpus_chunks": results["unanswerable"].corpus_chunks
        if "unanswerable" in results
        else None,
        "entity_names_embedded": sum(r.names_embedded for r in results.values()),
        "embedder": rag.embedder.model_id,
        "embedding_dimensions": rag.embedder.dimensions,
        "neo4j_version": info.version,
        "neo4j_edition": info.edition,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "started_at": started_at,
        "query_embedding_s": round(sum(r.embed_s for r in results.values()), 3),
        "prepare_s": prepare_s,  # (re)loading each set's KB, when the caller asked for it
        "duration_s": round(time.perf_counter() - started, 3),
    }
