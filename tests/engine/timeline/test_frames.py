"""engine/timeline/frames.py: the two-level running max equals a plain running max whatever the buckets; the
bucket width and the constant stream values."""
from __future__ import annotations

import random

import pytest
from pyspark.sql import functions as F

from event_replay.engine.contract import NEG_INF
from event_replay.engine.timeline.frames import N_BUCKETS, bucket_width, scan_max, stream_values_const

pytestmark = pytest.mark.spark


def test_scan_max_equals_a_running_max(spark):
    rnd = random.Random(7)
    rows = [(i, i // 9, rnd.randint(-50, 50)) for i in range(200)]  # 23 buckets, non-decreasing along `i`
    df = spark.createDataFrame(rows, "i long, b long, v long").repartition(5)
    got = {r["i"]: r["run"] for r in scan_max(df, "b", [F.col("i")], "v", "run").collect()}
    want, best = {}, None
    for i, _, v in rows:
        best = v if best is None else max(best, v)
        want[i] = best
    assert got == want


def test_bucket_width_cuts_a_range_into_at_most_n_buckets():
    assert bucket_width(None, 5) == 1 and bucket_width(3, None) == 1
    assert bucket_width(0, 0) == 1
    lo, hi = 1000, 1000 + 10 * N_BUCKETS + 7
    width = bucket_width(lo, hi)
    assert (hi - lo) // width < N_BUCKETS


def test_stream_values_const_only_when_above_the_carried_value(spark):
    assert [r[0] for r in stream_values_const(spark, 5).collect()] == [5]
    assert stream_values_const(spark, 5, prev0=5).collect() == []
    assert stream_values_const(spark, NEG_INF).collect() == []
