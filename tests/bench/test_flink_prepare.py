"""bench/flink/prepare.py: files whose arrival ranges overlap are read as one batch, in arrival order."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "flink"))

from prepare import _disjoint_batches  # noqa: E402


def test_overlapping_files_share_a_batch_and_batches_ascend():
    files = [Path(n) for n in ("c", "a", "b", "d")]
    metas = [(50, 60), (0, 10), (5, 20), (61, 70)]  # a and b overlap; c and d touch nothing
    batches, ranges = _disjoint_batches(files, metas)
    assert batches == [[Path("a"), Path("b")], [Path("c")], [Path("d")]]
    assert ranges == [(0, 20), (50, 60), (61, 70)]


def test_a_file_inside_another_joins_it():
    batches, ranges = _disjoint_batches([Path("x"), Path("y")], [(0, 100), (10, 20)])
    assert batches == [[Path("x"), Path("y")]] and ranges == [(0, 100)]
