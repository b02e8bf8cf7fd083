"""The contract between the Spark engine's stages (all times are long milliseconds).

The entry (`engine.replay`) takes the rows, the config, the declared splits, the replay clock's range (history/partitions.py:
a `Clock`, a partition or a span: anything with start_ms, end_ms and id) and the state carried from the previous range
(carry.py's `Carry`, plain data; None: the history starts), and returns the range's `EngineResult` and the Carry the
next range continues from (None when the clock has no id: no state is kept).

Input rows (a DataFrame, already read, cleaned and cut to the replay range by the IO layer):
    split string, offset long, arrival_time long, event_time long, key (any type), payload columns...
  For ingestion/processing time, event_time already equals arrival_time.
  With a job filter, `__windowed boolean` (io/row_filter.py WINDOWED): the filter's verdict. Every row drives the
  timeline; only the rows it keeps reach stage 2 (windowed.py), so they alone can be windowed or late.

Stage 1, the timeline (`timeline.compute_timeline`) -> `Timeline`:
    rows        input rows + `wm_before long`: the stream watermark just before the row
                (SEMANTICS §5: "as it stood just before the row"; NEG_INF for -inf).
    watermarks  the `watermarks` output (SEMANTICS §7), one row per change:
                replay_time long, scope string ('split'|'stream'), split string (null for stream),
                watermark long (null while idle), idle boolean.
    stream_values  one column `watermark long`: every value the stream watermark moved to during
                the range, ascending and distinct (it never goes back), excluding the flush's +inf.
    known_stream_values, event_time_range  the same values as a numpy array and the rows' event-time
                range, when the timeline was computed on the driver (periodic emission, timeline/driver.py).
Stage 2, the windows (`windows.compute_windows`) -> (firings, late_rows):
    firings     key, window_start long, window_end long, fire_index int, fire_watermark long
                (null for end_of_input), fire_reason string, one column per configured aggregate.
    late_rows   every input column + late_watermark long.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import types as T

from ..semantics.durations import NEG_INF, POS_INF  # noqa: F401  (re-exported for the stages)

# The watermarks output and the stream values (see above); a split's carried state (carry.py).
WATERMARKS_SCHEMA = T.StructType([
    T.StructField("replay_time", T.LongType(), False),
    T.StructField("scope", T.StringType(), False),
    T.StructField("split", T.StringType(), True),
    T.StructField("watermark", T.LongType(), True),
    T.StructField("idle", T.BooleanType(), False),
])
STREAM_VALUES_SCHEMA = T.StructType([T.StructField("watermark", T.LongType(), False)])
SPLIT_STATE_SCHEMA = T.StructType([T.StructField("split", T.StringType(), False),
                                  T.StructField("t", T.LongType(), True), T.StructField("m", T.LongType(), False)])


@dataclass
class Timeline:
    rows: DataFrame
    watermarks: DataFrame
    stream_values: DataFrame
    # When the timeline was computed on the driver (timeline/driver.py): the stream values as a sorted array, and
    # the rows' event-time range [lo, hi] (None when unknown or without rows).
    known_stream_values: Any = None
    event_time_range: tuple[int, int] | None = None
    # The watermarks are a scan of files the driver wrote (timeline/driver.py): cheap enough for one task to read.
    watermarks_from_driver: bool = False


@dataclass
class EngineResult:
    windows: DataFrame
    late_events: DataFrame
    watermarks: DataFrame
    watermarks_from_driver: bool = False  # as Timeline's
