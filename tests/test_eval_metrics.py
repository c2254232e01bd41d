"""Metric functions against cases computed by hand (no database needed)."""

from __future__ import annotations

import math

import pytest

from guidedrag_graph.evaluation.metrics import (
    all_gold_recall_at_k,
    hit_position,
    latency_stats,
    relevant_at_k,
    retained_share,
    search_space,
    share_at,
    summarize_hits,
    tagging_accuracy,
    tags_correct,
    threshold_keeping,
    turbulence,
)


def test_hit_position_first_gold_counts() -> None:
    assert hit_position(["a", "b", "c"], {"c", "b"}, k=5) == 2
    assert hit_position(["g"], ["g"], k=1) == 1


def test_hit_position_miss_is_k_plus_one() -> None:
    assert hit_position(["a", "b"], {"z"}, k=5) == 6
    assert hit_position([], {"z"}, k=5) == 6


def test_hit_position_only_looks_at_top_k() -> None:
    # The gold chunk sits at rank 6: outside the top 5, so it is a miss.
    assert hit_position(["a", "b", "c", "d", "e", "g"], {"g"}, k=5) == 6
    assert not relevant_at_k(["a", "b", "c", "d", "e", "g"], {"g"}, k=5)
    assert relevant_at_k(["a", "b", "c", "d", "e", "g"], {"g"}, k=6)


def test_hit_position_rejects_bad_k() -> None:
    with pytest.raises(ValueError, match="k must be"):
        hit_position(["a"], {"a"}, k=0)


def test_all_gold_recall() -> None:
    assert all_gold_recall_at_k(["a", "x", "b"], ["a", "b", "c", "d"], k=5) == 0.5
    assert all_gold_recall_at_k(["a", "x", "b"], ["a", "b"], k=2) == 0.5
    assert all_gold_recall_at_k(["a"], [], k=5) == 1.0


def test_summarize_hits_hand_computed() -> None:
    # hits at 1 and 3, two misses (6): avg = (1+3+6+6)/4 = 4.0, median = (3+6)/2 = 4.5
    s = summarize_hits([1, 3, 6, 6], [1.0, 0.5, 0.0, 0.5], k=5)
    assert s.n == 4
    assert s.relevant == 0.5
    assert s.avg_hit == 4.0
    assert s.median_hit == 4.5
    assert s.all_gold_recall == 0.5


def test_summarize_hits_rejects_positions_out_of_range() -> None:
    with pytest.raises(ValueError, match=r"1\.\.6"):
        summarize_hits([7], [0.0], k=5)


def test_summarize_hits_empty_is_nan() -> None:
    s = summarize_hits([], [], k=5)
    assert s.n == 0 and math.isnan(s.relevant)


def test_search_space_per_kind() -> None:
    stats = search_space({"U": [100, 100], "E1∩E2": [0, 3, 9], "E1": []})
    assert [s.kind for s in stats] == ["U", "E1∩E2"]
    inter = stats[1]
    assert (inter.min, inter.avg, inter.max, inter.empty, inter.n) == (0, 4.0, 9, 1, 3)


def test_retained_share_counts_abstentions_as_nothing() -> None:
    # Three questions, k = 2 -> 6 slots. The third abstained (empty selection).
    scores = [[0.9, 0.8], [0.85, 0.5], []]
    curve = retained_share(scores, k=2, thresholds=[0.5, 0.8, 0.83, 0.9, 0.95])
    assert curve == [
        (0.5, 4 / 6),
        (0.8, 3 / 6),
        (0.83, 2 / 6),
        (0.9, 1 / 6),
        (0.95, 0.0),
    ]
    assert share_at(curve, 0.83) == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="grid"):
        share_at(curve, 0.84)


def test_retained_share_is_at_or_above() -> None:
    assert retained_share([[0.83]], k=1, thresholds=[0.83]) == [(0.83, 1.0)]


def test_retained_share_rejects_more_than_k() -> None:
    with pytest.raises(ValueError, match="top 1"):
        retained_share([[0.9, 0.8]], k=1, thresholds=[0.5])


def test_threshold_keeping() -> None:
    curve = [(0.7, 1.0), (0.8, 0.6), (0.85, 0.5), (0.9, 0.2)]
    assert threshold_keeping(curve, 0.5) == 0.85
    assert threshold_keeping(curve, 0.9) == 0.7
    assert threshold_keeping([(0.7, 0.1)], 0.5) is None


def test_turbulence_formula() -> None:
    same = [["a", "b", "c", "d", "e"]] * 3
    assert turbulence(same, k=5) == 0.0
    disjoint = [list("abcde"), list("fghij"), list("klmno")]
    assert turbulence(disjoint, k=5) == 1.0
    # D_c = 7 over P = 3: (7 - 5) / (15 - 5) = 0.2 (the paper's (D_c - 5) / 10)
    partly = [list("abcde"), list("abcdf"), list("abcdg")]
    assert turbulence(partly, k=5) == pytest.approx(0.2)


def test_turbulence_with_short_selections() -> None:
    # selections of one chunk: the same chunk every time is 0, a different one each time is 1
    assert turbulence([["a"], ["a"], ["a"]], k=5) == 0.0
    assert turbulence([["a"], ["b"], ["c"]], k=5) == 1.0
    # N = 2 + 2 + 1 = 5, m = 2, D_c = 3: (3 - 2) / (5 - 2)
    assert turbulence([["a", "b"], ["a", "c"], ["a"]], k=5) == pytest.approx(1 / 3)
    assert turbulence([[], []], k=5) == 0.0
    # never below 0, never above 1
    assert 0.0 <= turbulence([["a", "b"], ["b"]], k=5) <= 1.0


def test_turbulence_needs_two_formulations() -> None:
    with pytest.raises(ValueError, match="two formulations"):
        turbulence([["a"]], k=5)


def test_tags_correct_uses_name_key_and_len_gold() -> None:
    assert tags_correct(["Rome"], ["rome", "Carthage"]) == 1
    # only the first len(gold) tags count: Carthage at rank 2 is not a guess for a C1 question
    assert tags_correct(["Carthage"], ["Rome", "Carthage"]) == 0
    assert tags_correct(["Rome", "Carthage"], ["Carthage", "ROME  "]) == 2
    # one tag matches one gold entity only
    assert tags_correct(["Rome", "Rome"], ["rome", "x"]) == 1


def test_tagging_accuracy_aggregates() -> None:
    score = tagging_accuracy(
        "embedding", [["Rome"], ["Hannibal", "Carthage"]], [["Rome"], ["Carthage", "Spain"]]
    )
    assert (score.questions, score.gold_entities, score.correct) == (2, 3, 2)
    assert score.accuracy == pytest.approx(2 / 3)


def test_latency_stats() -> None:
    stats = latency_stats([0.001 * i for i in range(1, 21)])  # 1..20 ms
    assert stats.n == 20
    assert stats.mean_ms == pytest.approx(10.5)
    assert stats.median_ms == pytest.approx(10.5)
    assert stats.p95_ms == pytest.approx(19.0)
    assert stats.max_ms == pytest.approx(20.0)
