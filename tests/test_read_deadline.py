"""The client-side deadline of reads (``read_deadline.Deadline``): a block that ends in time is
never cut, a block still running at its deadline is cut from the watchdog's thread, a cut that
finds nothing yet is tried again, and armed deadlines do not pile up."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable

from guidedrag_graph.db.deadline import (
    _WATCHDOG,
    TICK_S,
    Deadline,
    call_budget,
    remaining,
)


def _setting(event: threading.Event) -> Callable[[], bool]:
    """A cancel that records that it ran (and found something to cut)."""

    def cancel() -> bool:
        event.set()
        return True

    return cancel


def test_a_block_that_ends_in_time_is_never_cut() -> None:
    cut = threading.Event()
    with Deadline(0.2, _setting(cut)) as deadline:
        pass
    time.sleep(0.2 + 3 * TICK_S)
    assert not cut.is_set()
    assert not deadline.fired


def test_a_block_still_running_is_cut_at_its_deadline_from_another_thread() -> None:
    cut = threading.Event()
    where: list[int] = []

    def cancel() -> bool:
        where.append(threading.get_ident())
        cut.set()
        return True

    t0 = time.monotonic()
    with Deadline(0.2, cancel) as deadline:
        assert cut.wait(5), "the watchdog never cut the block"  # the blocked read, woken
    took = time.monotonic() - t0
    assert 0.19 <= took < 0.2 + 10 * TICK_S, took
    assert deadline.fired
    assert where and where[0] != threading.get_ident()


def test_a_cut_that_finds_nothing_yet_is_tried_again() -> None:
    tries: list[float] = []
    done = threading.Event()

    def cancel() -> bool:
        tries.append(time.monotonic())
        if len(tries) < 3:
            return False  # a connection still being opened: nothing to shut yet
        done.set()
        return True

    with Deadline(0.1, cancel):
        assert done.wait(5)
    assert len(tries) == 3
    time.sleep(4 * TICK_S)
    assert len(tries) == 3, "tried again after it had cut"


def test_a_failing_cut_does_not_stop_the_watchdog() -> None:
    def broken() -> bool:
        raise RuntimeError("the read's connection was in a state nobody expected")

    with Deadline(0.05, broken):
        time.sleep(0.05 + 4 * TICK_S)
    later = threading.Event()
    with Deadline(0.05, _setting(later)):
        assert later.wait(5), "a later deadline was not acted on"


def test_an_earlier_deadline_wakes_the_watchdog() -> None:
    """A 0.2 s deadline armed while a 30 s one is the watchdog's next wake still fires on time."""
    long_done = threading.Event()
    holder = threading.Thread(
        target=lambda: _hold(Deadline(30, lambda: True), long_done), daemon=True
    )
    holder.start()
    time.sleep(0.1)  # the watchdog now sleeps towards 30 s
    cut = threading.Event()
    t0 = time.monotonic()
    with Deadline(0.2, _setting(cut)):
        assert cut.wait(5)
    assert time.monotonic() - t0 < 0.2 + 10 * TICK_S
    long_done.set()
    holder.join(5)


def _hold(deadline: Deadline, until: threading.Event) -> None:
    with deadline:
        until.wait(10)


def test_concurrent_blocks_each_get_their_own_cut() -> None:
    cut: dict[int, threading.Event] = {n: threading.Event() for n in range(16)}
    fired: dict[int, bool] = {}

    def caller(n: int) -> None:
        seconds = 0.1 if n % 2 else 30.0  # odd ones run past their deadline, even ones end
        with Deadline(seconds, _setting(cut[n])) as deadline:
            if n % 2:
                cut[n].wait(5)
            else:
                time.sleep(0.05)
        fired[n] = deadline.fired

    threads = [threading.Thread(target=caller, args=(n,)) for n in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert fired == {n: bool(n % 2) for n in range(16)}
    assert all(cut[n].is_set() == bool(n % 2) for n in range(16))


def test_armed_deadlines_do_not_pile_up() -> None:
    for _ in range(5000):
        with Deadline(60, lambda: True):
            pass
    assert _WATCHDOG.pending() == 0
    assert len(_WATCHDOG._heap) <= 2100, len(_WATCHDOG._heap)  # compacted, not 5,000 entries


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


def test_a_forked_child_has_a_watchdog_of_its_own() -> None:
    """A child forked while the parent's watchdog runs (the bulk reader's worker processes, a
    forking server) gets a fresh one: the parent's thread is not in the child."""
    with Deadline(60, lambda: True):
        pass  # the parent's watchdog thread is running
    pid = os.fork()
    if pid == 0:  # the child: exit 0 only if its deadline is acted on
        cut = threading.Event()
        with Deadline(0.1, _setting(cut)):
            ok = cut.wait(5)
        os._exit(0 if ok else 1)
    until = time.monotonic() + 15
    done, status = os.waitpid(pid, os.WNOHANG)
    while not done and time.monotonic() < until:
        time.sleep(0.05)
        done, status = os.waitpid(pid, os.WNOHANG)
    if not done:  # stuck on the parent's state: fail, and leave no process behind
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    assert done and os.waitstatus_to_exitcode(status) == 0, "the child's deadline never came"
