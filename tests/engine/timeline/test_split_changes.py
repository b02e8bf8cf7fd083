"""Each split's watermark changes under periodic emission (engine/timeline/split_changes.py): idleness of a
declared split without rows, silence advance; against SEMANTICS §8 and the reference model."""
from __future__ import annotations

from event_replay.semantics.durations import NEG_INF
from timeline_cases import log_rows, run_timeline, stream_changes, timeline_config


def test_example_b_declared_empty_split_and_idleness(spark):
    cfg = timeline_config({"strategy": "bounded_out_of_orderness", "max_out_of_orderness": 0, "interval": 200,
                           "idle_timeout": 1000},
                          {"start": 100, "end": 4000}, {"splits": ["p0", "p1", "p2"]})
    rows = log_rows([("p0", 100, 1000), ("p1", 150, 1100), ("p0", 300, 5000), ("p0", 700, 9000),
                     ("p0", 1500, 12000), ("p0", 2600, 15000), ("p1", 2700, 3000), ("p0", 2800, 16000)])
    (wm_before, changes, values), want = run_timeline(spark, rows, cfg)
    stream = stream_changes(changes)
    # p2 holds the stream back until it goes idle at tick 1400; the stream moves to 1099 (p1).
    assert (1400, 1099, False) in stream
    assert all(t >= 1400 for t, wm, _ in stream)
    # p1 idle at tick 1600: 11999 (p0); p0's row at 2600 moves it to 14999 at tick 2600, and it stays there.
    assert (1600, 11999, False) in stream and (2600, 14999, False) in stream
    assert values == [1099, 11999, 14999]
    # p1's row at 2700 sees 14999 (it is late); p1 is active again from tick 2800 with 2999.
    assert wm_before[("p1", 1)] == 14999
    assert (2800, "split", "p1", 2999, False) in changes
    assert (1400, "split", "p2", None, True) in changes and (1600, "split", "p1", None, True) in changes
    assert wm_before[("p0", 0)] == NEG_INF and wm_before[("p0", 4)] == 11999
    assert (wm_before, changes, values) == want


def test_silence_advance_ramps_until_idle(spark):
    cfg = timeline_config({"strategy": "monotonous", "interval": 100, "idle_timeout": 500,
                           "advance_after_silence": 250}, {"start": 0, "end": 2000})
    rows = log_rows([("p0", 50, 1000), ("p1", 60, 500), ("p1", 120, 700), ("p1", 1500, 800)])
    got, want = run_timeline(spark, rows, cfg)
    assert got == want
    assert any(scope == "split" and split == "p0" and wm == 1000 + 300 - 1 for _, scope, split, wm, _ in got[1])
