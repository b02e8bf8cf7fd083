"""Window assigners with Flink's arithmetic (semantics/windows.py, SEMANTICS §5): starts aligned to size and offset
for negative times too, sliding windows latest first, cleanup saturating at +inf, sessions merging when they touch.
(tests/engine/test_windows.py is the Spark engine's windows stage.)"""
from __future__ import annotations

import pytest

from event_replay.semantics.window_config import WindowConfig
from event_replay.semantics.durations import POS_INF
from event_replay.semantics.windows import (assign, cleanup_time, intersects, max_timestamp, merge_into, sliding,
                                            tumbling, window_start)


@pytest.mark.parametrize("t, size, offset, start", [
    (0, 10, 0, 0), (9, 10, 0, 0), (10, 10, 0, 10),
    (-1, 10, 0, -10), (-10, 10, 0, -10), (-11, 10, 0, -20),  # Flink floors, Python's % stays non-negative
    (7, 10, 3, 3), (2, 10, 3, -7), (13, 10, 3, 13),
])
def test_window_start_floors_to_size_and_offset(t, size, offset, start):
    assert window_start(t, size, offset) == start
    assert tumbling(t, size, offset) == [(start, start + size)]


def test_sliding_lists_every_window_holding_t_latest_first():
    assert sliding(12, 10, 5) == [(10, 20), (5, 15)]
    assert sliding(10, 10, 5) == [(10, 20), (5, 15)]  # [0, 10) ends before 10
    assert sliding(-1, 10, 5) == [(-5, 5), (-10, 0)]
    assert sliding(4, 10, 5, offset=2) == [(2, 12), (-3, 7)]
    assert sliding(7, 15, 5) == [(5, 20), (0, 15), (-5, 10)]
    for t in range(-20, 20):
        assert all(s <= t < e and e - s == 10 for s, e in sliding(t, 10, 5))


def test_max_timestamp_and_cleanup_time_saturate_at_pos_inf():
    assert max_timestamp((0, 10)) == 9
    assert cleanup_time((0, 10), 5) == 14
    assert cleanup_time((0, POS_INF), 5) == POS_INF  # would overflow a Java long
    assert cleanup_time((POS_INF - 10, POS_INF - 2), 2) == POS_INF - 1
    assert cleanup_time((POS_INF - 10, POS_INF - 2), 7) == POS_INF


@pytest.mark.parametrize("cfg, t, windows", [
    (WindowConfig("tumbling", size_ms=10, offset_ms=3), 2, [(-7, 3)]),
    (WindowConfig("sliding", size_ms=10, slide_ms=5), 12, [(10, 20), (5, 15)]),
    (WindowConfig("session", gap_ms=30), 100, [(100, 130)]),
])
def test_assign_by_window_type(cfg, t, windows):
    assert assign(t, cfg) == windows


def test_touching_windows_intersect_and_merge_transitively():
    assert intersects((0, 10), (10, 20)) and intersects((10, 20), (0, 10))
    assert not intersects((0, 10), (11, 20))
    existing = [(0, 10), (12, 20), (40, 50)]
    merged, swallowed = merge_into((9, 12), existing)  # bridges the first two, not the third
    assert merged == (0, 20) and sorted(swallowed) == [(0, 10), (12, 20)]
    assert merge_into((60, 70), existing) == ((60, 70), [])
    merged, swallowed = merge_into((20, 40), existing)  # touches (12, 20) and (40, 50)
    assert merged == (12, 50) and sorted(swallowed) == [(12, 20), (40, 50)]
