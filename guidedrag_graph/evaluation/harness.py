"""Run the approaches over a bundle's questions and record what each retrieved.

The harness only records; :mod:`report` and :mod:`plots` turn the record into numbers and
pictures. Every row of ``results.json`` is one (question, approach) retrieval: the selection that
ran, its size, the ranked chunk ids with their scores, the hit position and the latency. Keeping
the raw rows means a report can be recomputed, or checked by hand, without rerunning anything.

Usage::

    from guidedrag_graph.evaluation.harness import EvalOptions, run_evaluation
    run = run_evaluation(settings, driver, read_bundle(path), options=EvalOptions(k=5))
    run.write_json(out / "results.json")
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from neo4j import Driver
from tqdm import tqdm

from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.db import read_query, server_info
from guidedrag_graph.errors import GuidedRAGError
from guidedrag_graph.evaluation.approaches import (
    APPROACHES,
    PAPER_APPROACHES,
    Approach,
    Plan,
    approach_named,
    plan_selection,
)
from guidedrag_graph.evaluation.auto_rows import AutoPolicies, auto_row
from guidedrag_graph.evaluation.metrics import all_gold_recall_at_k, hit_position
from guidedrag_graph.evaluation.paraphrase import synthetic_paraphrases
from guidedrag_graph.evaluation.records import EvalRun, Row, Tagging
from guidedrag_graph.kb import Bundle, Question
from guidedrag_graph.pipeline import GuidedRAG, RetrievalResult
from guidedrag_graph.schema import schema_from_settings
from guidedrag_graph.selection import Expr, Selector, entity
from guidedrag_graph.tagging import embed_entity_names, tagger_for

DEFAULT_APPROACHES: tuple[str, ...] = (
    *PAPER_APPROACHES,
    "rag*-relaxed",
    "graphrag*-relaxed",
    "graphrag*-soft",
    "graphrag*-near",
    "graphrag*-near-soft",
    "guidedrag",
    "guidedrag-calibrated",
)
TAGGERS: tuple[str, ...] = ("embedding", "fulltext", "hybrid", "linker", "llm")


@dataclass(frozen=True)
class EvalOptions:
    """What to run: approaches, k, GraphRAG's tagger, and the taggers whose accuracy to measure."""

    approaches: tuple[str, ...] = DEFAULT_APPROACHES
    k: int = 5
    tagger: str = "embedding"
    accuracy_taggers: tuple[str, ...] = TAGGERS
    limit: int | None = None  # first N questions of each set (smoke runs)
    paraphrases: bool = True  # also run each question's paraphrases (turbulence)
    synthetic_paraphrases: bool = False  # generate rule-based ones where a question has none
    # The paper ranks every approach by exact cosine (§4.2); None lets the planner choose (the
    # approximate vector index over U).
    path: str | None = "exact"

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ValueError(f"k must be at least 1, got {self.k}")
        for name in self.approaches:
            approach_named(name)
        if self.tagger not in TAGGERS:
            raise ValueError(f"unknown tagger {self.tagger!r}; choose from {', '.join(TAGGERS)}")


def _round(values: Iterable[float]) -> list[float]:
    return [round(float(v), 5) for v in values]


class _Sizer:
    """Chunk counts of selections, memoised: the relaxed policy asks for the same ∩ repeatedly."""

    def __init__(self, selector: Selector) -> None:
        self._selector = selector
        self._cache: dict[str, int] = {}

    def __call__(self, expr: Expr) -> int:
        key = expr.to_text()
        if key not in self._cache:
            prep = self._selector.prepare(expr)
            self._cache[key] = 0 if prep.empty is not None else self._selector.sizes(expr).size
        return self._cache[key]


def corpus_size(driver: Driver, settings: Settings) -> int:
    """Number of chunks in the KB: the search space of base RAG (U)."""
    schema = schema_from_settings(settings)
    rows = read_query(
        driver,
        f"MATCH (c:{schema.q(schema.chunk_label)}) RETURN count(c) AS n",
        database=settings.neo4j_database,
    )
    return int(rows[0]["n"])


def _empty_text(result: RetrievalResult) -> str | None:
    if result.empty is None:
        return None
    return f"{result.empty.kind}: {result.empty.term}"


def _gold_in_selection(
    selector: Selector, settings: Settings, expr: Expr, gold_ids: Sequence[str]
) -> bool:
    """Whether any answer chunk belongs to the selection (one read query, after retrieval)."""
    prep = selector.prepare(expr)
    if prep.empty is not None or not gold_ids:
        return False
    schema = schema_from_settings(settings)
    rows = read_query(
        selector.driver,
        prep.compiled.cypher
        + f"\nWITH c WHERE {schema.chunk_ref('c')} IN $eval_gold_ids RETURN count(c) AS n",
        {**prep.compiled.params, "eval_gold_ids": list(gold_ids)},
        database=settings.neo4j_database,
    )
    return bool(rows and int(rows[0]["n"]) > 0)


def _retrieve_row(
    rag: GuidedRAG,
    *,
    set_name: str,
    question: Question,
    text: str,
    variant: int,
    plan: Plan,
    k: int,
    total_chunks: int,
    path: str | None = None,
) -> Row:
    start = time.perf_counter()
    result = rag.retrieve(
        text,
        plan.expr,  # always explicit: None would let the pipeline pick its default selection
        semantics=question.semantics,
        k=k,
        ranker="cosine",  # the paper ranks every approach by cosine (§4.2)
        steering=plan.steering,
        path=path,
    )
    latency = time.perf_counter() - start
    ranked = [c.id for c in result.chunks]
    size = result.selection_size
    if size is None and plan.is_all:
        size = total_chunks
    if result.empty is not None:
        size = 0
    answerable = set_name == "answerable"
    gold_inside: bool | None = None
    if answerable and not plan.is_all:
        gold_inside = _gold_in_selection(
            rag.selector, rag.settings, plan.expr, question.gold_chunk_ids
        )
    elif answerable:
        gold_inside = bool(question.gold_chunk_ids)
    return Row(
        set=set_name,
        question_id=question.id,
        variant=variant,
        approach=plan.approach,
        configuration=str(plan.configuration),
        cell=plan.cell,
        selection=plan.expr.to_text(),
        steering=plan.steering,
        entities=list(plan.entities),
        selection_size=size,
        empty=_empty_text(result),
        ranked=ranked,
        cosines=_round(c.cosine for c in result.chunks),
        in_selection=[bool(c.in_selection) for c in result.chunks],
        hit_position=hit_position(ranked, question.gold_chunk_ids, k) if answerable else None,
        all_gold_recall=(
            all_gold_recall_at_k(ranked, question.all_gold_chunk_ids or question.gold_chunk_ids, k)
            if answerable
            else None
        ),
        latency_s=round(latency, 6),
        timings={name: round(float(v), 6) for name, v in (result.timings or {}).items()},
        note=plan.note,
        gold_in_selection=gold_inside,
        path=result.path,
    )


def _tag_all(
    settings: Settings,
    driver: Driver,
    questions: Sequence[Question],
    names: Sequence[str],
    progress: bool,
) -> tuple[dict[str, dict[str, list[str]]], list[Tagging], dict[str, str]]:
    """Run each tagger once per question; one that cannot run (no LLM) is reported, not fatal."""
    tags: dict[str, dict[str, list[str]]] = {}
    taggings: list[Tagging] = []
    errors: dict[str, str] = {}
    for name in names:
        if name in ("llm", "hybrid") and not settings.llm_configured:
            errors[name] = "no LLM configured (OPENAI_API_KEY / OPENAI_BASE_URL unset)"
            continue
        try:
            tagger = tagger_for(name, GraphContext.open(settings, driver))
        except GuidedRAGError as exc:
            errors[name] = str(exc)
            continue
        per_question: dict[str, list[str]] = {}
        bar = tqdm(questions, desc=f"tagging ({name})", unit="q", disable=not progress)
        try:
            for q in bar:
                start = time.perf_counter()
                found = list(tagger.tag(q.question))
                taggings.append(
                    Tagging(
                        tagger=name,
                        question_id=q.id,
                        gold=list(q.semantics.entities),
                        tags=found,
                        latency_s=round(time.perf_counter() - start, 6),
                    )
                )
                per_question[q.id] = found
        except GuidedRAGError as exc:
            errors[name] = str(exc)
            taggings = [t for t in taggings if t.tagger != name]
            continue
        tags[name] = per_question
    return tags, taggings, errors


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


def clear_kb(driver: Driver, settings: Settings) -> int:
    """Delete every chunk, document and entity node (migrations and indexes stay).

    Used only when the caller asked for it (``guidedrag eval --reload``): the precision experiment
    needs the unanswerable KB, which lacks some entities, in place of the full one.
    """
    schema = schema_from_settings(settings)
    deleted = 0
    for label in (schema.chunk_label, schema.document_label, schema.entity_label):
        while True:
            records, _, _ = driver.execute_query(
                f"MATCH (n:{schema.q(label)}) WITH n LIMIT 5000 DETACH DELETE n "
                "RETURN count(*) AS deleted",
                database_=settings.neo4j_database,
            )
            n = int(records[0]["deleted"])
            deleted += n
            if n == 0:
                break
    return deleted


PrepareSet = Callable[[str, Bundle], None]


@dataclass
class _SetRun:
    rows: list[Row]
    taggings: list[Tagging]
    tagger_errors: dict[str, str]
    warnings: list[str]
    corpus_chunks: int
    embed_s: float
    names_embedded: int


def _run_set(
    settings: Settings,
    driver: Driver,
    set_name: str,
    questions: Sequence[Question],
    approaches: Sequence[Approach],
    opts: EvalOptions,
    progress: bool,
    on_row: Callable[[Row], None] | None,
    policies: AutoPolicies,
    log: Callable[[str], None] | None = None,
) -> _SetRun:
    """Tag, then retrieve with every approach, for one question set on the KB now loaded."""
    say = log or (lambda _message: None)
    rag = GuidedRAG(settings, driver=driver)
    selector = Selector(driver, settings)
    sizer = _Sizer(selector)
    total_chunks = corpus_size(driver, settings)
    warnings: list[str] = []

    texts = [q.question for q in questions]
    if opts.paraphrases:
        texts += [p for q in questions for p in q.paraphrases]
    started = time.perf_counter()
    say(f"{set_name}: embedding {len(texts)} question texts (cached ones are reused)")
    rag.embedder.embed_queries(texts)  # fills the disk cache; every retrieve below hits it
    embed_s = time.perf_counter() - started
    say(f"{set_name}: question texts embedded in {embed_s:.0f}s")

    tagger_names = list(dict.fromkeys([opts.tagger, *opts.accuracy_taggers]))
    if set_name != "answerable":
        tagger_names = [opts.tagger]  # Table 3 is measured on answerable questions only
    needs_tags = any(a.tagged for a in approaches)
    if not needs_tags:
        tagger_names = [n for n in tagger_names if n != opts.tagger or set_name == "answerable"]
    names_embedded = 0
    # hybrid without an LLM is skipped by _tag_all, so only a runnable tagger may cost this.
    if "embedding" in tagger_names or ("hybrid" in tagger_names and settings.llm_configured):
        # The embedding tagger searches a vector index over entity names; fill what is missing.
        say(f"{set_name}: embedding entity names the database lacks (for the embedding tagger)")
        names_embedded = embed_entity_names(driver, settings, embedder=rag.embedder)
        say(f"{set_name}: {names_embedded} entity names embedded")
    if tagger_names:
        say(f"{set_name}: tagging {len(questions)} questions with {', '.join(tagger_names)}")
    tags, taggings, tagger_errors = _tag_all(settings, driver, questions, tagger_names, progress)
    if needs_tags and opts.tagger not in tags:
        raise GuidedRAGError(
            f"GraphRAG's tagger {opts.tagger!r} could not run: {tagger_errors.get(opts.tagger)}; "
            "choose another with --tagger"
        )
    if set_name != "answerable":
        taggings = []

    if set_name == "unanswerable":
        still_there = _present_entities(selector, questions)
        if still_there:
            warnings.append(
                f"{len(still_there)} unanswerable question(s) name an entity the database still "
                "holds (run with --reload, or load the unanswerable bundle's KB): "
                + ", ".join(still_there[:5])
            )

    jobs: list[tuple[Question, str, int]] = []
    for q in questions:
        jobs.append((q, q.question, 0))
        if opts.paraphrases and set_name == "answerable":
            jobs += [(q, p, i) for i, p in enumerate(q.paraphrases, start=1)]

    if set_name == "answerable" and any(a.calibrated for a in approaches):
        policies.ensure_calibrated(rag, list(questions), opts.k)

    rows: list[Row] = []
    say(f"{set_name}: retrieving, {len(jobs)} questions x {len(approaches)} approaches")
    bar = tqdm(
        total=len(jobs) * len(approaches),
        desc=f"retrieval ({set_name})",
        unit="run",
        disable=not progress,
    )
    try:
        for q, text, variant in jobs:
            for approach in approaches:
                if approach.steering == "auto":
                    row = auto_row(
                        rag,
                        set_name=set_name,
                        question=q,
                        text=text,
                        variant=variant,
                        approach=approach,
                        policy=policies.policy(approach, q),
                        k=opts.k,
                        total_chunks=total_chunks,
                    )
                    rows.append(row)
                    if on_row is not None:
                        on_row(row)
                    bar.update(1)
                    continue
                q_tags = tags.get(opts.tagger, {}).get(q.id, []) if approach.tagged else []
                plan = plan_selection(
                    approach,
                    q.semantics,
                    tags=q_tags,
                    size_of=sizer if approach.relaxed else None,
                    k=opts.k,
                )
                row = _retrieve_row(
                    rag,
                    set_name=set_name,
                    question=q,
                    text=text,
                    variant=variant,
                    plan=plan,
                    k=opts.k,
                    total_chunks=total_chunks,
                    path=opts.path,
                )
                rows.append(row)
                if on_row is not None:
                    on_row(row)
                bar.update(1)
    finally:
        bar.close()
    say(f"{set_name}: {len(rows)} retrievals done")
    return _SetRun(rows, taggings, tagger_errors, warnings, total_chunks, embed_s, names_embedded)


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

    sets: list[tuple[str, Bundle, list[Question]]] = [("answerable", bundle, answerable)]
    if unanswerable is not None:
        sets.append(("unanswerable", unanswerable, unanswered))
    results: dict[str, _SetRun] = {}
    prepare_s: dict[str, float] = {}
    policies = AutoPolicies()
    for set_name, set_bundle, questions in sets:
        if prepare is not None:
            t0 = time.perf_counter()
            prepare(set_name, set_bundle)
            prepare_s[set_name] = round(time.perf_counter() - t0, 3)
        results[set_name] = _run_set(
            settings, driver, set_name, questions, approaches, opts, progress, on_row, policies,
            log,
        )

    info = server_info(driver, settings.neo4j_database)
    main = results["answerable"]
    rag = GuidedRAG(settings, driver=driver)
    meta: dict[str, Any] = {
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
        "unanswerable_questions": len(unanswered),
        "paraphrased_questions": sum(1 for q in answerable if q.paraphrases)
        if opts.paraphrases
        else 0,
        # Generated paraphrases must be labelled so (manifest or per-question metadata flag).
        "paraphrases_generated": generated,
        "paraphrases_synthetic": bool(
            generated
            or (bundle.manifest.model_extra or {}).get("paraphrases_synthetic")
            or any(q.metadata.get("paraphrases_synthetic") for q in answerable)
        ),
        "corpus_chunks": main.corpus_chunks,
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
    if policies.calibration is not None:
        meta["calibration"] = policies.calibration.summary()
    return EvalRun(
        meta=meta,
        rows=[row for r in results.values() for row in r.rows],
        taggings=main.taggings,
        tagger_errors={k: v for r in results.values() for k, v in r.tagger_errors.items()},
        warnings=[w for r in results.values() for w in r.warnings],
    )
