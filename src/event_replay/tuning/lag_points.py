"""The two step functions behind the watermark lag, N (the newest event time as published) and V (the stream
watermark, kept while idle), in one bucketed pass over a watermarks output (figures.py's module doc defines both).

N and V are running maxima over replay time, and V's value on going all-idle is itself a running max (of the split
values), so a chain of running.py's aggregates computes them, each nesting the one before: the plan doubled at
every level and its planning, not the rows, was most of a report's time. Here every running max is taken in the
same pass, as running.py takes one: inside buckets of one minute of replay clock (`BUCKET`), with what comes before
a bucket from one summary row per bucket; the rows are shuffled once and the summaries meet once. Lazy, no job.

`lag_points(watermarks, lag_ms)` has one row per replay time t with a split's finite published watermark
(`published`) or a stream change (`stream_change`): `newest` = N(t), `v` = V(t) (both null until defined) and
`next_t`, the next such time (null for the last). Columns of `watermarks`: scope, split, idle, watermark,
replay_time (longs). `by` (columns of `watermarks`, e.g. a what-if grid's `variant`): one pair of step functions
per group, side by side in the same pass (each group's points, buckets and edges its own); `lag_ms` may then be a
column, the lag of each row's group.
"""
from __future__ import annotations

from typing import Sequence

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from ..semantics.durations import NEG_INF, POS_INF
from .running import BUCKET

_B = "_lag_bucket"


def _changes(watermarks: DataFrame, lag_ms: int | Column, by: Sequence[str]) -> DataFrame:
    """One row per replay time with any change: what the splits published and what the stream did there."""
    w, idle = F.col("watermark"), F.col("idle")
    split, stream = F.col("scope") == "split", F.col("scope") == "stream"
    finite = w.isNotNull() & (w != F.lit(POS_INF)) & (w != F.lit(NEG_INF))
    lag = lag_ms if isinstance(lag_ms, Column) else F.lit(lag_ms)
    at_t = watermarks.groupBy(*by, F.col("replay_time").alias("t")).agg(
        F.max(F.when(split & ~idle & finite, w + lag)).alias("_published"),  # the lag is one value per group
        F.max(F.when(split & ~idle, w)).alias("_split_max"),  # infinite values too: V's all-idle jump takes them
        F.max(F.when(stream, w)).alias("_stream_wm"),
        F.max(F.when(stream, idle.cast("int"))).alias("_stream_idle"))  # null: no stream change at t
    seen = F.col("_published").isNotNull() | F.col("_split_max").isNotNull() | F.col("_stream_idle").isNotNull()
    return at_t.where(seen).withColumn(_B, F.floor(F.col("t") / F.lit(BUCKET)))


def _edges(in_bucket: DataFrame, by: Sequence[str]) -> DataFrame:
    """Per bucket: N, the split maximum and V over the buckets before it, and the first point of the buckets
    after it. V of a bucket needs the split maximum before it (an idle stream change takes the running split max),
    hence two windows over the summaries, which are one row per bucket."""
    idle_change = F.col("_stream_idle") == 1
    summary = in_bucket.groupBy(*by, _B).agg(
        F.max("_published").alias("_n_b"), F.max("_split_max").alias("_sm_b"),
        F.max(F.when(F.col("_stream_idle") == 0, F.col("_stream_wm"))).alias("_w_b"),
        F.max(F.when(idle_change, F.lit(1))).alias("_idle_b"),
        F.max(F.when(idle_change, F.col("_sm_in"))).alias("_sm_idle_b"),
        F.min(F.when(F.col("_published").isNotNull() | F.col("_stream_idle").isNotNull(), F.col("t")))
        .alias("_first_b"))
    before = Window.partitionBy(*by).orderBy(_B).rowsBetween(Window.unboundedPreceding, -1)
    after = Window.partitionBy(*by).orderBy(_B).rowsBetween(1, Window.unboundedFollowing)
    s = summary.select(*by, _B, "_w_b", "_idle_b", "_sm_idle_b",
                       F.max("_n_b").over(before).alias("_n_edge"), F.max("_sm_b").over(before).alias("_sm_edge"),
                       F.first("_first_b", ignorenulls=True).over(after).alias("_next_edge"))
    v_b = F.greatest(F.col("_w_b"), F.when(F.col("_idle_b") == 1, F.greatest("_sm_idle_b", "_sm_edge")))
    return s.select(*by, _B, "_n_edge", "_sm_edge", "_next_edge", F.max(v_b).over(before).alias("_v_edge"))


def lag_points(watermarks: DataFrame, lag_ms: int | Column, by: Sequence[str] = ()) -> DataFrame:
    """(by..., t, newest, v, published, stream_change, next_t): module doc."""
    upto = Window.partitionBy(*by, _B).orderBy("t").rowsBetween(Window.unboundedPreceding, Window.currentRow)
    in_bucket = _changes(watermarks, lag_ms, by).select(
        "*", F.max("_published").over(upto).alias("_n_in"), F.max("_split_max").over(upto).alias("_sm_in"))
    j = in_bucket.join(_edges(in_bucket, by), [*by, _B], "left")
    run_sm = F.greatest("_sm_in", "_sm_edge")  # greatest skips nulls: null only while nothing was published
    stream_value = (F.when(F.col("_stream_idle") == 1, run_sm)
                    .when(F.col("_stream_idle") == 0, F.col("_stream_wm")))
    j = j.withColumn("_e_s", stream_value)
    points = j.select(
        *by, "t", _B, "_next_edge",
        F.greatest("_n_in", "_n_edge").alias("newest"),
        F.greatest(F.max("_e_s").over(upto), F.col("_v_edge")).alias("v"),
        F.col("_published").isNotNull().alias("published"), F.col("_stream_idle").isNotNull().alias("stream_change"))
    points = points.where(F.col("published") | F.col("stream_change"))
    following = F.lead("t").over(Window.partitionBy(*by, _B).orderBy("t"))
    return points.select(*by, "t", "newest", "v", "published", "stream_change",
                         F.coalesce(following, F.col("_next_edge")).alias("next_t"))
