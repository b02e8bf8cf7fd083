"""Small DataFrame helpers the Spark timeline paths share: literals, checkpoints, the output frames and the
two-level running max (`scan_max`), which never puts all rows into one partition."""
from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ...spark import local_frame
from ..contract import NEG_INF, STREAM_VALUES_SCHEMA

N_BUCKETS = 64  # buckets of a two-level scan: enough parallelism, a tiny prefix table


def lit(v: int) -> Column:
    return F.lit(v).cast("long")


def scan_max(df: DataFrame, bucket: str, order: list[Column], val: str, out: str) -> DataFrame:
    """`out` = max of `val` over every row at or before this one in the order (bucket, *order).

    `bucket` must be non-decreasing along the order. Within a bucket a partitioned window; across buckets
    the maxima of the earlier buckets (one row per bucket), so no single-partition window over all rows."""
    w = Window.partitionBy(bucket).orderBy(*order).rowsBetween(Window.unboundedPreceding, Window.currentRow)
    local = df.withColumn("_scan_local", F.max(val).over(w))
    carry = (df.groupBy(bucket).agg(F.max(val).alias("_scan_bmax"))
             .withColumn("_scan_carry", F.max("_scan_bmax").over(
                 Window.orderBy(bucket).rowsBetween(Window.unboundedPreceding, -1)))
             .select(bucket, "_scan_carry"))
    return (local.join(F.broadcast(carry), bucket, "left")
            .withColumn(out, F.greatest("_scan_local", "_scan_carry"))
            .drop("_scan_local", "_scan_carry"))


def checkpoint(df: DataFrame) -> DataFrame:
    """A small intermediate frame read by several later queries: computed once, with a plan that starts here.
    (A persist() would keep its whole lineage, which every later plan inlines and re-optimises: the watermarks
    plan grew to ~700 exchanges that way.)"""
    return df.localCheckpoint(eager=True)


def bucket_width(lo: int | None, hi: int | None) -> int:
    if lo is None or hi is None:
        return 1
    return max(1, (hi - lo) // N_BUCKETS + 1)


def empty(df: DataFrame, schema: T.StructType) -> DataFrame:
    return local_frame(df.sparkSession, [], schema)


def watermarks_frame(df: DataFrame) -> DataFrame:
    return df.select(F.col("replay_time").cast("long"), F.col("scope").cast("string"),
                     F.col("split").cast("string"), F.col("watermark").cast("long"),
                     F.col("idle").cast("boolean"))


def stream_values_const(spark, initial: int, prev0: int = NEG_INF) -> DataFrame:
    """The stream's values when it only ever holds `initial`: that value, if it is above the carried one."""
    return local_frame(spark, [(initial,)] if initial > prev0 else [], STREAM_VALUES_SCHEMA)


def with_rows_watermark(rows: DataFrame, cols: list[str], value: int) -> DataFrame:
    """Every row with one `wm_before` (the stream never moves in the range)."""
    return rows.select(*cols, lit(value).alias("wm_before"))
