"""Synthetic paraphrases: deterministic, intent-keeping, distinct from the question."""

from __future__ import annotations

from guidedrag_graph.evaluation.paraphrase import keywords, polite, synthetic_paraphrases


def test_polite_wrapper_keeps_proper_nouns() -> None:
    assert polite("Who founded Rome?") == "Could you tell me who founded Rome?"
    assert polite("NASA launched what in 1990") == "Could you tell me NASA launched what in 1990?"


def test_keywords_drop_function_words() -> None:
    assert keywords("Who was the first president of the association?") == (
        "first president association"
    )
    assert keywords("Who is it?") == "Who is it?"  # nothing left: keep the question


def test_synthetic_paraphrases_are_distinct() -> None:
    q = "When did the Roman Empire fall?"
    ps = synthetic_paraphrases(q)
    assert ps == ["Could you tell me when did the Roman Empire fall?", "Roman Empire fall"]
    assert q not in ps and len(set(ps)) == 2
