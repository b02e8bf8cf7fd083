"""Which split held the stream watermark (attribution.py): per stream value, the split(s) whose own
watermark was that value when the stream first reached it (both when two published it; not a split that had moved
on), none for a value no active split published (the all-idle jump); a late row blamed on the holder of its late
watermark only if the stream reached it before the row arrived (at the same time too with per-event emission)."""
from __future__ import annotations

import pytest

from event_replay.attribution import ALL_IDLE, holders, late_causes

pytestmark = pytest.mark.spark

WM_SCHEMA = "scope string, split string, idle boolean, watermark_ms long, replay_time_ms long"
# time: what changed
CHANGES = [
    ("split", "p2", False, 10, 50), ("split", "p2", False, 15, 90),  # p2 published 10 but moved on before t=200
    ("split", "p0", False, 10, 100), ("split", "p1", False, 5, 100), ("stream", None, False, 5, 100),
    ("split", "p1", False, 20, 200), ("stream", None, False, 10, 200),  # held by p0 (p2 had moved on)
    ("split", "p0", False, 30, 300), ("stream", None, False, 15, 300),  # p2's 15, still its value
    ("split", "p0", False, 40, 400), ("split", "p1", False, 40, 400), ("split", "p2", False, 40, 400),
    ("stream", None, False, 40, 400),  # all three at once
    ("split", "p0", True, None, 500), ("split", "p1", True, None, 500), ("split", "p2", True, None, 500),
    ("stream", None, True, None, 500),
    ("stream", None, False, 50, 600),  # no active split published 50: the all-idle jump
]


@pytest.fixture(scope="module")
def held(spark):
    return holders(spark.createDataFrame(CHANGES, WM_SCHEMA))


def test_holders_per_stream_value(held):
    got = {r.W: (r.e_time, r.holder) for r in held.collect()}
    assert got == {5: (100, "p1"), 10: (200, "p0"), 15: (300, "p2"), 40: (400, "p0+p1+p2"), 50: (600, None)}


def test_the_first_time_the_stream_reached_a_value_counts(spark):
    again = CHANGES + [("split", "p0", False, 60, 700), ("stream", None, False, 60, 700),
                       ("stream", None, False, 60, 800)]
    got = {r.W: (r.e_time, r.holder) for r in holders(spark.createDataFrame(again, WM_SCHEMA)).collect()}
    assert got[60] == (700, "p0")


@pytest.mark.parametrize("per_event, at_200", [(False, ALL_IDLE), (True, "p0")])
def test_late_rows_blamed_on_the_holder_the_stream_had_reached_before_they_arrived(spark, held, per_event, at_200):
    late = spark.createDataFrame([("p1", 250, 10), ("p1", 260, 10), ("p2", 200, 10), ("p0", 700, 50),
                                  ("p0", 700, 7)], "split string, arrival_ms long, late_watermark_ms long")
    got = {(r.split, r.cause): r.rows for r in late_causes(late, held, per_event).collect()}
    expected = {("p1", "p0"): 2, ("p0", ALL_IDLE): 2}  # 50: no holder; 7: never a stream value
    expected[("p2", at_200)] = 1  # reached at the row's own arrival time: before it only with per-event emission
    assert got == expected


def test_side_by_side_by_stream_equal_each_alone(spark):
    """`by`: two streams' changes in one plan (the same values and times, different holders), each attributed on
    its own rows only."""
    other = [(s, {"p0": "p1", "p1": "p0"}.get(p, p), idle, w, t) for s, p, idle, w, t in CHANGES]
    streams = {"a": CHANGES, "b": other}
    wm = spark.createDataFrame([(v, *r) for v, rs in streams.items() for r in rs], "stream_id string, " + WM_SCHEMA)
    late = spark.createDataFrame([("a", "p1", 250, 10), ("b", "p1", 250, 10), ("b", "p0", 700, 50)],
                                 "stream_id string, split string, arrival_ms long, late_watermark_ms long")
    held = holders(wm, ["stream_id"])
    causes = late_causes(late, held, False, ["stream_id"]).collect()
    for v, changes in streams.items():
        alone = holders(spark.createDataFrame(changes, WM_SCHEMA))
        assert sorted(tuple(r)[1:] for r in held.collect() if r["stream_id"] == v) == sorted(
            tuple(r) for r in alone.collect())
        mine = late.where(late.stream_id == v).drop("stream_id")
        assert sorted(tuple(r)[1:] for r in causes if r["stream_id"] == v) == sorted(
            tuple(r) for r in late_causes(mine, alone, False).collect())
    assert {(r["stream_id"], r["cause"]) for r in causes} == {("a", "p0"), ("b", "p1"), ("b", ALL_IDLE)}
