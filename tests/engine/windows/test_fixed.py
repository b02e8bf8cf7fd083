"""engine/windows/fixed.py: window assignment (Flink's start with offset, negative times, overlapping sliding
windows) equals the reference model's `semantics/windows.py`. The firings are held to the reference
by tests/engine/test_windows.py and test_vs_reference.py."""
from __future__ import annotations

import pytest

from event_replay.engine.elements import WE, WS
from event_replay.engine.windows.fixed import assign, slide_of
from event_replay.semantics.window_config import WindowConfig
from event_replay.semantics.windows import sliding, tumbling

TIMES = [-25, -10, -1, 0, 1, 3, 9, 10, 13, 29, 30, 1000]
WINDOWS = [WindowConfig("tumbling", size_ms=10), WindowConfig("tumbling", size_ms=10, offset_ms=3),
           WindowConfig("sliding", size_ms=10, slide_ms=4, offset_ms=1),
           WindowConfig("sliding", size_ms=10, slide_ms=5), WindowConfig("sliding", size_ms=9, slide_ms=3, offset_ms=2)]  # slide <= size: config.py


def test_slide_of():
    assert slide_of(WINDOWS[0]) == 10 and slide_of(WINDOWS[2]) == 4


@pytest.mark.spark
@pytest.mark.parametrize("w", WINDOWS, ids=lambda w: f"{w.type}-{w.size_ms}-{w.slide_ms}-{w.offset_ms}")
def test_assign_equals_the_reference_windows(spark, w):
    rows = spark.createDataFrame([(i, t) for i, t in enumerate(TIMES)], "id long, event_time long")
    got = sorted((r["id"], r[WS], r[WE]) for r in assign(rows, w).collect())
    ref = (lambda t: tumbling(t, w.size_ms, w.offset_ms)) if w.type == "tumbling" else (
        lambda t: sliding(t, w.size_ms, w.slide_ms, w.offset_ms))
    assert got == sorted((i, s, e) for i, t in enumerate(TIMES) for s, e in ref(t))
