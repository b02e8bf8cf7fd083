"""Periodic emission: the tick timeline of a range, and which path computes it.

A row is published at the first tick at or after its arrival (a tick at the same instant comes after the row;
rows before the range's first tick are published there). A range with no tick publishes nothing; a job with only
side inputs has a constant stream. Otherwise one aggregate per (split, tick with rows) is brought to the driver
when it is small (`driver.py`), else the Spark path (`periodic_spark.py`) computes the same closed forms.
"""
from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ...io.read_order import TickPartials
from ...semantics.config import JobConfig
from ...spark import local_frame
from ..contract import NEG_INF, SPLIT_STATE_SCHEMA, WATERMARKS_SCHEMA, Timeline
from .carry import StreamBefore, Ticks, TimelineCarry, TimelineEnd
from .driver import driver_end, periodic_on_driver
from .tick_table import collect_tick_table
from .driver_chunks import periodic_in_chunks, plan_chunks
from .frames import empty, lit, stream_values_const, with_rows_watermark
from .periodic_spark import periodic_spark


def periodic(rows: DataFrame, cfg: JobConfig, main_splits: list[str], has_side: bool, initial: int,
             start_ms: int, end_ms: int, carry: TimelineCarry | None,
             tick_partials: TickPartials | None = None) -> tuple[Timeline, TimelineEnd]:
    interval = cfg.watermark.interval_ms
    first_tick = -(-start_ms // interval) * interval
    origin = carry.origin_tick if carry is not None and carry.origin_tick is not None else first_tick
    prev0 = carry.stream_wm if carry is not None else NEG_INF
    before = StreamBefore(initial=max(initial, prev0), value=prev0,
                          idle=carry.stream_idle if carry is not None else False)
    cols = rows.columns
    a = F.col("arrival_time")
    rows = rows.withColumn("_tick", F.greatest(lit(first_tick), a + F.pmod(-a, lit(interval))))
    if first_tick >= end_ms:
        if carry is not None:
            raise ValueError(f"the range [{start_ms}, {end_ms}) holds no watermark tick (interval {interval} ms): "
                             "a partition must be at least one interval long to carry state")
        return _constant(rows, cols, before, None, changes=empty(rows, WATERMARKS_SCHEMA))
    ticks = Ticks(interval=interval, first=first_tick, last=(end_ms - 1) // interval * interval, origin=origin)
    if not main_splits:
        # Only side inputs: the stream is +inf (or -inf without any split) from the start.
        changes = local_frame(rows.sparkSession, [(first_tick, "stream", None, before.initial, False)],
                              WATERMARKS_SCHEMA) \
            if before.initial != before.value else empty(rows, WATERMARKS_SCHEMA)
        return _constant(rows, cols, before, origin, changes)
    driver = _on_driver(rows.select(*cols), cfg, main_splits, has_side, before, ticks, carry, tick_partials)
    if driver is not None:
        return driver
    return periodic_spark(rows, cols, cfg, main_splits, has_side, before, ticks, carry)


def _constant(rows: DataFrame, cols: list[str], before: StreamBefore, origin: int | None,
              changes: DataFrame) -> tuple[Timeline, TimelineEnd]:
    """A stream that holds `before.initial` through the range (no tick, or only side inputs)."""
    spark = rows.sparkSession
    return (Timeline(rows=with_rows_watermark(rows, cols, before.initial), watermarks=changes,
                     stream_values=stream_values_const(spark, before.initial, before.value)),
            TimelineEnd(splits=empty(rows, SPLIT_STATE_SCHEMA), origin_tick=origin, stream_last=None))


def _on_driver(rows: DataFrame, cfg: JobConfig, main_splits: list[str], has_side: bool, before: StreamBefore,
               ticks: Ticks, carry: TimelineCarry | None,
               tick_partials: TickPartials | None) -> tuple[Timeline, TimelineEnd] | None:
    """The driver path (driver.py) when the per-(split, tick) aggregate is small enough, else in chunks of ticks
    (driver_chunks.py); None when not even a chunk fits."""
    table = collect_tick_table(rows, main_splits, ticks.first, ticks.interval, partials=tick_partials)
    pseudo = [(r["split"], r["t"], r["m"]) for r in carry.splits.collect()] if carry is not None else []
    if table is None:
        same = tick_partials is not None and tick_partials.interval == ticks.interval
        chunks = plan_chunks(rows, main_splits, ticks, tick_partials.buckets if same else None)
        if chunks is None:
            return None
        return periodic_in_chunks(rows, cfg, chunks, main_splits, has_side, before, ticks, pseudo)
    timeline, done = periodic_on_driver(rows, cfg, table, main_splits, has_side, before, ticks, pseudo)
    return timeline, driver_end(rows.sparkSession, done, ticks, main_splits)
