"""The figures of a what-if variant (tuning/figures.py) on small hand-made series, against its definitions: the
stream value V kept while the stream is idle (the running max of the split values), the lag N - V time-weighted
where both are defined and V finite, its p99 the smallest lag covering 99 % of the time, first-firing delays, and
counts ranked largest first. (tests/tuning/test_runner.py checks every figure against a separate replay.)"""
from __future__ import annotations

import pytest

from event_replay.semantics.durations import NEG_INF, POS_INF
from event_replay.tuning.figures import (first_fire_delays, lag_figures_of, lag_summary, ranked, stream_values_of,
                                         watermark_lag_segments)
from event_replay.tuning.lag_points import lag_points


def test_ranked_largest_first_ties_by_name():
    assert ranked({"p1": 2, "p3": 40, "p0": 2, "all-idle jump": 7}) == "p3 40, all-idle jump 7, p0 2, p1 2"
    assert ranked({}) == ""


@pytest.mark.spark
def test_stream_value_is_kept_while_idle_and_never_decreases(spark):
    wm = spark.createDataFrame([
        ("split", "p0", False, 100, 10), ("split", "p1", False, 50, 10), ("stream", None, False, 50, 10),
        ("split", "p0", False, 300, 20),  # the stream does not change at 20 (p1 holds it)
        ("split", "p1", True, None, 30), ("stream", None, True, None, 30),  # all-idle: to the largest published, 300
        ("split", "p1", False, 60, 40), ("stream", None, False, 60, 40),  # back below: V stays 300
    ], "scope string, split string, idle boolean, watermark long, replay_time long")
    assert sorted(tuple(r) for r in stream_values_of(lag_points(wm, 0)).collect()) == [(10, 50), (30, 300), (40, 300)]


def _segments(spark, newest, values, end):
    """The lag of a newest event time N and a stream value V given as changes: a split publishing N (lag 0) and
    the stream changing to V, each at its own replay time."""
    wm = spark.createDataFrame([("split", "p0", False, n, t) for t, n in newest]
                               + [("stream", None, False, v, t) for t, v in values],
                               "scope string, split string, idle boolean, watermark long, replay_time long")
    return watermark_lag_segments(wm, 0, end)


def lag_figures(segments):
    """(mean, p99) of the lag, as a variant's row reads them from lag_summary's one row."""
    row = lag_summary(segments).first()
    return lag_figures_of(row.asDict() if row is not None else None)


@pytest.mark.spark
def test_lag_where_both_are_defined_and_v_finite(spark):
    seg = _segments(spark, [(0, 100), (10, 150), (25, 170)], [(5, 90), (20, POS_INF)], end=30)
    assert sorted(tuple(r) for r in seg.collect()) == [(5, 5, 10), (10, 10, 60)]  # none before 5, none at +inf
    mean, p99 = lag_figures(seg)
    assert mean == pytest.approx((5 * 10 + 10 * 60) / 15) and p99 == 60
    neg = _segments(spark, [(0, 100)], [(0, NEG_INF), (10, 40)], end=20)
    assert [tuple(r) for r in neg.collect()] == [(10, 10, 60)]  # the last point holds until `end`


@pytest.mark.spark
def test_p99_is_the_smallest_lag_covering_99_percent_of_the_time(spark):
    seg = spark.createDataFrame([(0, 99, 10), (99, 1, 5000)], "t long, dur long, lag long")
    assert lag_figures(seg) == (pytest.approx((99 * 10 + 5000) / 100), 10)
    seg = spark.createDataFrame([(0, 98, 10), (98, 2, 5000)], "t long, dur long, lag long")
    assert lag_figures(seg)[1] == 5000
    assert lag_figures(spark.createDataFrame([], "t long, dur long, lag long")) == (None, None)


@pytest.mark.spark
def test_newest_event_time_as_published_and_first_fire_delays(spark):
    wm = spark.createDataFrame([
        ("split", "p0", False, 3, 5), ("split", "p1", False, 1, 5), ("stream", None, False, 1, 5),
        ("split", "p1", False, 2, 8),  # below p0's 3: the newest stays 3 + lag
        ("split", "p1", True, None, 9), ("split", "p0", False, POS_INF, 10),  # idle and +inf publish no newest
        ("split", "p1", False, 9, 12)], "scope string, split string, idle boolean, watermark long, replay_time long")
    assert sorted(tuple(r) for r in lag_points(wm, 501).where("published").select("t", "newest").collect()) == [
        (5, 504), (8, 504), (12, 510)]
    values = spark.createDataFrame([(7, 90), (15, 100), (18, 100)], "t long, v long")
    firings = spark.createDataFrame([
        ("a", 80, 90, 0, "watermark", 90), ("a", 80, 90, 1, "late_row", 100),
        ("b", 90, 100, 0, "watermark", 100),  # V reached 100 first at 15
        ("c", 90, 100, 0, "late_row", 100),  # opened after the watermark had passed its end: no delay of its own
        ("d", 100, 110, 0, "end_of_input", None),
    ], "key string, window_start long, window_end long, fire_index long, fire_reason string, fire_watermark long")
    got = {r.key: r.delay for r in first_fire_delays(firings, values, end_ms=130).collect()}
    assert got == {"a": 7 - 90, "b": 15 - 100, "d": 130 - 110}
