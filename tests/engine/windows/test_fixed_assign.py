"""engine/windows/fixed_assign.py: window assignment (Flink's start with offset, negative times, overlapping sliding
windows, cumulate windows growing by steps) equals the reference model's `semantics/windows.py`, and the bounds the
firings rely on (the first max timestamp, the last end, the lookups' max timestamps) agree with it. The firings
are held to the reference by tests/engine/test_windows.py, test_vs_reference.py and windows/test_fixed.py."""
from __future__ import annotations

import pytest

from event_replay.engine.elements import WE, WS
from event_replay.engine.windows.fixed_assign import (assign, first_max_ts, last_end, max_timestamps, slide_of,
                                                      windows_per_row)
from event_replay.semantics.window_config import WindowConfig
from event_replay.semantics.windows import assign as reference_assign

TIMES = [-25, -10, -1, 0, 1, 3, 9, 10, 13, 29, 30, 1000]
WINDOWS = [WindowConfig("tumbling", size_ms=10), WindowConfig("tumbling", size_ms=10, offset_ms=3),
           WindowConfig("sliding", size_ms=10, slide_ms=4, offset_ms=1),
           WindowConfig("sliding", size_ms=10, slide_ms=5), WindowConfig("sliding", size_ms=9, slide_ms=3, offset_ms=2),
           WindowConfig("cumulate", size_ms=10, step_ms=2), WindowConfig("cumulate", size_ms=12, step_ms=4, offset_ms=3),
           WindowConfig("cumulate", size_ms=10, step_ms=10, offset_ms=7)]


def _id(w: WindowConfig) -> str:
    return f"{w.type}-{w.size_ms}-{w.slide_ms or w.step_ms}-{w.offset_ms}"


def test_slide_of_and_windows_per_row():
    assert slide_of(WINDOWS[0]) == 10 and slide_of(WINDOWS[2]) == 4 and slide_of(WINDOWS[5]) == 2
    assert [windows_per_row(w) for w in WINDOWS] == [1, 1, 3, 2, 3, 5, 3, 1]


def test_reference_cumulate_is_flink_s():
    """CumulativeWindowAssigner: one start (the max-size window's), ends on every step after t up to start + size."""
    w = WindowConfig("cumulate", size_ms=10, step_ms=2)
    assert reference_assign(3, w) == [(0, 4), (0, 6), (0, 8), (0, 10)]
    assert reference_assign(8, w) == [(0, 10)]
    assert reference_assign(-1, w) == [(-10, 0)]
    assert reference_assign(13, WindowConfig("cumulate", size_ms=12, step_ms=4, offset_ms=3)) == [(3, 15)]


@pytest.mark.spark
@pytest.mark.parametrize("w", WINDOWS, ids=_id)
def test_assign_equals_the_reference_windows(spark, w):
    rows = spark.createDataFrame([(i, t) for i, t in enumerate(TIMES)], "id long, event_time long")
    got = sorted((r["id"], r[WS], r[WE]) for r in assign(rows, w).collect())
    assert got == sorted((i, s, e) for i, t in enumerate(TIMES) for s, e in reference_assign(t, w))
    bounds = rows.select("id", first_max_ts(w).alias("first"), last_end(w).alias("last")).collect()
    assert {r["id"]: (r["first"], r["last"]) for r in bounds} == {
        i: (min(e for _, e in reference_assign(t, w)) - 1, max(e for _, e in reference_assign(t, w)))
        for i, t in enumerate(TIMES)}
    queries = {r["__q"] for r in max_timestamps(rows, w).collect()}
    assert {e - 1 for t in TIMES for _, e in reference_assign(t, w)} <= queries
