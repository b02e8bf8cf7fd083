"""The fixed windows' walk (engine/windows/fixed_walk.py, FixedWalk.java) against Spark's own window functions
(fixed.py's numbered path): the same firings, bit for bit, on values chosen to tell orders apart (NaN, -0.0 and 0.0,
infinities, nulls, sums that round differently in another order), for tumbling and sliding windows with
late-accepted elements; and which aggregates the walk takes."""
from __future__ import annotations

import math
import random
import struct

import pytest
from pyspark.sql import functions as F
from pyspark.sql import types as T

from event_replay.engine.windows import compute_windows
from event_replay.engine.windows import fixed as fixed_windows
from event_replay.engine.windows.fixed_walk import walk_aggregates
from strategies import config

SCHEMA = T.StructType([
    T.StructField("split", T.StringType()), T.StructField("offset", T.LongType()),
    T.StructField("arrival_time", T.LongType()), T.StructField("event_time", T.LongType()),
    T.StructField("key", T.StringType()), T.StructField("value", T.DoubleType()),
    T.StructField("n", T.IntegerType()), T.StructField("big", T.LongType()), T.StructField("wm_before", T.LongType()),
])
VALUES = [1.5, -0.0, 0.0, math.nan, None, 2.25, -3.0, math.inf, -math.inf, 0.1, 0.2, 0.3, 1e16, 1.0]
AGGS = {"cnt": "count(*)", "nv": "count(value)", "total": "sum(value)", "low": "min(value)", "top": "max(value)",
        "ints": "sum(n)", "n_low": "min(n)", "n_top": "MAX(n)", "longs": "sum(big)", "big_low": "min( big )"}


def _log(seed: int, rows: int = 600) -> list[tuple]:
    """Rows in replay order with a stream watermark that only rises: bursts of lateness, so windows get early,
    late-accepted and dropped rows; few keys, so windows hold several rows."""
    rnd = random.Random(seed)
    out, wm = [], -(2 ** 62)
    for i in range(rows):
        t = rnd.randint(0, 80_000)
        if rnd.random() < 0.3:
            wm = max(wm, t - rnd.randint(-2000, 9000))
        out.append((f"p{i % 3}", i // 3, 1000 + 40 * i, t, f"k{rnd.randint(0, 3)}", rnd.choice(VALUES),
                    None if rnd.random() < 0.1 else rnd.randint(-9, 9),
                    None if rnd.random() < 0.1 else rnd.randint(-10 ** 12, 10 ** 12), wm))
    return out


def _exact(v):
    """A value compared bit for bit: a double by its IEEE bits (-0.0 and 0.0 apart), but any NaN as NaN. The sign
    of the NaN that inf + -inf gives depends on the JIT's operand order, in Spark's window functions and the walk
    alike (io/output.py writes the one NaN)."""
    if isinstance(v, float):
        return ("f", "NaN") if math.isnan(v) else ("f", struct.pack(">d", v))
    return v


def _firings(spark, rows, cfg, partitions):
    df = spark.createDataFrame(rows, SCHEMA)
    values = spark.createDataFrame([(v,) for v in range(0, 100_000, 700)], "watermark long")
    firings, late = compute_windows(df, values, cfg, partitions=partitions)
    exact = lambda rows: sorted((tuple(_exact(v) for v in r) for r in rows), key=repr)  # noqa: E731
    return exact(firings.collect()), exact(late.collect()), firings.schema


@pytest.mark.parametrize("window", [{"size": "10s", "allowed_lateness": "4s"},
                                    {"type": "sliding", "size": "10s", "slide": "4s", "allowed_lateness": "3s"}])
@pytest.mark.parametrize("partitions", [None, 3])
def test_walk_equals_sparks_window_functions(spark, monkeypatch, window, partitions):
    cfg = config(watermark={"max_out_of_orderness": "5s", "emit": "per_event"}, window=window, aggregations=AGGS)
    rows = _log(seed=7 if partitions else 8)
    walked = _firings(spark, rows, cfg, partitions)
    with monkeypatch.context() as m:
        m.setattr(fixed_windows, "walked_firings", lambda *a: None)
        numbered = _firings(spark, rows, cfg, partitions)
    assert walked[0] == numbered[0]
    assert walked[1] == numbered[1] and walked[2] == numbered[2]
    reasons = {r[5] for r in walked[0]}
    assert {"late_row", "watermark"} <= reasons, reasons  # both kinds of firing were compared
    assert any(r[5] == "late_row" and r[3] >= 2 for r in walked[0])  # windows that fired late more than once


def test_the_walk_is_what_runs(spark):
    """With the extension, a floating-point sum goes through the walk (no Spark Window operator in the plan)."""
    cfg = config(watermark={"max_out_of_orderness": "5s", "emit": "per_event"}, window={"size": "10s"},
                 aggregations={"total": "sum(value)"})
    firings, _ = compute_windows(spark.createDataFrame(_log(1, 50), SCHEMA),
                                 spark.createDataFrame([], "watermark long"), cfg, partitions=2)
    plan = firings._jdf.queryExecution().executedPlan().toString()
    assert "Window [" not in plan and "Scan ExistingRDD" in plan, plan


def test_a_long_sum_that_overflows_fails_as_spark_does(spark):
    cfg = config(watermark={"max_out_of_orderness": "5s", "emit": "per_event"}, window={"size": "10s"},
                 aggregations={"total": "sum(big)", "v": "sum(value)"})
    rows = [("p0", i, 1000 + i, 500, "k", 1.0, 1, 2 ** 62, -(2 ** 62)) for i in range(3)]
    firings, _ = compute_windows(spark.createDataFrame(rows, SCHEMA), spark.createDataFrame([], "watermark long"),
                                 cfg)
    with pytest.raises(Exception, match="(?i)overflow"):
        firings.collect()


def test_which_aggregates_the_walk_takes(spark):
    frame = spark.createDataFrame([], SCHEMA).withColumn("d", F.lit(None).cast("decimal(10,2)"))
    assert walk_aggregates(frame, {"a": "count(*)", "b": "Sum( Value )", "c": "count(d)", "e": "max(big)"}) == [
        ("a", "count", "*"), ("b", "sum", "value"), ("c", "count", "d"), ("e", "max", "big")]
    for refused in ("sum(d)", "avg(value)", "sum(value) / count(*)", "count(DISTINCT value)", "min(*)",
                    "sum(value) FILTER (WHERE n > 0)", "max(key)", "sum(nope)"):
        assert walk_aggregates(frame, {"x": refused}) is None, refused
