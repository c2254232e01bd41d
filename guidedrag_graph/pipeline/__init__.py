"""The pipeline: semantics → selection → ranking in Neo4j → prompt → LLM (paper §3).

``GuidedRAG`` (``guided.py``) runs the stages over one ``GraphContext``; ``results.py`` holds what
it returns (``RetrievalResult``, ``Answer``).
"""

from guidedrag_graph.pipeline.guided import GuidedRAG
from guidedrag_graph.pipeline.question import default_selection
from guidedrag_graph.pipeline.results import Answer, RetrievalResult

__all__ = ["Answer", "GuidedRAG", "RetrievalResult", "default_selection"]
