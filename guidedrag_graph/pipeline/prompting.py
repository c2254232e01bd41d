"""``ask`` up to the LLM call: retrieve, then the augmented prompt, on one version of a scope.

Kept apart from ``guided.py`` so the class holds the doors and this the one way an answer's
prompt is made, sync (``ask``) and async (``aask``) alike.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from guidedrag_graph.augmentation import AugmentedPrompt
from guidedrag_graph.pipeline.question import RetrieveOptions, Selection
from guidedrag_graph.pipeline.results import Answer, RetrievalResult
from guidedrag_graph.pipeline.scoping import on_one_version
from guidedrag_graph.selection.scope import CompiledScope

if TYPE_CHECKING:
    from guidedrag_graph.pipeline.guided import GuidedRAG

Prompted = Answer | tuple[RetrievalResult, AugmentedPrompt, dict[str, float]]


def prompted(
    rag: GuidedRAG,
    question: str,
    selection: Selection,
    template: str | None,
    options: RetrieveOptions,
) -> Prompted:
    """The answer when there is no LLM call to make (abstained, or no LLM configured), else the
    retrieval, the prompt and the timings so far. The retrieval and the prompt's triplets are
    made on one version of the instance's scope (``on_one_version``): a prompt never holds a
    triplet from documents written outside the scope after it was read."""
    return on_one_version(
        lambda fresh: rag.selector.scope(rag.scope, fresh=fresh),
        lambda scope: _prompted_in(rag, question, selection, template, options, scope),
    )


def _prompted_in(
    rag: GuidedRAG,
    question: str,
    selection: Selection,
    template: str | None,
    options: RetrieveOptions,
    scope: CompiledScope | None,
) -> Prompted:
    retrieval = rag.retrieve(question, selection, **options)
    semantics = retrieval.semantics  # as stated, or with the entities auto linked
    if retrieval.empty is not None:
        return Answer.abstention(retrieval, retrieval.empty.message)
    if not retrieval.chunks and retrieval.steering in ("hard", "auto"):
        return Answer.abstention(retrieval, "no chunk passed the similarity threshold")
    started = time.perf_counter()
    prompt = rag.augmenter.augment(
        question,
        retrieval.chunks,
        semantics=semantics,
        template=template or retrieval.template,
        scope=scope,  # kept per KB version: no read
    )
    timings = {**retrieval.timings, "augmentation": time.perf_counter() - started}
    if not rag.llm_configured:
        return Answer.prompt_only(retrieval, prompt, timings)
    return retrieval, prompt, timings
