"""The stream watermark from the splits' changes (engine/timeline/stream.py): every split idle, a side input;
against SEMANTICS §8 and the reference model."""
from __future__ import annotations

from event_replay.semantics.durations import NEG_INF
from timeline_cases import log_rows, run_timeline, stream_changes, timeline_config


def test_example_c_all_splits_idle(spark):
    cfg = timeline_config({"strategy": "bounded_out_of_orderness", "max_out_of_orderness": 0, "interval": 200,
                           "idle_timeout": 1000}, {"start": 100, "end": 4000})
    rows = log_rows([("p0", 100, 10000), ("p1", 150, 1000), ("p1", 3000, 2000)])
    (wm_before, changes, values), want = run_timeline(spark, rows, cfg)
    stream = stream_changes(changes)
    assert stream[0] == (200, 999, False)
    # both idle at tick 1600: the stream moves to the largest published value and is idle
    assert (1600, None, True) in stream
    assert values == [999, 9999]
    assert wm_before[("p1", 1)] == 9999  # p1's row at 3000 sees 9999: late
    assert wm_before[("p0", 0)] == NEG_INF and wm_before[("p1", 0)] == NEG_INF
    assert (wm_before, changes, values) == want


def test_side_input_counts_as_plus_infinity(spark):
    cfg = timeline_config({"strategy": "bounded_out_of_orderness", "max_out_of_orderness": 0, "interval": 200,
                           "idle_timeout": 400}, {"start": 0, "end": 3000}, {"side_inputs": ["rules"]})
    rows = log_rows([("p0", 50, 1000), ("p1", 60, 500), ("rules", 70, 0), ("p1", 2500, 800)])
    got, want = run_timeline(spark, rows, cfg)
    assert got == want
