"""The bulk path's bundle reading and CSV writing, without a server: exactness and equivalence."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from guidedrag_graph.errors import BundleError
from guidedrag_graph.kb import bundle_reader
from guidedrag_graph.kb.bundle_reader import read_bundle
from guidedrag_graph.kb.import_files import embedding_cells
from guidedrag_graph.kb.synthetic import SyntheticSpec, write_synthetic_bundle

F32 = np.finfo(np.float32)
EDGES = [0.0, -0.0, 1e-45, -1e-45, 1e-40, float(F32.tiny), float(F32.max), -float(F32.max),
         0.1, 1 / 3, 123456.7, 1e-7, 1e20, 3.0]  # fmt: skip


def _bits(values: list[float]) -> list[bytes]:
    return [struct.pack("<d", v) for v in values]


def test_embedding_cells_parse_back_to_the_widened_float32_bit_for_bit() -> None:
    rng = np.random.default_rng(3)
    words = rng.integers(0, 2**32, size=20_000, dtype=np.uint64).astype(np.uint32)
    noise = words.view(np.float32)
    noise = noise[np.isfinite(noise)][: 384 * 40].reshape(40, 384)
    matrix = np.vstack([np.resize(np.asarray(EDGES, dtype=np.float32), 384), noise])
    cells = embedding_cells(matrix)
    assert len(cells) == len(matrix)
    for cell, row in zip(cells, matrix, strict=True):
        # float() is correctly rounded, as the importer's Double.parseDouble is.
        parsed = [float(x) for x in cell.split(";")]
        assert _bits(parsed) == _bits(row.astype(np.float64).tolist())
    assert cells[0].split(";")[:2] == ["0.0", "-0.0"]


def test_embedding_cells_refuse_non_finite_values() -> None:
    with pytest.raises(BundleError, match="NaN or infinity"):
        embedding_cells(np.asarray([[1.0, np.inf]], dtype=np.float32))


def test_parallel_reading_equals_sequential_reading_and_its_problems(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "b"
    write_synthetic_bundle(root, SyntheticSpec(300, dims=8))
    monkeypatch.setattr(bundle_reader, "PARALLEL_MIN_BYTES", 0)
    a, b = read_bundle(root), read_bundle(root, workers=2)
    assert a.chunks == b.chunks and a.relations == b.relations and a.entities == b.entities
    assert all(np.array_equal(a.embeddings[k], b.embeddings[k]) for k in a.embeddings)
    lines = (root / "chunks.jsonl").read_text().splitlines()
    lines[3] = lines[3][:-5]  # broken JSON
    lines[7] = lines[7].replace('"embedding": [', '"embedding": ["x", ')
    lines[9] = lines[9].replace('"embedding": [', '"embedding": [1.0, ')
    lines[11] = lines[11].replace('"embedding": [', '"embedding": [1e300, ')[:-1] + "}"
    (root / "chunks.jsonl").write_text("\n".join(lines) + "\n")
    problems = []
    for workers in (1, 2):
        with pytest.raises(BundleError) as err:
            read_bundle(root, workers=workers)
        problems.append(str(err.value))
    assert problems[0] == problems[1]
    assert "chunks.jsonl:4: invalid JSON" in problems[0]
    assert "chunks.jsonl:8: embedding must contain numbers only" in problems[0]
    assert "chunks.jsonl:10: embedding has 9 dimensions" in problems[0]


def test_a_raw_cell_row_is_byte_for_byte_what_csv_writer_writes(tmp_path: Path) -> None:
    """The vector cell is copied into the line, the cells around it go through ``csv.writer``:
    the file equals a ``writerow`` of every whole row (quotes, commas, line breaks, empties)."""
    import csv as csv_module

    from guidedrag_graph.kb.import_files import _Files

    rows = [
        ["a", 'say "hi", then\nleave', 3, "doc", "0.5;-1e-05;2.0", "x", "Chunk"],
        ["b", "", None, "", "1.0;2.0", "", "Chunk"],
        ["c", "plain", 0, "d,1", "0.25", "line\r\nbreak", "Chunk"],
        ["", "t", 1, "d", "0.125", "m", ""],
    ]
    header = ["id", "text", "position", "document_id", "embedding", "meta", ":LABEL"]
    files = _Files(tmp_path)
    raw = files.write("raw.csv", header, rows, plain=True, raw_at=4)
    whole = tmp_path / "whole.csv"
    with whole.open("w", encoding="utf-8", newline="") as handle:
        writer = csv_module.writer(handle, quoting=csv_module.QUOTE_MINIMAL, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    assert raw.read_bytes() == whole.read_bytes()
    assert files.multiline == [raw]  # the line breaks around the raw cell are seen
    cases = [(0, ["0.5;1.0", "q,1", "Chunk"]), (1, ["z", "0.5;1.0", "Chunk"])]
    cases += [(1, ["z", "0.5;1.0", ""]), (1, ["", "0.5;1.0"]), (0, ["0.5;1.0", None])]
    for n, (at, row) in enumerate(cases):  # raw first, last, or beside one empty cell
        one = _Files(tmp_path).write(f"c{n}.csv", ["h"] * len(row), [row], plain=True, raw_at=at)
        expect = tmp_path / f"expect{n}.csv"
        with expect.open("w", encoding="utf-8", newline="") as handle:
            writer = csv_module.writer(handle, lineterminator="\n")
            writer.writerow(["h"] * len(row))
            writer.writerow(row)
        assert one.read_bytes() == expect.read_bytes(), row
