"""The driver path for a range whose (split, tick) table exceeds the driver's bound: the same timeline, computed
chunk by chunk of ticks.

Spark aggregates the rows once per (split, tick) into the scratch folder, bucketed into at most N_TICK_BUCKETS
equal spans of ticks; consecutive buckets make a chunk of at most the bound's entries. Each chunk's timeline
continues from the state the chunk before left (its splits' last groups, the stream's watermark and idleness),
as a partition continues from the one before it, so the result is the one-piece computation's. The driver holds
one chunk's table at a time; for the whole range it keeps only the ticks where the stream's watermark moves (16
bytes each, at most one per tick of the range), which the rows look up in the engine's extension.

None (the caller then takes the Spark path) without a scratch folder or the extension, or when a single bucket
exceeds the bound.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Iterator

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ...io.read_order import tick_partials_max
from ...io.scratch import driver_frame, scratch_dataset
from ...semantics.config import JobConfig
from ..contract import WATERMARKS_SCHEMA, Timeline
from ..lookups import available
from . import driver
from .carry import StreamBefore, Ticks, TimelineEnd
from .driver import driver_end, end_split_state, floor_table, stream_of_table, watermark_rows, with_wm_before

N_TICK_BUCKETS = 256  # buckets of the written table: a chunk is a run of them (finer: chunks nearer the bound)


@dataclass(frozen=True)
class TickChunks:
    """The range's tick table in the scratch folder (`path`, column `_bucket`), and its chunks: (first bucket,
    last bucket, first tick, last tick), in tick order."""
    path: str
    chunks: list[tuple[int, int, int, int]]


def plan_chunks(rows: DataFrame, main_splits: list[str], ticks: Ticks) -> TickChunks | None:
    """Write the rows' tick table bucketed by tick and cut it into chunks of at most the driver's bound."""
    spark = rows.sparkSession
    path = scratch_dataset(spark)
    if path is None or not available(spark):
        return None
    limit = driver.DRIVER_GROUPS_MAX if driver.DRIVER_GROUPS_MAX is not None else tick_partials_max(spark)
    per_bucket = -(-ticks.count // N_TICK_BUCKETS)  # ticks per bucket
    n_buckets = -(-ticks.count // per_bucket)
    tick = driver.publish_tick(F.col("arrival_time"), ticks.first, ticks.interval)
    bucket = F.least(F.floor((F.col("tick") - ticks.first) / (per_bucket * ticks.interval)), F.lit(n_buckets - 1))
    (rows.groupBy("split", tick.alias("tick"))
     .agg(F.max("event_time").alias("max_event_time"), F.min("event_time").alias("min_event_time"))
     .withColumn("_bucket", bucket.cast("int"))
     .repartition("_bucket")  # one file per bucket
     .write.partitionBy("_bucket").parquet(path))
    counts = {r["_bucket"]: r["count"] for r in spark.read.parquet(path).groupBy("_bucket").count().collect()}
    return _cut(path, counts, n_buckets, per_bucket, ticks, limit)


def _cut(path: str, counts: dict[int, int], n_buckets: int, per_bucket: int, ticks: Ticks,
         limit: int) -> TickChunks | None:
    """Consecutive buckets while their entries stay within `limit`; None if one bucket alone exceeds it."""
    if any(n > limit for n in counts.values()):
        return None
    width = per_bucket * ticks.interval
    chunks, lo, held = [], 0, 0
    for b in range(n_buckets):
        n = counts.get(b, 0)
        if held + n > limit:
            chunks.append((lo, b - 1))
            lo, held = b, 0
        held += n
    chunks.append((lo, n_buckets - 1))
    # A chunk ends where the next begins; the last at the range's last tick (its bucket holds every later row).
    ends = [ticks.first + (j + 1) * width - ticks.interval for _, j in chunks[:-1]] + [ticks.last]
    return TickChunks(path, [(i, j, ticks.first + i * width, end) for (i, j), end in zip(chunks, ends)])


def _tables(spark: SparkSession, chunks: TickChunks, main_splits: list[str]) -> Iterator[driver.TickTable]:
    table = spark.read.parquet(chunks.path)
    for i, j, _, _ in chunks.chunks:
        part = (table.filter(F.col("_bucket").between(i, j))
                .select("split", "tick", "max_event_time", "min_event_time").toArrow())
        yield driver.to_tick_table(part, main_splits)


def periodic_in_chunks(rows: DataFrame, cfg: JobConfig, chunks: TickChunks, main_splits: list[str], has_side: bool,
                       before: StreamBefore, ticks: Ticks,
                       pseudo: list[tuple[str, int, int]]) -> tuple[Timeline, TimelineEnd]:
    """The Timeline of `rows`, one chunk after the other, each continuing from the state the one before left."""
    spark = rows.sparkSession
    watermarks, floor_ticks, floor_wm, values, e_lo, e_hi = [], [], [], [], [], []
    state = before
    for (_, _, first, last), table in zip(chunks.chunks, _tables(spark, chunks, main_splits)):
        done = stream_of_table(cfg, table, main_splits, has_side, state, Ticks(ticks.interval, first, last,
                                                                               ticks.origin), pseudo)
        stream = done.stream
        watermarks.append(driver_frame(spark, watermark_rows(stream, main_splits), WATERMARKS_SCHEMA))
        t, w = floor_table(stream)
        floor_ticks.append(t)
        floor_wm.append(w)
        values.append(stream.values)
        if table.min_event_time is not None:
            e_lo.append(table.min_event_time)
            e_hi.append(table.max_event_time_all)
        pseudo = end_split_state(done.groups, done.max_ts_after, last, main_splits)
        wm = int(stream.watermark[-1])
        state = StreamBefore(initial=max(state.initial, wm), value=wm, idle=bool(stream.idle[-1]))
    out_rows = with_wm_before(rows, np.concatenate(floor_ticks), np.concatenate(floor_wm), None, ticks.first,
                              ticks.interval, before.initial)
    all_values = np.concatenate(values)
    timeline = Timeline(rows=out_rows, watermarks=_union(watermarks), known_stream_values=all_values,
                        stream_values=driver_frame(spark, pa.table({"watermark": pa.array(all_values, pa.int64())})),
                        event_time_range=(min(e_lo), max(e_hi)) if e_lo else None)
    return timeline, driver_end(spark, done, ticks, main_splits)  # the last chunk ends at ticks.last


def _union(frames: list[DataFrame]) -> DataFrame:
    return functools.reduce(DataFrame.unionByName, frames)
