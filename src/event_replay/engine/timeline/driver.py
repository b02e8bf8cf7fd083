"""Periodic emission on the driver: the whole watermark timeline from one small aggregate (SEMANTICS §2–4).

With periodic emission a split publishes only at ticks, so everything the timeline needs from the rows is, per
(split, tick with rows), the largest event time published there (`max_event_time`). That table is small next to
the rows: at most one entry per split and tick (32 splits over a day at 200 ms: 14M in the worst case, a few
hundred thousand in practice, since most splits are silent most of the time). One Spark aggregate brings it to
the driver as Arrow columns (tick_table.py); the closed forms of `split_changes.py` (running max, silence advance, idleness)
and the stream's combination over the splits (`stream.py`) are then numpy passes over it, O(n log n).

The rows then need only the stream watermark just before them: every row published at tick t has the stream
as it stood after tick t - interval, i.e. the stream's watermark at its last change tick <= t - interval. The
rows look that up in the stream's (change tick, watermark) arrays, binary-searched in the engine's extension
(engine/lookups.py: no join, no Spark job, no shuffle); without the extension's jar, a table tick -> watermark
(one entry per tick with rows) joins the rows by broadcast instead.

Above the driver's bound (`tick_partials_max` entries, io/read_order.py) the aggregate is not collected and the
caller uses the Spark path (`periodic_spark.py`), which computes the same closed forms as DataFrames.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ...io.scratch import driver_frame
from ...semantics.config import JobConfig
from ...spark import local_frame
from ..contract import SPLIT_STATE_SCHEMA, WATERMARKS_SCHEMA, Timeline
from ..lookups import floor_value
from .carry import StreamBefore, Ticks, TimelineEnd
from .sorted_arrays import distinct_sorted
from .split_changes import SplitGroups, split_changes
from .stream import StreamTimeline, combine_splits
from .tick_table import TickTable, publish_tick

TICK_LOOKUP = T.StructType([T.StructField("_tick", T.LongType(), False),
                            T.StructField("wm_before", T.LongType(), False)])


@dataclass
class DriverStream:
    """The stream of one range computed on the driver, with what its end state needs."""
    stream: StreamTimeline
    groups: SplitGroups
    max_ts_after: np.ndarray  # per group: the split's max_ts after it


def stream_of_table(cfg: JobConfig, table: TickTable, main_splits: list[str], has_side: bool, before: StreamBefore,
                    ticks: Ticks, pseudo: list[tuple[str, int, int]]) -> DriverStream:
    """The stream over ticks.first..ticks.last from the range's tick table, continuing from `before` and the
    carried pseudo-groups (split, t, m) of the range before (empty: the start of a history)."""
    groups = _with_pseudo_groups(table, pseudo, main_splits)
    changes = split_changes(groups, cfg.watermark, len(main_splits), ticks.end_bound, ticks.origin)
    stream = combine_splits(changes, len(main_splits), ticks.first, ticks.last, has_side, before.initial,
                            before.value, before.idle)
    return DriverStream(stream, groups, changes.max_ts_after)


def periodic_on_driver(rows: DataFrame, cfg: JobConfig, table: TickTable, main_splits: list[str], has_side: bool,
                       before: StreamBefore, ticks: Ticks,
                       pseudo: list[tuple[str, int, int]]) -> tuple[Timeline, DriverStream]:
    """The Timeline of `rows` (published at ticks.first..ticks.last) from their tick table (see stream_of_table)."""
    spark = rows.sparkSession
    done = stream_of_table(cfg, table, main_splits, has_side, before, ticks, pseudo)
    stream = done.stream
    watermarks = driver_frame(spark, watermark_rows(stream, main_splits), WATERMARKS_SCHEMA)
    floor_ticks, floor_wm = floor_table(stream)
    out_rows = with_wm_before(rows, floor_ticks, floor_wm, table.row_ticks, ticks.first, ticks.interval,
                              before.initial)
    values = driver_frame(spark, pa.table({"watermark": pa.array(stream.values, pa.int64())}))
    e_range = None if table.min_event_time is None else (table.min_event_time, table.max_event_time_all)
    timeline = Timeline(rows=out_rows, watermarks=watermarks, stream_values=values,
                        known_stream_values=stream.values, event_time_range=e_range, watermarks_from_driver=True)
    return timeline, done


def _with_pseudo_groups(table: TickTable, pseudo: list[tuple[str, int, int]], main_splits: list[str]) -> SplitGroups:
    """The rows' groups plus the carried pseudo-groups, merged per (split, tick) by max and sorted. The table is
    sorted with one entry per (split, tick) already and the carried groups are few (a split's last ones), so each
    is placed by a binary search: one copy of the arrays, no sort of the chunk."""
    index = {s: i for i, s in enumerate(main_splits)}
    best: dict[tuple[int, int], int] = {}
    for s, t, m in pseudo:
        if s in index:
            key = (index[s], t)
            best[key] = max(best.get(key, m), m)
    if not best:  # no copy at all
        return SplitGroups(split=table.split, tick=table.tick, max_event_time=table.max_event_time)
    keys = sorted(best)
    p_split = np.array([k[0] for k in keys], np.int32)
    p_tick = np.array([k[1] for k in keys], np.int64)
    p_emax = np.array([best[k] for k in keys], np.int64)
    split, tick, emax = table.split, table.tick, table.max_event_time
    at = np.empty(len(keys), np.int64)  # where each carried group goes: the first entry at or after its (split, tick)
    for i in distinct_sorted(p_split):
        mine = p_split == i
        lo, hi = np.searchsorted(split, i, "left"), np.searchsorted(split, i, "right")
        at[mine] = lo + np.searchsorted(tick[lo:hi], p_tick[mine], "left")
    inside = at < len(split)
    found = np.zeros(len(keys), bool)
    found[inside] = (split[at[inside]] == p_split[inside]) & (tick[at[inside]] == p_tick[inside])
    if found.any():
        emax = emax.copy()
        emax[at[found]] = np.maximum(emax[at[found]], p_emax[found])
    new = ~found
    return SplitGroups(split=np.insert(split, at[new], p_split[new]), tick=np.insert(tick, at[new], p_tick[new]),
                       max_event_time=np.insert(emax, at[new], p_emax[new]))


def watermark_rows(stream: StreamTimeline, main_splits: list[str]) -> pa.Table:
    """The `watermarks` output as Arrow columns (the splits' changes and the stream's, null while idle), by replay
    time, each tick's split changes (by split: `main_splits` is sorted) before its stream change: the order the
    write sorts into (io/output.py), so that its sort finds one run already in place. Each column is built once, in
    that order (the driver's peak memory)."""
    n_splits, n_split_changes = len(main_splits), len(stream.split_tick)
    lane = np.concatenate([stream.split_index.astype(np.int64),
                           np.full(len(stream.change_tick), n_splits, np.int64)])  # the stream after every split
    tick = np.concatenate([stream.split_tick, stream.change_tick]).astype(np.int64, copy=False)
    order = _output_order(tick, lane, n_splits)
    tick, lane = tick[order], lane[order]
    idle = np.concatenate([stream.split_idle, stream.change_idle]).astype(bool, copy=False)[order]
    value = np.concatenate([stream.split_value, stream.change_value]).astype(np.int64, copy=False)[order]
    is_stream = order >= n_split_changes
    del order
    scope = pa.DictionaryArray.from_arrays(pa.array(is_stream.view(np.int8)), pa.array(["split", "stream"]))
    split = pa.array(main_splits, pa.string()).take(pa.array(np.where(is_stream, 0, lane), pa.int64(), mask=is_stream))
    return pa.table({"replay_time": pa.array(tick, pa.int64()), "scope": scope.cast(pa.string()), "split": split,
                     "watermark": pa.array(value, pa.int64(), mask=idle), "idle": pa.array(idle, pa.bool_())})


def _output_order(tick: np.ndarray, lane: np.ndarray, n_splits: int) -> np.ndarray:
    """Positions in (tick, lane) order, ties in place: one stable sort of a single int64 key, whose input is a few
    sorted runs (each split's changes, the stream's)."""
    if len(tick) == 0:
        return np.zeros(0, np.int64)
    key = (tick - tick.min()) * (n_splits + 1) + lane  # a tick span times the splits stays far below 2^63
    return np.argsort(key, kind="stable")


def floor_table(stream: StreamTimeline) -> tuple[np.ndarray, np.ndarray]:
    """(tick, watermark) where the stream's watermark moves (and its first tick): what a floor lookup of the
    watermark after a tick needs, without the ticks where only a split or the idleness changed."""
    keep = np.ones(len(stream.tick), bool)
    keep[1:] = stream.watermark[1:] != stream.watermark[:-1]
    return stream.tick[keep], stream.watermark[keep]


def with_wm_before(rows: DataFrame, floor_ticks: np.ndarray, floor_wm: np.ndarray, row_ticks: np.ndarray | None,
                   first_tick: int, interval: int, initial: int) -> DataFrame:
    """`rows` with `wm_before`: the stream watermark after the last tick <= the row's tick - interval (`initial`
    before the first), from the stream's (floor_ticks, floor_wm): a lookup in the extension, else a broadcast join
    of `_tick_lookup` over `row_ticks` (every tick with rows; None: the extension is required)."""
    tick = publish_tick(F.col("arrival_time"), first_tick, interval)
    wm = floor_value(rows.sparkSession, floor_ticks, floor_wm, tick - F.lit(interval), initial)
    if wm is not None:
        return rows.withColumn("wm_before", wm)
    if row_ticks is None:
        raise RuntimeError("the rows' watermark lookup needs the engine's extension here")
    lookup = driver_frame(rows.sparkSession, _tick_lookup(floor_ticks, floor_wm, row_ticks, interval, initial),
                          TICK_LOOKUP)
    return (rows.withColumn("_tick", tick).join(F.broadcast(lookup), "_tick", "left")
            .select(*rows.columns, F.coalesce(F.col("wm_before"), F.lit(initial).cast("long")).alias("wm_before")))


def _tick_lookup(floor_ticks: np.ndarray, floor_wm: np.ndarray, ticks: np.ndarray, interval: int,
                 initial: int) -> pa.Table:
    """tick -> the stream watermark after the last tick before it (`initial` before the first tick)."""
    before = ticks - interval
    at = np.searchsorted(floor_ticks, before, side="right") - 1
    wm = np.where(at >= 0, floor_wm[np.maximum(at, 0)], initial)
    return pa.table({"_tick": pa.array(ticks, pa.int64()), "wm_before": pa.array(wm, pa.int64())})


def end_split_state(groups: SplitGroups, m_after: np.ndarray, last_tick: int,
                    main_splits: list[str]) -> list[tuple[str, int, int]]:
    """Per split its last group up to the last tick (t, M after it) and its group after the range (t, raw max)."""
    out = []
    for i in distinct_sorted(groups.split):
        mine = np.flatnonzero(groups.split == i)
        inside = mine[groups.tick[mine] <= last_tick]
        if len(inside):
            j = inside[-1]
            out.append((main_splits[i], int(groups.tick[j]), int(m_after[j])))
        for j in mine[groups.tick[mine] > last_tick]:
            out.append((main_splits[i], int(groups.tick[j]), int(groups.max_event_time[j])))
    return out


def driver_end(spark: SparkSession, done: DriverStream, ticks: Ticks, main_splits: list[str]) -> TimelineEnd:
    """The state a range computed on the driver in one piece leaves."""
    end_splits = local_frame(spark, end_split_state(done.groups, done.max_ts_after, ticks.last, main_splits),
                             SPLIT_STATE_SCHEMA)
    last = local_frame(spark, [(bool(done.stream.idle[-1]),)], "s_idle boolean")
    return TimelineEnd(splits=end_splits, origin_tick=ticks.origin, stream_last=last)
