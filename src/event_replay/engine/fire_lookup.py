"""When each tumbling or sliding window's timer fires: one search per distinct window end, on the driver.

A window's event-time timer is at its max timestamp `end - 1`; it fires when the stream watermark first reaches
it, i.e. at the smallest value the stream moved to that is >= end - 1 (none: the window waits for the end of
input). Window ends are the same for every key, and the stream's values are known on the driver when the
timeline was computed there (tick_timeline.py), so the lookup is a table window end -> firing watermark, built
with numpy over every window end the rows' event times can reach, and joined to the firings by broadcast (the
firings keep their partitioning). Above `FIRE_TABLE_MAX` window ends the caller uses the Spark lookup.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession

from ..semantics.config import WindowConfig
from .fixed_windows import slide_of

FIRE_TABLE_MAX = 2_000_000


def window_ends(window: WindowConfig, lo: int, hi: int) -> np.ndarray | None:
    """Every end of a window holding an event time in [lo, hi] (None above FIRE_TABLE_MAX)."""
    slide = slide_of(window)
    first = _last_start(lo, window.offset_ms, slide) - (-(-window.size_ms // slide) - 1) * slide
    last = _last_start(hi, window.offset_ms, slide)
    if (last - first) // slide + 1 > FIRE_TABLE_MAX:
        return None
    return np.arange(first, last + 1, slide, dtype=np.int64) + window.size_ms


def _last_start(t: int, offset: int, slide: int) -> int:
    """Flink's TimeWindow.getWindowStartWithOffset (Python's % is a floor modulo, like pmod)."""
    return t - (t - offset) % slide


def fire_table(spark: SparkSession, ends: np.ndarray, stream_values: np.ndarray) -> DataFrame:
    """(__q = end - 1, __v = the smallest stream value >= __q, null if none) for every end."""
    q = ends - 1
    at = np.searchsorted(stream_values, q, side="left")
    found = at < len(stream_values)
    v = np.where(found, stream_values[np.minimum(at, max(len(stream_values) - 1, 0))] if len(stream_values) else 0, 0)
    return spark.createDataFrame(pa.table({"__q": pa.array(q, pa.int64()),
                                           "__v": pa.array(v, pa.int64(), mask=~found)}))


def lookup_for(spark: SparkSession, timeline, window: WindowConfig,
               also: tuple[int | None, int | None] | None = None) -> DataFrame | None:
    """The fire table for a driver-computed timeline (contract.Timeline) of tumbling or sliding windows, over
    its rows' event times and `also` (the carried rows' range); None when the Spark lookup must be used."""
    if window.type == "session" or timeline.known_stream_values is None:
        return None
    bounds = [b for b in (timeline.event_time_range, also) if b is not None and b[0] is not None]
    if not bounds:
        return None
    ends = window_ends(window, min(b[0] for b in bounds), max(b[1] for b in bounds))
    return None if ends is None else fire_table(spark, ends, timeline.known_stream_values)
