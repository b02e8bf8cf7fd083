"""engine/carry.py: each split's last offset after a range, from the range's clean rows or the sources' known
offsets, never below what the history already carried."""
from __future__ import annotations

import pytest

from event_replay.engine.carry import Carry, last_offsets_after


def _carried(last_offsets: dict[str, int]) -> Carry:
    return Carry(origin_tick=None, stream_watermark=0, stream_idle=False, splits=sorted(last_offsets),
                 last_offsets=last_offsets)


def test_known_offsets_merge_with_the_carried_ones_sorted_by_split():
    got = last_offsets_after(None, _carried({"b": 7, "c": 3}), known={"a": 4, "b": 9})
    assert got == {"a": 4, "b": 9, "c": 3}
    assert list(got) == ["a", "b", "c"]


def test_a_carried_offset_above_the_ranges_is_kept():
    assert last_offsets_after(None, _carried({"a": 12}), known={"a": 5}) == {"a": 12}


def test_a_new_history_starts_from_the_ranges_offsets():
    assert last_offsets_after(None, None, known={"s": 2}) == {"s": 2}
    assert last_offsets_after(None, None, known={}) == {}


@pytest.mark.spark
def test_without_known_offsets_the_rows_give_each_splits_largest(spark):
    rows = spark.createDataFrame([("a", 3), ("a", 11), ("b", 2), ("a", 7)], "split string, offset long")
    assert last_offsets_after(rows, _carried({"b": 5, "z": 1})) == {"a": 11, "b": 5, "z": 1}
