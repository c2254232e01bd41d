"""``chunks.jsonl`` parsed by worker processes: JSON and embeddings off the main process.

At a million chunks most of the reading is per-line work that needs no shared state: decoding
the JSON (384 Python floats a line), checking the embedding holds numbers only, and converting
it to float32. Workers do that for byte ranges of the file (split at line ends); the main
process gets the lines back *in file order* and validates rows, references and duplicates
exactly as the sequential reader does, so the problems and their order are the same.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from guidedrag_graph.kb.bundle_lines import Problems, parse_line

# Below this size the workers' start-up costs more than they save.
PARALLEL_MIN_BYTES = 64 * 1024 * 1024
_RANGE_BYTES = 32 * 1024 * 1024  # one task: ~4k chunks of 384 floats
_NUMBER_TYPES = frozenset({float, int})


@dataclass(frozen=True)
class ParsedEmbedding:
    """A line's ``embedding`` as a worker checked it: float32 row, or why it is not one."""

    length: int
    row: np.ndarray | None  # None when ``problem`` is set
    problem: str | None = None


def embedding_problem(value: Any) -> str | None:
    """Why a raw embedding is not a flat list of numbers, or None (checked at C speed)."""
    if not isinstance(value, list) or not value:
        return "embedding must be a non-empty list of numbers"
    if not set(map(type, value)) <= _NUMBER_TYPES:
        return "embedding must contain numbers only"
    return None


def default_workers() -> int:
    """One worker per CPU the process may use, keeping one for the main process."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cpus = os.cpu_count() or 1
    return max(1, cpus - 1)


def parsed_chunk_lines(
    path: Path, errors: Problems, workers: int
) -> Iterator[tuple[str, dict[str, Any]]]:
    """What ``json_lines`` yields for ``path``, with each ``embedding`` a ParsedEmbedding."""
    ranges = _line_ranges(path)
    if not ranges:
        return
    context = multiprocessing.get_context("spawn")  # no fork of a process holding threads
    with context.Pool(min(workers, len(ranges))) as pool:
        offset = 0
        for lines, items in pool.imap(_parse_range, [(str(path), a, b) for a, b in ranges]):
            for local, obj in items:
                where = f"{path.name}:{offset + local}"
                if isinstance(obj, str):
                    errors.add(where, obj)
                    errors.unreadable.add(path.name)
                else:
                    yield where, obj
            offset += lines


def _line_ranges(path: Path) -> list[tuple[int, int]]:
    """Byte ranges of about ``_RANGE_BYTES`` covering the file, each ending at a line end."""
    size = path.stat().st_size
    bounds = [0]
    with path.open("rb") as handle:
        while bounds[-1] < size:
            handle.seek(min(size, bounds[-1] + _RANGE_BYTES))
            handle.readline()
            bounds.append(min(size, handle.tell()))
    return list(itertools.pairwise(bounds))


def _parse_range(task: tuple[str, int, int]) -> tuple[int, list[tuple[int, Any]]]:
    """(lines in the range, [(line within the range, object or problem)]) for one range."""
    name, start, end = task
    items: list[tuple[int, Any]] = []
    pending: list[tuple[dict[str, Any], list[float]]] = []
    with open(name, "rb") as handle:
        handle.seek(start)
        data = handle.read(end - start)
    # Lines with their line end, as iterating over the file gives them (JSON error columns).
    pieces = data.split(b"\n")
    last = pieces.pop()  # after the last line end: b"" unless the file ends without one
    lines = [piece + b"\n" for piece in pieces] + ([last] if last else [])
    for number, raw in enumerate(lines, start=1):
        parsed = parse_line(raw, first=start == 0 and number == 1)
        if parsed is None:
            continue
        items.append((number, parsed))
        if isinstance(parsed, dict) and "embedding" in parsed:
            raw_embedding = parsed["embedding"]
            problem = embedding_problem(raw_embedding)
            if problem is not None:
                parsed["embedding"] = ParsedEmbedding(_length(raw_embedding), None, problem)
            else:
                pending.append((parsed, raw_embedding))
    _convert(pending)
    return len(lines), items


def _length(value: Any) -> int:
    return len(value) if isinstance(value, list) else 0


def _convert(pending: list[tuple[dict[str, Any], list[float]]]) -> None:
    """float32 rows, converted per run of equal lengths (one NumPy call, not one per line)."""
    start = 0
    while start < len(pending):
        length = len(pending[start][1])
        stop = start
        while stop < len(pending) and len(pending[stop][1]) == length:
            stop += 1
        with np.errstate(over="ignore"):
            block = np.asarray([raw for _, raw in pending[start:stop]], dtype=np.float32)
        for (obj, _), row in zip(pending[start:stop], block, strict=True):
            obj["embedding"] = ParsedEmbedding(length, row)
        start = stop
