"""Entity tagging in an evaluation: GraphRAG's tags per question, and Table 3's accuracy runs.

Each tagger runs once per question and its tags are kept, so GraphRAG's retrievals reuse them
and the tagging latency is measured apart from retrieval. A tagger that cannot run (no LLM) is
reported in the run's ``tagger_errors``, not fatal, unless GraphRAG itself needs it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from neo4j import Driver
from tqdm import tqdm

from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.errors import GuidedRAGError
from guidedrag_graph.evaluation.records import Tagging
from guidedrag_graph.kb import Question
from guidedrag_graph.kb.entity_names import embed_entity_names
from guidedrag_graph.linking.taggers import tagger_for
from guidedrag_graph.pipeline import GuidedRAG


@dataclass(frozen=True)
class SetTagging:
    """What tagging one question set produced."""

    graphrag_tags: dict[str, list[str]]  # question id -> GraphRAG's tagger's entities
    taggings: list[Tagging]  # Table 3 rows (answerable set only)
    errors: dict[str, str]  # tagger -> why it did not run
    names_embedded: int  # entity names embedded first, for the embedding tagger


def tag_question_set(
    rag: GuidedRAG,
    set_name: str,
    questions: Sequence[Question],
    *,
    graphrag_tagger: str,
    accuracy_taggers: Sequence[str],
    needs_tags: bool,
    progress: bool,
    say: Callable[[str], None],
) -> SetTagging:
    """Run GraphRAG's tagger (where an approach needs it) and, on the answerable set, Table 3's."""
    settings, driver = rag.settings, rag.driver
    names = _taggers_to_run(set_name, graphrag_tagger, accuracy_taggers, needs_tags)
    names_embedded = 0
    # hybrid without an LLM is skipped by _tag_all, so only a runnable tagger may cost this.
    if "embedding" in names or ("hybrid" in names and settings.llm_configured):
        # The embedding tagger searches a vector index over entity names; fill what is missing.
        say(f"{set_name}: embedding entity names the database lacks (for the embedding tagger)")
        names_embedded = embed_entity_names(driver, settings, embedder=rag.embedder)
        say(f"{set_name}: {names_embedded} entity names embedded")
    if names:
        say(f"{set_name}: tagging {len(questions)} questions with {', '.join(names)}")
    tags, taggings, errors = _tag_all(settings, driver, questions, names, progress)
    if needs_tags and graphrag_tagger not in tags:
        raise GuidedRAGError(
            f"GraphRAG's tagger {graphrag_tagger!r} could not run: "
            f"{errors.get(graphrag_tagger)}; choose another with --tagger"
        )
    return SetTagging(
        graphrag_tags=tags.get(graphrag_tagger, {}),
        taggings=taggings if set_name == "answerable" else [],
        errors=errors,
        names_embedded=names_embedded,
    )


def _taggers_to_run(
    set_name: str, graphrag_tagger: str, accuracy_taggers: Sequence[str], needs_tags: bool
) -> list[str]:
    names = list(dict.fromkeys([graphrag_tagger, *accuracy_taggers]))
    if set_name != "answerable":
        names = [graphrag_tagger]  # Table 3 is measured on answerable questions only
    if not needs_tags:
        names = [n for n in names if n != graphrag_tagger or set_name == "answerable"]
    return names


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
