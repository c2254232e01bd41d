"""CI's samples of exhaustive loops (tests/full_run.py) and its module order (tests/conftest.py):
the sample keeps both ends and spreads, the full switch restores every case, and the order puts
slow modules first and sample-KB readers together without splitting or reordering a module."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from tests.conftest import pytest_collection_modifyitems
from tests.full_run import FULL_ENV, ci_sample


def test_the_sample_keeps_both_ends_and_spreads_evenly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(FULL_ENV, raising=False)
    assert ci_sample(range(1, 26), 6) == [1, 6, 11, 15, 20, 25]
    assert ci_sample(range(1, 5), 6) == [1, 2, 3, 4]  # fewer cases than the sample: all
    assert ci_sample(range(3, 40), 2) == [3, 39]
    with pytest.raises(ValueError, match="at least 2"):
        ci_sample(range(10), 1)


def test_the_full_switch_walks_every_case(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FULL_ENV, "1")
    assert ci_sample(range(1, 26), 6) == list(range(1, 26))
    monkeypatch.setenv(FULL_ENV, "0")
    assert len(ci_sample(range(1, 26), 6)) == 6


@dataclass
class _Item:
    """What the ordering hook reads of a pytest item."""

    nodeid: str
    fixturenames: tuple[str, ...] = ()
    markers: set[str] = field(default_factory=set)

    def get_closest_marker(self, name: str) -> object | None:
        return name if name in self.markers else None

    def add_marker(self, marker: object) -> None:
        self.markers.add(getattr(marker, "name", str(marker)))


def test_modules_move_whole_slow_first_then_readers_together() -> None:
    server = ("neo4j_server",)
    reader = ("neo4j_server", "sample_db")
    items = [
        _Item("tests/test_offline.py::a"),
        _Item("tests/test_small_wiper.py::a", server),
        _Item("tests/test_wiper.py::a", server),
        _Item("tests/test_reader_one.py::a", reader),
        _Item("tests/test_mixed.py::b", server),
        _Item("tests/test_mixed.py::a", reader),
        _Item("tests/test_wiper.py::b", server),
        _Item("tests/test_reader_two.py::a", reader),
        _Item("tests/test_slow.py::a", server, {"slow"}),
    ]
    pytest_collection_modifyitems(items)  # type: ignore[arg-type]
    assert [i.nodeid for i in items] == [
        "tests/test_slow.py::a",
        "tests/test_reader_one.py::a",
        "tests/test_reader_two.py::a",
        "tests/test_mixed.py::b",  # a module's own order is kept
        "tests/test_mixed.py::a",
        "tests/test_wiper.py::a",  # the larger module first within its group
        "tests/test_wiper.py::b",
        "tests/test_small_wiper.py::a",
        "tests/test_offline.py::a",
    ]
    assert all("neo4j" in i.markers for i in items if "neo4j_server" in i.fixturenames)
