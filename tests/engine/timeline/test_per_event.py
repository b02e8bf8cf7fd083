"""Per-event emission (engine/timeline/per_event.py): against SEMANTICS §8 and the reference model."""
from __future__ import annotations

from event_replay.semantics.durations import NEG_INF
from timeline_cases import log_rows, run_timeline, stream_changes, timeline_config


def test_example_d_parallel_inputs_per_event(spark):
    cfg = timeline_config({"strategy": "sql", "max_out_of_orderness": 0, "emit": "per_event"})
    rows = log_rows([("s0", 10, 2), ("s1", 11, 4), ("s2", 12, 3), ("s3", 13, 6),
                     ("s0", 20, 4), ("s1", 21, 7), ("s2", 22, 6)])
    (wm_before, changes, values), want = run_timeline(spark, rows, cfg)
    assert stream_changes(changes) == [(13, 2, False), (20, 3, False), (22, 4, False)]
    assert values == [2, 3, 4]
    assert [wm_before[k] for k in [("s0", 0), ("s3", 0), ("s0", 1), ("s1", 1), ("s2", 1)]] == [NEG_INF, NEG_INF, 2, 3, 3]
    assert (wm_before, changes, values) == want


def test_per_event_declared_split_without_rows_holds_minus_infinity(spark):
    cfg = timeline_config({"strategy": "monotonous", "emit": "per_event"}, source={"splits": ["p0", "p1"]})
    rows = log_rows([("p0", 1, 100), ("p0", 2, 200)])
    got, want = run_timeline(spark, rows, cfg)
    assert got == want
    assert stream_changes(got[1]) == [] and set(got[0].values()) == {NEG_INF}
