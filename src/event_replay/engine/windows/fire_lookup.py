"""When each window's event-time timer fires: the smallest stream value >= its max timestamp `end - 1`.

Tumbling and sliding windows: one search per distinct window end, on the driver.

A window's event-time timer is at its max timestamp `end - 1`; it fires when the stream watermark first reaches
it, i.e. at the smallest value the stream moved to that is >= end - 1 (none: the window waits for the end of
input). Window ends are the same for every key, and the stream's values are known on the driver when the
timeline was computed there (timeline/driver.py), so the lookup is a table window end -> firing watermark, built
with numpy over every window end the rows' event times can reach, and joined to the firings by broadcast (the
firings keep their partitioning). Above `FIRE_TABLE_MAX` window ends, for sessions, and when the timeline was
computed in Spark, the lookup is an as-of join in Spark (`with_fire_watermarks`, `_next_values`).
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from ...semantics.config import JobConfig, WindowConfig
from ...semantics.model import FIRE_END_OF_INPUT, FIRE_WATERMARK
from ...semantics.windows import window_start  # Flink's TimeWindow.getWindowStartWithOffset
from ..elements import PENDING, WE
from .fixed import slide_of
from .value_buckets import ValueBuckets, value_buckets

FIRE_TABLE_MAX = 2_000_000
_BUCKET_BITS = 20  # the as-of lookup's time buckets are 2^20 ms (~17 min) wide


def window_ends(window: WindowConfig, lo: int, hi: int) -> np.ndarray | None:
    """Every end of a window holding an event time in [lo, hi] (None above FIRE_TABLE_MAX)."""
    slide = slide_of(window)
    first = window_start(lo, slide, window.offset_ms) - (-(-window.size_ms // slide) - 1) * slide
    last = window_start(hi, slide, window.offset_ms)
    if (last - first) // slide + 1 > FIRE_TABLE_MAX:
        return None
    return np.arange(first, last + 1, slide, dtype=np.int64) + window.size_ms


def fire_table(spark: SparkSession, ends: np.ndarray, stream_values: np.ndarray) -> DataFrame:
    """(__q = end - 1, __v = the smallest stream value >= __q, null if none) for every end."""
    q = ends - 1
    at = np.searchsorted(stream_values, q, side="left")
    found = at < len(stream_values)
    v = np.where(found, stream_values[np.minimum(at, max(len(stream_values) - 1, 0))] if len(stream_values) else 0, 0)
    return spark.createDataFrame(pa.table({"__q": pa.array(q, pa.int64()),
                                           "__v": pa.array(v, pa.int64(), mask=~found)}))


def lookup_for(spark: SparkSession, timeline, window: WindowConfig,
               also: tuple[int | None, int | None] | None = None) -> DataFrame | ValueBuckets | None:
    """The driver's lookup for a driver-computed timeline (contract.Timeline): for tumbling or sliding windows the
    fire table over its rows' event times and `also` (the carried rows' range), for sessions the stream's value
    buckets (value_buckets.py); None when the Spark lookup must be used."""
    if timeline.known_stream_values is None:
        return None
    if window.type == "session":
        return value_buckets(spark, timeline.known_stream_values)
    bounds = [b for b in (timeline.event_time_range, also) if b is not None and b[0] is not None]
    if not bounds:
        return None
    ends = window_ends(window, min(b[0] for b in bounds), max(b[1] for b in bounds))
    return None if ends is None else fire_table(spark, ends, timeline.known_stream_values)


# -- the Spark lookup ------------------------------------------------------------------------------------------

LOOKUP_BROADCAST_MAX = 500_000  # (max timestamp -> stream value) pairs: broadcast up to this many


def with_fire_watermarks(firings: DataFrame, stream_values: DataFrame, cfg: JobConfig,
                          queries: DataFrame | None = None, known: bool = False,
                          buckets: ValueBuckets | None = None) -> DataFrame:
    """A timer firing happens when the stream first reaches the window's max timestamp: at the smallest stream
    value >= end - 1. None: `end_of_input` with flush; with hold the window stays open and does not fire.
    `queries` (column __q): a superset of the timer firings' max timestamps, if the caller has a cheaper source
    of them than the firings themselves; `known`: `queries` already holds the answers (__q, __v); `buckets`: the
    stream's values from the driver (value_buckets.py), looked up without a join of the firings."""
    pending = F.col("fire_reason") == PENDING
    with_q = firings.withColumn("__q", F.when(pending, F.col(WE) - F.lit(1)))
    looked_up = buckets.looked_up(with_q) if buckets is not None else _joined(with_q, stream_values, queries, known)
    flushed = F.lit(FIRE_END_OF_INPUT) if cfg.replay.end_of_input == "flush" else F.lit(None).cast("string")
    out = (looked_up
           .withColumn("fire_watermark", F.when(pending, F.col("__v")).otherwise(F.col("fire_watermark")))
           .withColumn("fire_reason", F.when(~pending, F.col("fire_reason"))
                       .when(F.col("__v").isNotNull(), F.lit(FIRE_WATERMARK)).otherwise(flushed))
           .drop("__q", "__v"))
    return out.where(F.col("fire_reason").isNotNull())  # hold: windows still waiting do not fire


def _joined(with_q: DataFrame, stream_values: DataFrame, queries: DataFrame | None, known: bool) -> DataFrame:
    """`with_q` with `__v` from a join on `__q` (see with_fire_watermarks)."""
    given = queries is not None
    if not given:
        queries = with_q.where(F.col("__q").isNotNull()).select("__q").distinct()
    found = queries if known else _next_values(queries, stream_values)
    if known:
        found = F.broadcast(found)
    elif given:
        # One row per window end: small next to the firings, so the firings keep their partitioning (a broadcast
        # hash join instead of shuffling every firing by __q).
        found = found.localCheckpoint(eager=True)
        if found.count() <= LOOKUP_BROADCAST_MAX:
            found = F.broadcast(found)
    return with_q.join(found, "__q", "left")  # a null __q (not a timer firing) matches nothing


def _next_values(queries: DataFrame, stream_values: DataFrame) -> DataFrame:
    """For each distinct `__q`: `__v` = the smallest stream value >= __q, or null. An as-of lookup in
    O(n log n), parallel over time buckets and with no job of its own: inside a bucket a window function finds
    the next value; a query with none there takes the smallest value of the later buckets, from a running
    minimum over the (few) buckets. Any monotone bucketing is exact; a fixed width keeps it deterministic."""
    values = stream_values.select(F.col("watermark").cast("long").alias("__t")).where(F.col("__t").isNotNull())
    both = (queries.select(F.col("__q").alias("__t"), F.lit(0).alias("__is_value"))
            .unionByName(values.select("__t", F.lit(1).alias("__is_value")))
            .withColumn("__b", F.shiftright(F.col("__t"), _BUCKET_BITS)))
    value = F.when(F.col("__is_value") == 1, F.col("__t"))
    # The minimum over what follows, as a running minimum in descending order: a frame that grows from the start
    # is computed incrementally, one that runs to the end of the partition is recomputed for every row
    # (quadratic). Ties: a value sorts before an equal query, so it is in the query's frame (>=, not >).
    following = (Window.partitionBy("__b").orderBy(F.col("__t").desc(), F.col("__is_value").desc())
                 .rowsBetween(Window.unboundedPreceding, Window.currentRow))
    in_bucket = both.withColumn("__v", F.min(value).over(following))
    later = Window.orderBy(F.col("__b").desc()).rowsBetween(Window.unboundedPreceding, -1)  # one row per bucket
    bucket_next = (both.groupBy("__b").agg(F.min(value).alias("__m"))
                   .select("__b", F.min("__m").over(later).alias("__later")))
    return (in_bucket.where(F.col("__is_value") == 0)
            .join(bucket_next, "__b", "left")
            .select(F.col("__t").alias("__q"), F.coalesce(F.col("__v"), F.col("__later")).alias("__v")))


