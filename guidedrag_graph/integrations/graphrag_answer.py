"""``GuidedGraphRAG``: neo4j-graphrag's ``GraphRAG`` that does not call its LLM when the KB
abstains (re-exported by guidedrag_graph/integrations/neo4j_graphrag.py, beside the retriever).

>>> rag = GuidedGraphRAG(retriever=GuidedRetriever(driver, settings), llm=OpenAILLM(...))
>>> result = rag.search("Where was Ada Lovelace born?")
>>> result.abstained, result.llm_called, result.answer
"""

from __future__ import annotations

from typing import Any

from neo4j_graphrag.generation import GraphRAG
from neo4j_graphrag.generation.types import RagResultModel
from neo4j_graphrag.message_history import MessageHistory
from neo4j_graphrag.retrievers.base import Retriever
from neo4j_graphrag.types import LLMMessage

from guidedrag_graph.errors import ConfigurationError

__all__ = ["ABSTENTION_ANSWER", "GuidedGraphRAG", "GuidedRagResult"]

ABSTENTION_ANSWER = "The knowledge base cannot answer this: {reason}"


class GuidedRagResult(RagResultModel):
    """``GraphRAG.search``'s result with what the retrieval decided: ``abstained`` and its
    ``reason``, and whether the LLM was called for the answer."""

    abstained: bool = False
    reason: str | None = None
    llm_called: bool = False


class GuidedGraphRAG(GraphRAG):
    """neo4j-graphrag's ``GraphRAG`` that answers an abstention without calling the LLM.

    When the retriever returns no item (with ``GuidedRetriever``: the KB does not know a stated
    name, no chunk passes the filters, or nothing passed the threshold) the answer is
    ``response_fallback`` if given, else ``abstention_answer`` with the retriever's reason, and
    no prompt is sent. Otherwise it is ``GraphRAG.search`` unchanged. (With a
    ``message_history``, neo4j-graphrag still asks the LLM to summarise the history before
    retrieving; that call is the query's, not the answer's.)
    """

    def __init__(
        self,
        retriever: Retriever,
        llm: Any,
        *args: Any,
        abstention_answer: str = ABSTENTION_ANSWER,
        scope: Any = None,
        **kwargs: Any,
    ) -> None:
        """``scope`` (trusted, server-side): a ``GuidedRetriever`` is replaced by a copy narrowed
        to it (``GuidedRetriever.scoped``); no search argument can widen it."""
        if scope is not None:
            narrow = getattr(retriever, "scoped", None)
            if narrow is None:
                raise ConfigurationError(
                    "GuidedGraphRAG(scope=...) needs a GuidedRetriever, whose pipeline the scope "
                    f"narrows; got {type(retriever).__name__}"
                )
            retriever = narrow(scope)
        super().__init__(retriever, llm, *args, **kwargs)
        self.abstention_answer = abstention_answer

    def search(
        self,
        query_text: str = "",
        message_history: list[LLMMessage] | MessageHistory | None = None,
        examples: str = "",
        retriever_config: dict[str, Any] | None = None,
        return_context: bool | None = None,
        response_fallback: str | None = None,
    ) -> GuidedRagResult:
        """``GraphRAG.search``; ``return_context`` defaults to False (no warning)."""
        # GraphRAG skips its LLM when the retriever returns no item and a fallback is given.
        done = super().search(
            query_text,
            message_history,
            examples,
            retriever_config,
            return_context=True,
            response_fallback=_NO_ITEMS,
        )
        retrieved = done.retriever_result
        assert retrieved is not None  # return_context=True
        context = retrieved if return_context else None
        if retrieved.items:
            return GuidedRagResult(answer=done.answer, retriever_result=context, llm_called=True)
        metadata = retrieved.metadata or {}
        empty = metadata.get("empty") or {}
        reason = empty.get("message") or "no passage was retrieved for the question"
        answer = response_fallback or self.abstention_answer.format(reason=reason)
        return GuidedRagResult(
            answer=answer, retriever_result=context, abstained=True, reason=reason
        )


_NO_ITEMS = "\x00guidedrag: the retriever returned no item\x00"
