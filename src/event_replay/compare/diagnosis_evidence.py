"""Gathering what the cause tests of diagnosis.py read, in Spark, from one comparison: the classified windows (all
of them, equal ones too: their fire watermarks are evidence), the explained ones, the replay's watermarks and the
late rows matched. A handful of small aggregates reach the driver, gathered with the comparison's other figures in
one Spark job (compare/run.py)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from ..attribution import ALL_IDLE
from ..semantics.config import JobConfig
from .classify import DIFFERENCES
from .diagnosis import Evidence
from .evidence import fired_by
from .silences import silence_at_firing, silences_from, summary_frame
from .watermark_shift import shift_frames, shift_from


def refired_sums() -> dict[str, Column]:
    """The windows both sides fired more often on the replay's side (rr) and on the live's (rl): sums over the
    classified windows, computed in the comparison's counts pass (evidence_frames' `refired`)."""
    both = F.col("in_replay") & F.col("in_live")
    return {"rr": F.sum((both & (F.col("replay_firings") > F.col("live_versions"))).cast("long")).alias("rr"),
            "rl": F.sum((both & (F.col("replay_firings") < F.col("live_versions"))).cast("long")).alias("rl")}


def _late(late: DataFrame | None, ev: DataFrame | None, cfg: JobConfig) -> DataFrame | None:
    """Rows late on one side only: from the live late output matched (with the largest lateness of the rows late
    in the replay only), else what the windows' evidence says; None: neither."""
    if late is not None:
        return late.agg(F.sum("replay_only").alias("ro"), F.sum("live_only").alias("lo"),
                        _accepted_lateness(cfg).alias("acc"))
    if ev is not None:
        return ev.agg(F.sum("late_replay_only_n").alias("ro"), F.sum("late_live_only_n").alias("lo"),
                      F.lit(None).cast("long").alias("acc"))
    return None


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


def _differing(ev: DataFrame | None) -> DataFrame | None:
    if ev is None:
        return None
    diff = F.col("class").isin(*DIFFERENCES)
    near = diff & (F.col("idle_before").isNotNull() | (F.col("held_by") == ALL_IDLE))
    return ev.agg(F.sum(diff.cast("long")).alias("d"), F.sum(near.cast("long")).alias("n"))


def _n(rows: list[dict[str, Any]] | None, name: str) -> int:
    return int((rows[0][name] if rows else 0) or 0)


@dataclass
class EvidenceFrames:
    frames: dict[str, DataFrame]  # small frames, to gather (with others) in one Spark job
    firsts: DataFrame | None  # the windows both fired, with their first fire watermarks (with live fire watermarks)
    refired: Mapping[str, Any]  # refired_sums' row


def evidence_frames(spark: SparkSession, cfg: JobConfig, windows: DataFrame, ev: DataFrame | None,
                    watermarks: DataFrame, late: DataFrame | None, has: frozenset[str], refired: Mapping[str, Any],
                    use_source: bool = True) -> EvidenceFrames:
    """The evidence's small frames, not yet collected. `ev`: the explained windows (None when every window agrees);
    `has`: the live output's optional columns; `refired`: refired_sums' row."""
    frames: dict[str, DataFrame] = {}
    for name, frame in (("late", _late(late, ev, cfg)), ("differing", _differing(ev))):
        if frame is not None:
            frames[name] = frame
    firsts = None
    if "fire_watermark" in has:
        shift, firsts = shift_frames(windows, watermarks, cfg)
        frames.update(shift)
        # the silences at the replay's firing of the windows first fired at another watermark (none: no rows)
        other = firsts.where(F.col("replay_first_watermark_ms") != F.col("live_first_watermark_ms"))
        per_window = silence_at_firing(spark, cfg, fired_by(watermarks, other)) if use_source else None
        if per_window is not None:
            frames["silences"] = summary_frame(per_window)
    return EvidenceFrames(frames, firsts, refired)


def evidence_from(found: Mapping[str, list[dict[str, Any]]], frames: EvidenceFrames, hints: list[dict[str, Any]]
                  ) -> Evidence:
    """The Evidence from the gathered rows of evidence_frames; `hints`: hints.py's (a split never read)."""
    shift = shift_from(found, frames.firsts) if frames.firsts is not None else None
    acc = found["late"][0]["acc"] if found.get("late") else None
    split = next((h.get("split") for h in hints if h["kind"] == "split_not_read"), None)
    refired = [frames.refired]
    return Evidence(shift=shift, silences=silences_from(found["silences"]) if "silences" in found else None,
                    late_replay_only=_n(found.get("late"), "ro"), late_live_only=_n(found.get("late"), "lo"),
                    refired_replay=_n(refired, "rr"), refired_live=_n(refired, "rl"),
                    differing=_n(found.get("differing"), "d"), near_idle=_n(found.get("differing"), "n"),
                    split_not_read=split, accepted_lateness_ms=int(acc) if acc is not None else None)
