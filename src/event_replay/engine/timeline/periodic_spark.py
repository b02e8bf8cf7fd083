"""Periodic emission as DataFrames, for tick tables too large for the driver (the same closed forms as
`split_changes.py` and `stream.py`; see `periodic_changes.py` for a split's changes).

The stream at every tick where some split changes: a grid of change ticks x splits, forward-filled per split,
then per tick the minimum over the active splits (all idle: the largest value, or +inf with a side input) and a
running max over the ticks. Each row then takes the stream as it stood after the tick before its own: an as-of
lookup on the small tick timeline, joined to the rows by broadcast when the range has few enough ticks.
"""
from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from ...semantics.config import JobConfig
from ...spark import local_frame
from ..contract import NEG_INF, POS_INF, Timeline
from .carry import StreamBefore, Ticks, TimelineCarry, TimelineEnd
from .frames import checkpoint, lit, watermarks_frame
from .periodic_changes import split_changes

TICKS_BROADCAST_MAX = 1_000_000  # the tick -> stream watermark lookup is broadcast up to this many ticks


def periodic_spark(rows: DataFrame, cols: list[str], cfg: JobConfig, main_splits: list[str], has_side: bool,
                   before: StreamBefore, ticks: Ticks, carry: TimelineCarry | None) -> tuple[Timeline, TimelineEnd]:
    pseudo = carry.splits if carry is not None else None
    all_changes, groups = split_changes(rows, cfg, main_splits, ticks, pseudo)
    all_changes = checkpoint(all_changes)
    in_range = all_changes.filter(F.col("tick").between(ticks.first, ticks.last))
    stream = checkpoint(_stream(rows.sparkSession, in_range, _seed(all_changes, in_range, ticks.first),
                                main_splits, has_side, before, ticks.first))
    watermarks = watermarks_frame(_split_out(in_range).unionByName(_stream_out(stream)))
    stream_values = (stream.filter(F.col("stream_watermark") > F.col("previous_watermark"))
                     .select(F.col("stream_watermark").alias("watermark")).distinct())
    out_rows = _rows_meet_timeline(rows, cols, stream, before.initial, ticks)
    last = stream.orderBy(F.col("tick").desc()).select("s_idle").limit(1)
    return (Timeline(rows=out_rows, watermarks=watermarks, stream_values=stream_values),
            TimelineEnd(splits=_end_splits(groups, ticks.last), origin_tick=ticks.origin, stream_last=last))


def _seed(all_changes: DataFrame, in_range: DataFrame, first_tick: int) -> DataFrame:
    """Each split's state just before the first tick (carried history): its last change before it, moved to the
    first tick unless the split changes there anyway. Without a carry there is none."""
    latest = Window.partitionBy("split").orderBy(F.col("tick").desc())
    return (all_changes.filter(F.col("tick") < first_tick)
            .withColumn("_r", F.row_number().over(latest)).filter(F.col("_r") == 1).drop("_r")
            .join(in_range.filter(F.col("tick") == first_tick).select("split"), "split", "left_anti")
            .withColumn("tick", lit(first_tick)))


def _stream(spark, in_range: DataFrame, seed: DataFrame, main_splits: list[str], has_side: bool,
            before: StreamBefore, first_tick: int) -> DataFrame:
    """tick, stream_watermark, s_idle, previous_watermark, previous_idle at every tick where some split changes.

    Size: (ticks where some split changes) x (splits), at most the range's ticks x splits. Fine for Kafka-sized
    split counts; for thousands of sparse splits a dyadic (segment-tree) min would be O(C log C)."""
    change_ticks = in_range.select("tick").union(local_frame(spark, [(first_tick,)], "tick long")).distinct()
    split_df = local_frame(spark, [(s,) for s in main_splits], "split string")
    so_far = Window.partitionBy("split").orderBy("tick").rowsBetween(Window.unboundedPreceding, Window.currentRow)
    grid = (change_ticks.crossJoin(F.broadcast(split_df))
            .join(in_range.unionByName(seed).select("split", "tick", "value", "idle"), ["split", "tick"], "left")
            .withColumn("value", F.coalesce(F.last("value", ignorenulls=True).over(so_far), lit(NEG_INF)))
            .withColumn("idle", F.coalesce(F.last("idle", ignorenulls=True).over(so_far), F.lit(False))))
    per_tick = grid.groupBy("tick").agg(
        F.sum(F.when(~F.col("idle"), 1).otherwise(0)).alias("n_active"),
        F.min(F.when(~F.col("idle"), F.col("value"))).alias("min_active"),
        F.max("value").alias("max_all"))  # the value of an idle split is its last published value
    # Flink: min over the active splits; all idle: the largest published value (stream idle); a side input is
    # never idle and counts +inf, so with one the stream is never idle.
    candidate = (F.when(F.col("n_active") > 0, F.col("min_active"))
                 .otherwise(lit(POS_INF) if has_side else F.col("max_all")))
    timeline = Window.orderBy("tick")  # a change tick per row at most: small next to the rows
    running = F.max("candidate").over(timeline.rowsBetween(Window.unboundedPreceding, 0))
    return (per_tick.withColumn("candidate", candidate)
            .withColumn("s_idle", (F.col("n_active") == 0) & F.lit(not has_side))
            .withColumn("stream_watermark", F.greatest(running, lit(before.initial)))
            .withColumn("previous_watermark",
                        F.coalesce(F.lag("stream_watermark").over(timeline), lit(before.value)))
            .withColumn("previous_idle", F.coalesce(F.lag("s_idle").over(timeline), F.lit(before.idle)))
            .select("tick", "stream_watermark", "s_idle", "previous_watermark", "previous_idle"))


def _published(idle: Column, value: Column) -> Column:
    return F.when(idle, lit(None)).otherwise(value)


def _stream_out(stream: DataFrame) -> DataFrame:
    moved = (F.col("stream_watermark") != F.col("previous_watermark")) | (F.col("s_idle") != F.col("previous_idle"))
    return stream.filter(moved).select(
        F.col("tick").alias("replay_time"), F.lit("stream").alias("scope"), F.lit(None).cast("string").alias("split"),
        _published(F.col("s_idle"), F.col("stream_watermark")).alias("watermark"), F.col("s_idle").alias("idle"))


def _split_out(in_range: DataFrame) -> DataFrame:
    return in_range.select(F.col("tick").alias("replay_time"), F.lit("split").alias("scope"), "split",
                           _published(F.col("idle"), F.col("value")).alias("watermark"), "idle")


def _rows_meet_timeline(rows: DataFrame, cols: list[str], stream: DataFrame, initial: int, ticks: Ticks) -> DataFrame:
    """Each row's `wm_before`: the stream after the last tick before the row's own (an as-of lookup on the small
    tick timeline, then an equi-join on that tick)."""
    spark = rows.sparkSession
    rows = rows.withColumn("_prev", F.col("_tick") - lit(ticks.interval))
    small = ticks.count <= TICKS_BROADCAST_MAX
    if small:
        # Every tick of the range is asked (no pass over the rows to find the ticks they need), and the answer
        # is broadcast: the rows meet it where they are, with no shuffle.
        asks = spark.range(ticks.first, ticks.last + 1, ticks.interval).select(F.col("id").alias("tick"))
    else:
        asks = rows.select(F.col("_prev").alias("tick")).filter(F.col("tick") >= ticks.first).distinct()
    asks = asks.withColumn("stream_watermark", lit(None)).withColumn("_kind", F.lit(1))
    known = stream.select("tick", "stream_watermark").withColumn("_kind", F.lit(0))
    as_of = Window.orderBy("tick", "_kind").rowsBetween(Window.unboundedPreceding, 0)
    lookup = (known.unionByName(asks)
              .withColumn("stream_watermark", F.last("stream_watermark", ignorenulls=True).over(as_of))
              .filter(F.col("_kind") == 1)
              .select(F.col("tick").alias("_prev"), F.col("stream_watermark").alias("_stream_watermark")))
    return (rows.join(F.broadcast(lookup) if small else lookup, "_prev", "left")
            .select(*cols, F.coalesce(F.col("_stream_watermark"), lit(initial)).alias("wm_before")))


def _end_splits(groups: DataFrame, last_tick: int) -> DataFrame:
    """The state to carry: per split its last group up to the last tick (max_ts after it) and its group at the tick
    after the range (rows published there, raw max event time)."""
    latest = Window.partitionBy("split").orderBy(F.col("t").desc())
    last_group = (groups.filter(F.col("t") <= last_tick).withColumn("_r", F.row_number().over(latest))
                  .filter(F.col("_r") == 1).select("split", "t", F.col("max_ts").alias("m")))
    after = groups.filter(F.col("t") > last_tick).select("split", "t", F.col("max_event_time").alias("m"))
    return last_group.unionByName(after)
