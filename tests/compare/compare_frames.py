"""Small hand-made tables for the compare tests: a job config (tumbling 10 s, cnt and total), and normalised replay
and live firings from tuples."""
from __future__ import annotations

from pyspark.sql import functions as F

from event_replay.compare.live import AGG_PREFIX
from event_replay.semantics.config import parse_config

S = 10_000  # tumbling 10 s
T0 = 1_704_067_200_000  # 2024-01-01T00:00:00Z


def cfg(**aggs):
    return parse_config({"source": {"path": "unused"}, "watermark": {"max_out_of_orderness": "1s"},
                         "window": {"type": "tumbling", "size": "10s"},
                         "aggregations": aggs or {"cnt": "count(*)", "total": "sum(value)"},
                         "output": {"path": "unused"}})


def frames(spark, replay_rows, live_rows):
    """Normalised replay firings and live firings from tuples."""
    replay = spark.createDataFrame(
        [(k, T0 + w * S, T0 + (w + 1) * S, i, T0 + (w + 1) * S + i, r, c, t, "2024-01-01")
         for k, w, i, r, c, t in replay_rows],
        f"key string, window_start_ms long, window_end_ms long, fire_index long, fire_watermark_ms long, "
        f"fire_reason string, {AGG_PREFIX}cnt long, {AGG_PREFIX}total long, replay_partition string")
    live = spark.createDataFrame(
        [(k, T0 + w * S, T0 + (w + 1) * S, c, t, fi, wm, None, None) for k, w, c, t, fi, wm in live_rows],
        f"key string, window_start_ms long, window_end_ms long, {AGG_PREFIX}cnt long, {AGG_PREFIX}total long, "
        "fire_index long, fire_watermark_ms long, fire_time_ms long, live_partition string")
    return replay, live


def with_live_firsts(windows, live):
    """The windows with the live rows' first fire watermark (null: none has one), as the matching gives them
    (matching.py)."""
    firsts = live.groupBy("key", "window_start_ms", "window_end_ms").agg(
        F.min("fire_watermark_ms").alias("live_first_watermark_ms"))
    return windows.join(firsts, ["key", "window_start_ms", "window_end_ms"], "left")
