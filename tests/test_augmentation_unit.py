"""Prompt building, citation checking and the steering policy: pure functions, no database."""

from __future__ import annotations

import pytest

from guidedrag_graph.augmentation import EntityNote, Triplet, build_prompt, estimate_tokens
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.generation import parse_citations
from guidedrag_graph.retrieval import RankedChunk
from guidedrag_graph.semantics import Semantics
from guidedrag_graph.steering.policy import SteeringPolicy

CHUNKS = [
    RankedChunk("c-1", "doc-a", "Doc A", "Alpha text.", 0.9, 0.8, True),
    RankedChunk("c 2", "doc-b", None, "Beta text.", 0.8, 0.6, True),
]
TRIPLETS = [Triplet("Alpha", "BORN_IN", "Beta", predicate="was born in")]


def test_prompt_carries_chunks_semantics_triplets_and_entities() -> None:
    semantics = Semantics(entities=("Alpha",), relations=("born in",), relational=True)
    prompt = build_prompt(
        "Where was Alpha born?",
        CHUNKS,
        semantics=semantics,
        template="relational",
        triplets=TRIPLETS,
        entities=[EntityNote("Alpha", "person", "a test person")],
    )
    user = prompt.user
    assert user.startswith("Question: Where was Alpha born?")
    assert "entities: Alpha; relations: born in; relational: yes" in user
    assert "[c-1] (document: Doc A)\nAlpha text." in user
    assert "[c 2] (document: doc-b)" in user  # no title: the document id
    assert '- (Alpha)-[BORN_IN]->(Beta)  "was born in"' in user
    assert "- Alpha (person): a test person" in user
    # relational template: triplets before the chunks
    assert user.index("Relations between") < user.index("Context chunks")
    factoid = build_prompt("q", CHUNKS, triplets=TRIPLETS)
    assert factoid.user.index("Relations between") > factoid.user.index("Context chunks")
    assert "one short sentence" in factoid.user
    assert prompt.messages[0]["role"] == "system" and "cite" in prompt.system
    assert prompt.token_estimate == estimate_tokens(prompt.system) + estimate_tokens(user) + 8
    with pytest.raises(ValueError, match="unknown prompt template"):
        build_prompt("q", CHUNKS, template="poem")


def test_citations_are_checked_against_the_prompt_and_mapped_to_documents() -> None:
    prompt = build_prompt("q", CHUNKS)
    text = "Alpha [c-1]. Beta [c 2, c-1]. Also [chunk: c-1] and [c-9]; see [a note here]."
    valid, invalid = parse_citations(text, prompt)
    assert [(c.chunk_id, c.document_id, c.document_title) for c in valid] == [
        ("c-1", "doc-a", "Doc A"),
        ("c 2", "doc-b", None),
    ]
    assert invalid == ["c-9"]
    assert parse_citations("no citations at all", prompt) == ([], [])


def test_steering_policy_defaults_follow_the_paper_and_are_editable() -> None:
    policy = SteeringPolicy.default()
    assert policy.decide(Semantics(question_type="open")).ranker == "mmr"
    assert policy.decide(Semantics(question_type="factoid")).ranker == "cosine"
    relational = policy.decide(Semantics(relational=True))
    assert (relational.ranker, relational.template) == ("cosine", "relational")
    assert policy.decide(None).template == "factoid"
    custom = SteeringPolicy.from_json(
        '[{"question_type": "factoid", "complexity": 2, "ranker": "mmr", "top_k": 9}]'
    )
    c2 = custom.decide(Semantics(complexity=2))
    assert (c2.ranker, c2.top_k, c2.rule) == ("mmr", 9, 0)
    assert custom.decide(Semantics(complexity=1)).rule is None  # no rule: cosine fallback
    assert SteeringPolicy.from_json(policy.to_json()) == policy
    with pytest.raises(ConfigurationError, match="JSON list of rules"):
        SteeringPolicy.from_json('[{"ranker": "bm25"}]')
