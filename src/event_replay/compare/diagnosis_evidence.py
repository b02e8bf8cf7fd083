"""Gathering what the cause tests of diagnosis.py read, in Spark, from one comparison: the classified windows (all
of them, equal ones too: their fire watermarks are evidence), the explained ones, the live firings, the replay's
watermarks and the late rows matched. A handful of small aggregates reach the driver."""
from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ..attribution import ALL_IDLE
from ..semantics.config import JobConfig
from .classify import DIFFERENCES
from .diagnosis import Evidence
from .evidence import fired_by
from .silences import silence_at_firing, summarise
from .watermark_shift import ShiftFigures, shift_figures


def _refired(windows: DataFrame) -> tuple[int, int]:
    both = F.col("in_replay") & F.col("in_live")
    r = windows.agg(F.sum((both & (F.col("replay_firings") > F.col("live_versions"))).cast("long")).alias("rr"),
                    F.sum((both & (F.col("replay_firings") < F.col("live_versions"))).cast("long")).alias("rl")
                    ).first()
    return int(r["rr"] or 0), int(r["rl"] or 0)


def _late(late: DataFrame | None, ev: DataFrame | None, cfg: JobConfig) -> tuple[int, int, int | None]:
    """Rows late on one side only: from the live late output matched (with the largest lateness of the rows late
    in the replay only, one job), else what the windows' evidence says."""
    if late is not None:
        r = late.agg(F.sum("replay_only").alias("ro"), F.sum("live_only").alias("lo"),
                     _accepted_lateness(cfg).alias("acc")).first()
        return int(r["ro"] or 0), int(r["lo"] or 0), (int(r["acc"]) if r["acc"] is not None else None)
    if ev is not None:
        r = ev.agg(F.sum("late_replay_only_n").alias("ro"), F.sum("late_live_only_n").alias("lo")).first()
        return int(r["ro"] or 0), int(r["lo"] or 0), None
    return 0, 0, None


def _accepted_lateness(cfg: JobConfig):
    """The largest lateness (watermark at arrival - (window end - 1)) of the rows late in the replay only: the
    live job accepted them, so its allowed lateness is above it when the watermarks agree. Tumbling and sliding
    windows (a row is late when its last window is); null for the others."""
    w = cfg.window
    if w.type not in ("tumbling", "sliding"):
        return F.lit(None).cast("long")
    step = w.size_ms if w.type == "tumbling" else w.slide_ms
    t = F.col("time_ms")
    end = t - F.pmod(t - F.lit(w.offset_ms), F.lit(step)) + F.lit(w.size_ms)
    return F.max(F.when(F.col("replay_only") > 0, F.col("late_watermark_ms") - (end - 1)))


def _differing(ev: DataFrame | None) -> tuple[int, int]:
    if ev is None:
        return 0, 0
    diff = F.col("class").isin(*DIFFERENCES)
    near = diff & (F.col("idle_before").isNotNull() | (F.col("held_by") == ALL_IDLE))
    r = ev.agg(F.sum(diff.cast("long")).alias("d"), F.sum(near.cast("long")).alias("n")).first()
    return int(r["d"] or 0), int(r["n"] or 0)


def _silences(spark: SparkSession, cfg: JobConfig, shift: ShiftFigures, watermarks: DataFrame):
    other = shift.other_first
    if other.isEmpty():
        return None
    per_window = silence_at_firing(spark, cfg, fired_by(watermarks, other))
    return summarise(per_window) if per_window is not None else None


def gather(spark: SparkSession, cfg: JobConfig, windows: DataFrame, ev: DataFrame | None, live: DataFrame,
           watermarks: DataFrame, late: DataFrame | None, has: frozenset[str], hints: list[dict[str, Any]],
           use_source: bool = True) -> Evidence:
    """`ev`: the explained windows (None when every window agrees); `hints`: hints.py's (a split never read)."""
    shift = shift_figures(windows, live, watermarks, cfg) if "fire_watermark" in has else None
    silences = _silences(spark, cfg, shift, watermarks) if shift is not None and use_source else None
    rr, rl = _refired(windows)
    ro, lo, accepted = _late(late, ev, cfg)
    differing, near = _differing(ev)
    split = next((h.get("split") for h in hints if h["kind"] == "split_not_read"), None)
    return Evidence(shift=shift, silences=silences, late_replay_only=ro, late_live_only=lo, refired_replay=rr,
                    refired_live=rl, differing=differing, near_idle=near, split_not_read=split,
                    accepted_lateness_ms=accepted)
