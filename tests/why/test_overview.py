"""Per-partition figures: intervals cut at partition boundaries in 64-bit ms, shares and the lag per partition."""
from __future__ import annotations

import pytest

from event_replay.spark_jobs import gather
from event_replay.why.overview import DAY_MS, HOUR_MS, cut_by_partition, partition_figure_frame, partition_figures, \
    partition_label, \
    with_figures

pytestmark = pytest.mark.spark

YEAR_MS = 365 * DAY_MS


def test_an_interval_is_cut_at_every_partition_it_overlaps_far_beyond_32_bits(spark):
    t = 2 * YEAR_MS + 3 * DAY_MS  # 2^31 ms is under 25 days: indices and products must be 64-bit
    df = spark.createDataFrame([("x", t + 1000, t + 2 * DAY_MS + 500), ("y", t + 5, t + 5)], "k string, a long, z long")
    cut = sorted((r.k, r.p, r.ms) for r in cut_by_partition(df, DAY_MS).collect())
    day = t // DAY_MS
    assert cut == [("x", day, DAY_MS - 1000), ("x", day + 1, DAY_MS), ("x", day + 2, 500)]  # empty ones dropped
    assert partition_label(day, DAY_MS) == "1972-01-04" and partition_label(day * 24 + 5, HOUR_MS) == "1972-01-04T05"


def test_shares_holder_and_lag_per_partition(spark):
    d0 = 100 * DAY_MS
    intervals = spark.createDataFrame([
        ("idle", "p0", d0, d0 + DAY_MS // 2),  # p0 idle half the first day
        ("idle", "p1", d0 + DAY_MS // 2, d0 + DAY_MS + DAY_MS // 2),  # p1 the second half and half the next
        ("idle", "stream", d0, d0 + 10),  # the stream's lane is not a split's idleness
        ("held", "p0", d0, d0 + DAY_MS // 4), ("held", "p1", d0 + DAY_MS // 4, d0 + DAY_MS // 2),
        ("held", "p1", d0 + DAY_MS, d0 + DAY_MS + 10)], "kind string, series string, a long, z long")
    segments = spark.createDataFrame([(d0, 1000, 10), (d0 + 1000, 3000, 50), (d0 + DAY_MS, 10, 7)],
                                     "t long, dur long, lag long")
    found = partition_figures(gather({"p": partition_figure_frame(intervals, segments, 2, DAY_MS)})["p"], DAY_MS)
    first, second = found["1970-04-11"], found["1970-04-12"]
    assert first["idle_share"] == pytest.approx(0.5) and second["idle_share"] == pytest.approx(0.25)
    assert (first["held_most"], first["held_most_share"]) == ("p0", pytest.approx(0.25))  # a tie: by name
    assert second["held_most"] == "p1"
    assert (first["lag_p50_ms"], first["lag_max_ms"]) == (50.0, 50) and first["lag_p90_ms"] == 50.0
    assert second["lag_max_ms"] == 7
    rows = with_figures([{"partition": "1970-04-11", "rows_read": 3}, {"partition": None, "rows_read": 1}], found)
    assert rows[0]["held_most"] == "p0" and rows[0]["rows_read"] == 3 and rows[1]["idle_share"] is None
