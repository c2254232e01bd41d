"""What an evaluation runs: the approaches, k, GraphRAG's tagger, Table 3's taggers, the path."""

from __future__ import annotations

from dataclasses import dataclass

from guidedrag_graph.evaluation.approaches import (
    DOOR_AND_PEER_APPROACHES,
    PAPER_APPROACHES,
    approach_named,
)
from guidedrag_graph.vocabulary import TAGGERS

DEFAULT_APPROACHES: tuple[str, ...] = (
    *PAPER_APPROACHES,
    "rag*-relaxed",
    "graphrag*-relaxed",
    "graphrag*-soft",
    "graphrag*-near",
    "graphrag*-near-soft",
    "guidedrag",
    "guidedrag-calibrated",
    *DOOR_AND_PEER_APPROACHES,
)


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
