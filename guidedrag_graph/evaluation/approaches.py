"""The approach variants ``guidedrag eval`` compares: the paper's four (Table 2) and ours.

The mapping from semantics to a selection (Table 2, ``plan_selection``) belongs to the steering
stage (:mod:`guidedrag_graph.steering.mapping`); this module only lists the variants. Beside the
paper's mapping we run: a *relaxed* policy that turns an intersection holding fewer than ``k``
chunks into a union (for KGs with one subject entity per paragraph, where ∩ is nearly always
empty), *soft* steering (rank over U with the selection boosted), a *neighbourhood* widening by the
co-mention neighbourhood ``near(E)`` (see docs/selections.md), and the library's default, ``auto``
(graded tiers, see docs/steering.md), as a user gets it (``guidedrag``) and fitted per fold
(``guidedrag-calibrated``)."""

from __future__ import annotations

from guidedrag_graph.steering.mapping import (
    TABLE2,
    Approach,
    Configuration,
    Plan,
    SizeOf,
    configuration_of,
    plan_selection,
)

__all__ = [
    "APPROACHES",
    "DOOR_AND_PEER_APPROACHES",
    "PAPER_APPROACHES",
    "TABLE2",
    "Approach",
    "Configuration",
    "Plan",
    "SizeOf",
    "approach_named",
    "configuration_of",
    "plan_selection",
]

APPROACHES: dict[str, Approach] = {
    a.name: a
    for a in (
        Approach("rag", "rag", tagged=False, description="base RAG: cosine over every chunk (U)"),
        Approach("rag*", "rag*", tagged=False, description="RAG with pre-specified entities"),
        Approach(
            "graphrag",
            "graphrag",
            tagged=True,
            description="tagged entities, union for C2, k-hop over all relation types",
        ),
        Approach(
            "graphrag*",
            "graphrag*",
            tagged=False,
            description="pre-specified entities and relation-typed hops",
        ),
        Approach(
            "rag*-relaxed",
            "rag*",
            tagged=False,
            relaxed=True,
            description="RAG*, with E1∩E2 relaxed to E1∪E2 when it holds fewer than k chunks",
        ),
        Approach(
            "graphrag*-relaxed",
            "graphrag*",
            tagged=False,
            relaxed=True,
            description="GraphRAG*, with each ∩ relaxed to ∪ when it holds fewer than k chunks",
        ),
        Approach(
            "graphrag*-soft",
            "graphrag*",
            tagged=False,
            steering="soft",
            description="GraphRAG*'s selection as a soft boost over U (docs/steering.md)",
        ),
        Approach(
            "graphrag*-near",
            "graphrag*",
            tagged=False,
            neighbourhood=True,
            description="GraphRAG*'s selection widened by the co-mention neighbourhood near(E1)",
        ),
        Approach(
            "graphrag*-near-soft",
            "graphrag*",
            tagged=False,
            neighbourhood=True,
            steering="soft",
            description="GraphRAG*'s selection widened by near(E1), as a soft boost over U",
        ),
        Approach(
            "guidedrag",
            "graphrag*",
            tagged=False,
            steering="auto",
            description="the library's default, exactly what a user gets with no options: "
            "steering=auto, graded tiers ∩ > E > A_rel > A_hop > N boosting every chunk, with "
            "the built-in (MuSiQue-calibrated) weights",
        ),
        Approach(
            "guidedrag-calibrated",
            "graphrag*",
            tagged=False,
            steering="auto",
            calibrated=True,
            description="steering=auto with tier boosts fitted by `guidedrag calibrate` on the "
            "other folds (5-fold cross-validation: no question scored by weights fitted on it)",
        ),
        Approach(
            "guidedrag-question",
            "rag",
            tagged=False,
            steering="auto",
            runner="question",
            description="the question alone, as a GraphRAG app sends it: `retrieve(question)`, "
            "auto links the entities it names (EntityLinker) and ranks with their tiers",
        ),
        Approach(
            "guidedretriever",
            "graphrag*",
            tagged=False,
            steering="auto",
            runner="retriever",
            description="the same questions and semantics through neo4j-graphrag: "
            "`GuidedRetriever.search` (must equal `guidedrag`)",
        ),
        Approach(
            "nggr-vector",
            "rag",
            tagged=False,
            steering="auto",
            runner="nggr-vector",
            description="peer: neo4j-graphrag's own VectorRetriever on the same server, index "
            "and question vectors",
        ),
        Approach(
            "nggr-hybrid",
            "rag",
            tagged=False,
            steering="auto",
            runner="nggr-hybrid",
            description="peer: neo4j-graphrag's own HybridRetriever (vector + full-text on "
            "chunk text, the question Lucene-escaped)",
        ),
        Approach(
            "ppr-reference",
            "graphrag*",
            tagged=False,
            steering="auto",
            runner="ppr",
            description="reference: HippoRAG-2-style personalized PageRank over the entity-chunk "
            "graph (reset = stated entities + dense chunk scores x 0.05, damping 0.5), numpy",
        ),
    )
}

# The doors (every way in) and the peers (what a Neo4j user would pick instead).
DOOR_AND_PEER_APPROACHES: tuple[str, ...] = (
    "guidedrag-question",
    "guidedretriever",
    "nggr-vector",
    "nggr-hybrid",
    "ppr-reference",
)

PAPER_APPROACHES: tuple[str, ...] = ("rag", "rag*", "graphrag", "graphrag*")


def approach_named(name: str) -> Approach:
    """Look an approach up by name, case-insensitively, with the valid names in the error."""
    try:
        return APPROACHES[name.strip().lower()]
    except KeyError:
        raise ValueError(
            f"unknown approach {name!r}; choose from {', '.join(APPROACHES)}"
        ) from None
