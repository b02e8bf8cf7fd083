"""The driver path for a range whose (split, tick) table exceeds the driver's bound: the same timeline, computed
chunk by chunk of ticks.

The range's (split, tick) entries lie in the scratch folder in buckets of equal tick spans (io/tick_buckets.py):
written by the read-order pass when it took them, else by an aggregate of the rows here. Consecutive buckets make a
chunk of at most the bound's entries. Each chunk's timeline continues from the state the chunk before left (its
splits' last groups, the stream's watermark and idleness), as a partition continues from the one before it, so the
result is the one-piece computation's. The driver holds one chunk's table at a time; for the whole range it keeps
only the ticks where the stream's watermark moves (16 bytes each, at most one per tick of the range), which the
rows look up in the engine's extension.

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

from ...io.scratch import driver_frame
from ...io.tick_buckets import TickBuckets, read_buckets, write_tick_buckets
from ...semantics.config import JobConfig
from ..contract import WATERMARKS_SCHEMA, Timeline
from ..lookups import available
from . import tick_table
from .carry import StreamBefore, Ticks, TimelineEnd
from .driver import driver_end, end_split_state, floor_table, stream_of_table, watermark_rows, with_wm_before


@dataclass(frozen=True)
class TickChunks:
    """The range's bucketed entries and its chunks: (first bucket, last bucket, first tick, last tick), in tick
    order; the first chunk reads from bucket 0 and the last to the last bucket (entries outside the range's ticks
    are published at its first tick, or held by its last chunk)."""
    buckets: TickBuckets
    chunks: list[tuple[int, int, int, int]]


def plan_chunks(rows: DataFrame, main_splits: list[str], ticks: Ticks,
                written: TickBuckets | None = None) -> TickChunks | None:
    """Chunks of at most the driver's bound over `written` (the read's entries), else over the rows' aggregate."""
    spark = rows.sparkSession
    if not available(spark):
        return None
    limit = tick_table.groups_limit(spark)
    if written is None:
        tick = tick_table.publish_tick(F.col("arrival_time"), ticks.first, ticks.interval)
        entries = (rows.groupBy("split", tick.alias("tick"))
                   .agg(F.max("event_time").alias("max_event_time"), F.min("event_time").alias("min_event_time")))
        written = write_tick_buckets(entries, ticks.first, ticks.last, ticks.interval, one_file_per_bucket=True)
    return None if written is None else _cut(written, ticks, limit)


def _cut(buckets: TickBuckets, ticks: Ticks, limit: int) -> TickChunks | None:
    """Consecutive buckets while their entries stay within `limit`; None if one bucket alone exceeds it. Buckets
    before the range's first tick count with its first bucket, those after its last tick with its last."""
    lo_b, hi_b = buckets.bucket_of(ticks.first), buckets.bucket_of(ticks.last)
    held_by = {}
    for b, n in buckets.counts.items():
        e = min(max(b, lo_b), hi_b)
        held_by[e] = held_by.get(e, 0) + n
    if any(n > limit for n in held_by.values()):
        return None
    runs, lo, held = [], lo_b, 0
    for b in range(lo_b, hi_b + 1):
        n = held_by.get(b, 0)
        if held + n > limit:
            runs.append((lo, b - 1))
            lo, held = b, 0
        held += n
    runs.append((lo, hi_b))
    firsts = [ticks.first] + [buckets.start_of(i) for i, _ in runs[1:]]
    lasts = [f - ticks.interval for f in firsts[1:]] + [ticks.last]  # a chunk ends where the next begins
    reads = [(0 if k == 0 else i, buckets.n_buckets - 1 if k == len(runs) - 1 else j) for k, (i, j) in enumerate(runs)]
    return TickChunks(buckets, [(i, j, f, t) for (i, j), f, t in zip(reads, firsts, lasts)])


def _tables(spark: SparkSession, chunks: TickChunks, main_splits: list[str],
            first_tick: int) -> Iterator[tick_table.TickTable]:
    for i, j, _, _ in chunks.chunks:
        part = read_buckets(spark, chunks.buckets, i, j).toArrow()
        yield tick_table.combine_partials(part, main_splits, first_tick)


def periodic_in_chunks(rows: DataFrame, cfg: JobConfig, chunks: TickChunks, main_splits: list[str], has_side: bool,
                       before: StreamBefore, ticks: Ticks,
                       pseudo: list[tuple[str, int, int]]) -> tuple[Timeline, TimelineEnd]:
    """The Timeline of `rows`, one chunk after the other, each continuing from the state the one before left."""
    spark = rows.sparkSession
    watermarks, floor_ticks, floor_wm, values, e_lo, e_hi = [], [], [], [], [], []
    state = before
    for (_, _, first, last), table in zip(chunks.chunks, _tables(spark, chunks, main_splits, ticks.first)):
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
                        event_time_range=(min(e_lo), max(e_hi)) if e_lo else None, watermarks_from_driver=True)
    return timeline, driver_end(spark, done, ticks, main_splits)  # the last chunk ends at ticks.last


def _union(frames: list[DataFrame]) -> DataFrame:
    return functools.reduce(DataFrame.unionByName, frames)
