"""Which non-merging windows hold an event time, as Spark columns over `event_time` (Flink's arithmetic,
semantics/windows.py): tumbling and sliding windows of one size every slide, and cumulate windows, which all start
at their max-size window's start and end on each step up to its end.

For any of them a row's windows are at most `windows_per_row`, the shortest ends at `first_max_ts` + 1 and the
longest (the one a row stays held by longest, cleanup growing with the end) at `last_end`.
"""
from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ...semantics.window_config import WindowConfig
from ..elements import WE, WS


def slide_of(w: WindowConfig) -> int:
    """How far apart consecutive window ends are: the slide, the size (tumbling) or the step (cumulate)."""
    return {"sliding": w.slide_ms, "cumulate": w.step_ms}.get(w.type, w.size_ms)


def _aligned(t: Column, every: int, offset: int) -> Column:
    return t - F.pmod(t - F.lit(offset), F.lit(every))  # Flink's getWindowStartWithOffset


def last_start(w: WindowConfig) -> Column:
    """The start of the row's latest window (for cumulate: of all its windows)."""
    step = w.size_ms if w.type == "cumulate" else slide_of(w)
    return _aligned(F.col("event_time"), step, w.offset_ms)


def last_end(w: WindowConfig) -> Column:
    """The end of the row's latest window."""
    return last_start(w) + F.lit(w.size_ms)


def windows_per_row(w: WindowConfig) -> int:
    return -(-w.size_ms // slide_of(w))


def first_max_ts(w: WindowConfig) -> Column:
    """The smallest max timestamp among the windows holding the row's event time."""
    t = F.col("event_time")
    if w.type == "cumulate":
        return _aligned(t, w.step_ms, w.offset_ms) + F.lit(w.step_ms - 1)
    size, slide, last = w.size_ms, slide_of(w), last_start(w)
    k_max = F.floor((last - t + F.lit(size - 1)) / F.lit(slide)).cast("long")
    return last - k_max * F.lit(slide) + F.lit(size - 1)


def assign(rows: DataFrame, w: WindowConfig) -> DataFrame:
    """One element per (row, window holding its event time): the row's columns plus __ws, __we."""
    size, slide, n = w.size_ms, slide_of(w), windows_per_row(w)
    if n == 1:
        return rows.withColumn(WS, last_start(w)).withColumn(WE, last_start(w) + F.lit(size))
    k = F.explode(F.sequence(F.lit(0), F.lit(n - 1)))
    if w.type == "cumulate":  # the ends: each step from the first one after the row up to the max-size window's end
        return (rows.withColumn("__k", k).withColumn(WS, last_start(w))
                .withColumn(WE, first_max_ts(w) + F.lit(1) + F.col("__k") * F.lit(slide))
                .where(F.col(WE) <= F.col(WS) + F.lit(size)).drop("__k"))
    return (rows.withColumn("__k", k).withColumn(WS, last_start(w) - F.col("__k") * F.lit(slide))
            .where(F.col(WS) > F.col("event_time") - F.lit(size)).drop("__k")
            .withColumn(WE, F.col(WS) + F.lit(size)))


def max_timestamps(rows: DataFrame, w: WindowConfig) -> DataFrame:
    """`__q`: the max timestamp (end - 1) of every window some row falls in, each once; a scan with partial
    distincts (a superset of the timer firings' lookups)."""
    n, slide = windows_per_row(w), slide_of(w)
    q = rows.select((last_end(w) - F.lit(1)).alias("__q")).distinct()
    if n > 1:  # every window ends a multiple of the slide (the step) before the latest one, down to n - 1 of them
        q = (q.select("__q", F.explode(F.sequence(F.lit(0), F.lit(n - 1))).alias("__k"))
             .select((F.col("__q") - F.col("__k") * F.lit(slide)).alias("__q")).distinct())
    return q
