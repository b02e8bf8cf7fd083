"""Periodic emission's tick timeline (engine/timeline/periodic.py): a range without a tick publishes nothing."""
from __future__ import annotations

from event_replay.semantics.durations import NEG_INF
from timeline_cases import log_rows, run_timeline, timeline_config


def test_no_tick_in_range(spark):
    cfg = timeline_config({"strategy": "sql", "max_out_of_orderness": 10, "interval": 1000}, {"start": 1, "end": 999})
    rows = log_rows([("p0", 5, 100), ("p0", 900, 200)])
    got, want = run_timeline(spark, rows, cfg)
    assert got == want
    assert got[1] == [] and set(got[0].values()) == {NEG_INF}
