"""When each window's event-time timer fires: the smallest stream value >= its max timestamp `end - 1`.

A window's event-time timer is at its max timestamp `end - 1`; it fires when the stream watermark first reaches
it, i.e. at the smallest value the stream moved to that is >= end - 1 (none: the window waits for the end of
input). When the timeline was computed on the driver (timeline/driver.py), the stream's values are known there,
sorted, and the lookup is one of the driver (`lookup_for`):

- `ValueLookup` (any window type): each firing binary-searches the values in the engine's extension
  (engine/lookups.py: a broadcast variable, no join and no Spark job). -inf is never a value >= a timer; +inf
  (every split idle) answers every timer above the last finite value.
- `FireTable` (tumbling and sliding windows without the extension's jar, which they do not otherwise need): window
  ends are the same for every key, so a table window end -> firing watermark, built with numpy over every window
  end the rows' event times can reach, is joined to the firings by broadcast (the firings keep their
  partitioning). Above `FIRE_TABLE_MAX` window ends, the Spark lookup is used instead.

Session windows need the extension anyway (their walk, sessions.py). When the timeline was computed in Spark, the
lookup is an as-of join in Spark (`with_fire_watermarks`, `_next_values`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from ...io.scratch import driver_frame
from ...semantics.config import JobConfig
from ...semantics.window_config import WindowConfig
from ...semantics.model import FIRE_END_OF_INPUT, FIRE_WATERMARK
from ...semantics.windows import window_start  # Flink's TimeWindow.getWindowStartWithOffset
from ..contract import NEG_INF
from ..elements import PENDING, WE
from ..lookups import available, ceiling_value
from .fixed_assign import slide_of

FIRE_TABLE_MAX = 2_000_000
_BUCKET_BITS = 20  # the as-of lookup's time buckets are 2^20 ms (~17 min) wide


def window_ends(window: WindowConfig, lo: int, hi: int) -> np.ndarray | None:
    """Every end of a window holding an event time in [lo, hi] (None above FIRE_TABLE_MAX)."""
    slide = slide_of(window)
    if window.type == "cumulate":  # every step ends a window: from lo's first end to hi's max-size window's end
        first = window_start(lo, slide, window.offset_ms) + slide - window.size_ms
        last = window_start(hi, window.size_ms, window.offset_ms)
    else:
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
    return driver_frame(spark, pa.table({"__q": pa.array(q, pa.int64()),
                                         "__v": pa.array(v, pa.int64(), mask=~found)}))


@dataclass(frozen=True)
class ValueLookup:
    """The stream's values (ascending, as the driver's timeline has them), searched per firing by the extension."""
    stream_values: np.ndarray

    def looked_up(self, with_q: DataFrame) -> DataFrame:
        """`with_q` with `__v`: the smallest value >= `__q` (null where `__q` is null or no value is >= it)."""
        values = np.asarray(self.stream_values, dtype=np.int64)
        values = values[np.searchsorted(values, NEG_INF, side="right"):]  # -inf is never >= a timer
        return with_q.withColumn("__v", ceiling_value(with_q.sparkSession, values, F.col("__q"),
                                                      required_for="the timer firings' lookups"))


@dataclass(frozen=True)
class FireTable:
    """(__q, __v) for every window's max timestamp (fire_table), joined to the firings by broadcast."""
    table: DataFrame

    def looked_up(self, with_q: DataFrame) -> DataFrame:
        """`with_q` with `__v` (a null __q matches nothing)."""
        return with_q.join(F.broadcast(self.table), "__q", "left")


def lookup_for(spark: SparkSession, timeline, window: WindowConfig,
               carried: DataFrame | None = None) -> ValueLookup | FireTable | None:
    """The driver's lookup for a driver-computed timeline (contract.Timeline): the stream's values searched by the
    extension; without its jar, for tumbling or sliding windows, the fire table over the event times of the
    timeline's rows and the `carried` rows (their range costs a Spark job, so only this fallback asks for it). None
    when the Spark lookup must be used."""
    if timeline.known_stream_values is None:
        return None
    if window.type == "session" or available(spark):
        return ValueLookup(timeline.known_stream_values)
    also = None if carried is None else tuple(carried.agg(F.min("event_time"), F.max("event_time")).collect()[0])
    bounds = [b for b in (timeline.event_time_range, also) if b is not None and b[0] is not None]
    if not bounds:
        return None
    ends = window_ends(window, min(b[0] for b in bounds), max(b[1] for b in bounds))
    return None if ends is None else FireTable(fire_table(spark, ends, timeline.known_stream_values))


# -- the Spark lookup ------------------------------------------------------------------------------------------

LOOKUP_BROADCAST_MAX = 500_000  # (max timestamp -> stream value) pairs: broadcast up to this many


def with_fire_watermarks(firings: DataFrame, stream_values: DataFrame, cfg: JobConfig,
                          queries: DataFrame | None = None,
                          lookup: ValueLookup | FireTable | None = None) -> DataFrame:
    """A timer firing happens when the stream first reaches the window's max timestamp: at the smallest stream
    value >= end - 1. None: `end_of_input` with flush; with hold the window stays open and does not fire.
    `lookup`: the driver's (lookup_for); None: the Spark lookup, where `queries` (column __q) is a superset of the
    timer firings' max timestamps, if the caller has a cheaper source of them than the firings themselves."""
    pending = F.col("fire_reason") == PENDING
    with_q = firings.withColumn("__q", F.when(pending, F.col(WE) - F.lit(1)))
    looked_up = lookup.looked_up(with_q) if lookup is not None else _joined(with_q, stream_values, queries)
    flushed = F.lit(FIRE_END_OF_INPUT) if cfg.replay.end_of_input == "flush" else F.lit(None).cast("string")
    out = (looked_up
           .withColumn("fire_watermark", F.when(pending, F.col("__v")).otherwise(F.col("fire_watermark")))
           .withColumn("fire_reason", F.when(~pending, F.col("fire_reason"))
                       .when(F.col("__v").isNotNull(), F.lit(FIRE_WATERMARK)).otherwise(flushed))
           .drop("__q", "__v"))
    return out.where(F.col("fire_reason").isNotNull())  # hold: windows still waiting do not fire


def _joined(with_q: DataFrame, stream_values: DataFrame, queries: DataFrame | None) -> DataFrame:
    """`with_q` with `__v` from the Spark as-of lookup of `queries` (default: the firings' own), joined on `__q`."""
    given = queries is not None
    if not given:
        queries = with_q.where(F.col("__q").isNotNull()).select("__q").distinct()
    found = _next_values(queries, stream_values)
    if given:
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


