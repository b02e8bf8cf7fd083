"""Processing-time windows in the Spark engine (docs/semantics.md, "Time notions"; the reference model is
semantics/processing_time.py).

On the replay clock a processing-time window [s, e) fires at replay time e - 1, after the rows arriving then, and is
purged. That is an event-time replay of the arrival times (event_time = arrival_time, set on read) in which the
stream "watermark" just before a row is its arrival time - 1 (every timer before the row has fired; the windows
it fired are gone, so a session cannot grow across its own firing) and the stream reaches exactly the timer times
of the range: the max timestamps e - 1 < end of the windows that exist. So the windows stage (windows/) runs
unchanged on rows with `wm_before = arrival_time - 1` and those timer times as the stream values: no row is late
(its windows end after it), every window fires once at e - 1, or at the flush, or is held. No watermarks are output.

Timer times: a tumbling/sliding window's max timestamp from each row's windows; a session's from its last row,
since on arrival order a key's session is a run of rows less than `gap` apart and ends at last + gap.
"""
from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from ..semantics.config import JobConfig
from ..spark import local_frame
from .carry import Carry, last_offsets_after
from .contract import SPLIT_STATE_SCHEMA, WATERMARKS_SCHEMA, EngineResult
from .windowed import windowed_only
from .windows import carried_rows, compute_windows_with_elements, windows_partitions

CLOCK = "wm_before"


def on_replay_clock(rows: DataFrame) -> DataFrame:
    """The rows with the clock just before each of them (arrival - 1) in the windows stage's `wm_before`, and their
    processing time, the arrival time, as the time the windows read (the IO layer sets it already, see contract.py;
    carried rows keep theirs)."""
    return rows.withColumn("event_time", F.col("arrival_time")).withColumn(CLOCK, F.col("arrival_time") - F.lit(1))


def timer_times(rows: DataFrame, cfg: JobConfig, end_ms: int) -> DataFrame:
    """`watermark`: every replay time < end_ms at which some window's processing-time timer fires."""
    w = cfg.window
    t = F.col("arrival_time")
    if w.type == "session":
        after = Window.partitionBy("key").orderBy("arrival_time", "split", "offset")
        next_t = F.lead(t).over(after)
        ends = (rows.select(t, next_t.alias("__next"))
                .where(F.col("__next").isNull() | (F.col("__next") - t >= F.lit(w.gap_ms)))
                .select((t + F.lit(w.gap_ms - 1)).alias("watermark")))
    else:
        slide = w.slide_ms if w.type == "sliding" else w.size_ms
        last_max = t - F.pmod(t - F.lit(w.offset_ms), F.lit(slide)) + F.lit(w.size_ms - 1)
        n_windows = -(-w.size_ms // slide)
        # The windows a row is in end at its last window's max timestamp minus multiples of the slide (a few more
        # times than windows do no harm: a window's own max timestamp is in the set, so it is what it finds).
        ks = F.explode(F.sequence(F.lit(0), F.lit(n_windows - 1)))
        ends = (rows.select(last_max.alias("__m")).distinct().select("__m", ks.alias("__k"))
                .select((F.col("__m") - F.col("__k") * F.lit(slide)).alias("watermark")))
    return (ends.where(F.col("watermark") < F.lit(end_ms)).distinct()
            .select(F.col("watermark").cast("long")))


def replay(rows: DataFrame, cfg: JobConfig, splits: list[str], clock, carried: Carry | None,
           clean_max_offsets: dict[str, int] | None, with_cause: bool):
    """A range of the replay clock, from the previous range's state (None: the history starts): its outputs (no late
    rows, no watermarks) and its end state if the clock has an id (its state is kept), else None. The carried rows
    are those of windows whose timer is at or after the previous range's end; the clock there (its end - 1) is the
    carried `stream_watermark`."""
    clocked = on_replay_clock(windowed_only(rows))
    window_rows = clocked if carried is None else carried.rows.select(*clocked.columns).unionByName(clocked)
    if clock.id is not None:  # its state is written: the rows are read once more for it
        window_rows = window_rows.localCheckpoint(eager=True)
    firings, late, elems = compute_windows_with_elements(
        window_rows, timer_times(window_rows, cfg, clock.end_ms), cfg,
        new_from_ms=clock.start_ms if carried is not None else None,
        carried_wm=carried.stream_watermark if carried is not None else None,
        partitions=windows_partitions(rows.sparkSession, cfg),
        with_cause=with_cause)
    result = EngineResult(windows=firings, late_events=late, watermarks=_no_watermarks(rows))
    if clock.id is None:
        return result, None
    return result, _end_state(rows, cfg, splits, clock, carried, window_rows, elems, clean_max_offsets)


def _end_state(rows, cfg, splits, clock, carried, window_rows, elems, clean_max_offsets):
    clock_end = clock.end_ms - 1
    no_splits = local_frame(rows.sparkSession, [], SPLIT_STATE_SCHEMA)
    return Carry(origin_tick=None, stream_watermark=clock_end, stream_idle=False,
                 splits=sorted(set(splits) | set(carried.splits if carried else ())),
                 last_offsets=last_offsets_after(rows, carried, clean_max_offsets), split_states=no_splits,
                 rows=carried_rows(window_rows, elems, cfg, clock_end))


def _no_watermarks(rows: DataFrame) -> DataFrame:
    return local_frame(rows.sparkSession, [], WATERMARKS_SCHEMA)
