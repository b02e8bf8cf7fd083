"""The evidence the replay has about each compared window that is not plainly equal, one frame per kind, joined
per window by explain.py:
- late rows: the replay's late rows of the window (late_events/, with the watermark they saw) and, with the live
  late output, the rows late on one side only. A row belongs to the windows of its key that contain its time
  (tumbling and sliding windows computed from the config; sessions: the compared windows it would overlap);
- which split held the stream when the replay first fired the window (attribution.holders) and the replay time;
- idle spans around that firing: the splits that went idle on the replay clock in the idle timeout (plus three
  intervals) before it (watermarks/).
The rows per split in the source (a split never read) are split_read.py's.
"""
from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from ..attribution import holders
from ..semantics.config import JobConfig
from .matching import WINDOW_ID
from .wording import fmt_ms


def with_windows(rows: DataFrame, time_col: str, cfg: JobConfig, windows: DataFrame) -> DataFrame:
    """Each row of `rows` (with `key` and `time_col`) joined with the windows of `windows` (WINDOW_ID) of its key
    that contain its time; sessions: that it would overlap ([t, t + gap) meets [start, end))."""
    w = cfg.window
    t = F.col(time_col)
    ids = windows.select(*WINDOW_ID).distinct()
    if w.type == "tumbling":
        start = t - F.pmod(t - F.lit(w.offset_ms), F.lit(w.size_ms))
        r = rows.withColumn("window_start_ms", start).withColumn("window_end_ms", start + F.lit(w.size_ms))
        return r.join(ids, WINDOW_ID)
    if w.type == "sliding":
        n = -(-w.size_ms // w.slide_ms)
        last = t - F.pmod(t - F.lit(w.offset_ms), F.lit(w.slide_ms))
        r = rows.withColumn("_k", F.explode(F.sequence(F.lit(0), F.lit(n - 1))))
        r = r.withColumn("window_start_ms", last - F.col("_k") * F.lit(w.slide_ms)).drop("_k")
        r = r.where(F.col("window_start_ms") + F.lit(w.size_ms) > t) \
            .withColumn("window_end_ms", F.col("window_start_ms") + F.lit(w.size_ms))
        return r.join(ids, WINDOW_ID)
    gap = w.gap_ms or 0
    ws = ids.select(F.col("key").alias("_wk"), "window_start_ms", "window_end_ms")
    cond = (rows.key == ws._wk) & (t < ws.window_end_ms) & (t + F.lit(gap) > ws.window_start_ms)
    return rows.join(ws, cond).drop("_wk")


def late_evidence(late: DataFrame, cfg: JobConfig, diff: DataFrame) -> DataFrame:
    j = with_windows(late.select("key", "time_ms", "split", "late_watermark_ms"), "time_ms", cfg, diff)
    return j.groupBy(*WINDOW_ID).agg(
        F.count(F.lit(1)).alias("replay_late_n"), F.min("late_watermark_ms").alias("replay_late_wm"),
        F.array_join(F.array_sort(F.collect_set("split")), ",").alias("replay_late_splits"))


def late_match_evidence(late_match: DataFrame, cfg: JobConfig, diff: DataFrame) -> DataFrame:
    one_side = late_match.where((F.col("replay_only") > 0) | (F.col("live_only") > 0))
    j = with_windows(one_side.select("key", "time_ms", "replay_only", "live_only", "late_watermark_ms"), "time_ms",
                     cfg, diff)
    return j.groupBy(*WINDOW_ID).agg(F.sum("replay_only").alias("late_replay_only_n"),
                                     F.sum("live_only").alias("late_live_only_n"))


def fired_by(watermarks: DataFrame, diff: DataFrame) -> DataFrame:
    h = holders(watermarks.select("scope", "split", "idle", "watermark_ms", "replay_time_ms"))
    first = diff.select(*WINDOW_ID, "replay_first_watermark_ms").where(F.col("replay_first_watermark_ms").isNotNull())
    j = first.join(h, first.replay_first_watermark_ms == h.W, "left")
    return j.select(*WINDOW_ID, F.col("holder").alias("held_by"), F.col("e_time").alias("replay_fire_time_ms"))


def idle_spans(watermarks: DataFrame) -> DataFrame:
    """(split, idle_from, idle_to): when each split was idle on the replay clock (idle_to null: to the end)."""
    s = watermarks.where(F.col("scope") == "split")
    order = Window.partitionBy("split").orderBy("replay_time_ms", F.col("watermark_ms").asc_nulls_first())
    s = s.withColumn("_next", F.lead("replay_time_ms").over(order)).withColumn(
        "_prev_idle", F.lag("idle").over(order))
    return s.where(F.col("idle") & ~F.coalesce(F.col("_prev_idle"), F.lit(False))).select(
        "split", F.col("replay_time_ms").alias("idle_from"), F.col("_next").alias("idle_to"))


def idle_evidence(spans: DataFrame, fired: DataFrame, cfg: JobConfig) -> DataFrame:
    """The splits that went idle in the idle timeout (plus three intervals) before the replay fired the window."""
    wm = cfg.watermark
    if not wm.periodic or not wm.idle_timeout_ms:
        return fired.select(*WINDOW_ID).limit(0).withColumn("idle_before", F.lit(None).cast("string"))
    reach = wm.idle_timeout_ms + 3 * wm.interval_ms
    bucket = max(reach, 60_000)
    f = fired.where(F.col("replay_fire_time_ms").isNotNull()).select(*WINDOW_ID, "replay_fire_time_ms")
    f = f.withColumn("_b", F.explode(F.array_distinct(F.array(
        F.floor((F.col("replay_fire_time_ms") - reach) / bucket), F.floor(F.col("replay_fire_time_ms") / bucket)))))
    s = spans.withColumn("_b", F.floor(F.col("idle_from") / bucket))
    j = f.join(s, "_b").where((F.col("idle_from") <= F.col("replay_fire_time_ms"))
                               & (F.col("idle_from") >= F.col("replay_fire_time_ms") - reach))
    text = F.concat(F.col("split"), F.lit(" at "), fmt_ms(F.col("idle_from")))
    return j.groupBy(*WINDOW_ID).agg(F.array_join(F.array_sort(F.collect_set(text)), ", ").alias("idle_before"))

