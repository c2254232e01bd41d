"""The client-side deadline of reads (``read_deadline.within``): results and errors pass
through, a late job is abandoned at the deadline, and workers are reused, not piled up."""

from __future__ import annotations

import threading
import time

import pytest

from guidedrag_graph.read_deadline import DeadlinePassed, call_budget, remaining, within


def test_results_and_errors_pass_through() -> None:
    assert within(5, lambda: [1, 2]) == [1, 2]

    def fail() -> None:
        raise ValueError("the job's own error")

    with pytest.raises(ValueError, match="the job's own error"):
        within(5, fail)


def test_a_late_job_is_abandoned_at_the_deadline_and_still_finishes() -> None:
    release = threading.Event()
    finished = threading.Event()

    def slow() -> int:
        release.wait(10)
        finished.set()
        return 1

    t0 = time.monotonic()
    with pytest.raises(DeadlinePassed):
        within(0.2, slow)
    took = time.monotonic() - t0
    assert 0.19 <= took < 1.0, took
    assert not finished.is_set()
    release.set()
    assert finished.wait(5), "the abandoned job never ran to its end"


def test_workers_are_reused() -> None:
    for _ in range(5):
        within(5, lambda: None)
    before = sum(t.name == "guidedrag-read" for t in threading.enumerate())
    for _ in range(200):
        within(5, lambda: None)
    after = sum(t.name == "guidedrag-read" for t in threading.enumerate())
    assert after == before, (before, after)


def test_concurrent_callers_each_get_their_own_result() -> None:
    results: dict[int, int] = {}

    def caller(n: int) -> None:
        results[n] = within(5, lambda: (time.sleep(0.05), n * n)[1])

    threads = [threading.Thread(target=caller, args=(n,)) for n in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert results == {n: n * n for n in range(16)}


def test_budgets_nest_to_the_earlier_deadline_and_unwind() -> None:
    assert remaining() is None
    with call_budget(10):
        outer = remaining()
        assert outer is not None and 9 < outer <= 10
        with call_budget(60):  # a call inside a call keeps the outer deadline
            inner = remaining()
            assert inner is not None and inner <= outer
        with call_budget(1):  # a tighter inner budget wins while it lasts
            tight = remaining()
            assert tight is not None and tight <= 1
        back = remaining()
        assert back is not None and back > 5
    assert remaining() is None


def test_a_budget_is_per_thread() -> None:
    seen: list[float | None] = []
    with call_budget(5):
        worker = threading.Thread(target=lambda: seen.append(remaining()))
        worker.start()
        worker.join()
    assert seen == [None]
