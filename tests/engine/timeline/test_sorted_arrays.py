"""sorted_arrays.py: distinct values by one sort, equal to np.unique's."""
from __future__ import annotations

import numpy as np
import pytest

from event_replay.engine.timeline.sorted_arrays import distinct_sorted


@pytest.mark.parametrize("values", [
    [], [5], [3, 3, 3], [9, -2, 9, 0, -2, 2 ** 62, -2 ** 63, 2 ** 63 - 1, 0],
    list(np.random.default_rng(7).integers(-50, 50, 1_000)),
])
def test_distinct_values_ascending_as_np_unique(values):
    a = np.array(values, dtype=np.int64)
    got = distinct_sorted(a)
    assert got.dtype == np.int64 and got.tolist() == np.unique(a).tolist()


def test_other_dtypes_and_shapes_are_kept_or_flattened_as_np_unique():
    assert distinct_sorted(np.array([2, 1, 2], dtype=np.int32)).dtype == np.int32
    assert distinct_sorted(np.array([[3, 1], [3, 2]])).tolist() == [1, 2, 3]
    assert distinct_sorted(np.array([True, False, True])).tolist() == [False, True]


def test_the_input_is_left_as_it_was():
    a = np.array([3, 1, 2, 1])
    distinct_sorted(a)
    assert a.tolist() == [3, 1, 2, 1]
