"""Classifying every compared window and late row, and the counts per partition.

Windows (one class each):
- `equal`: on both sides, every compared aggregate equal under its rule (and, when the sink keeps updates, every
  firing);
- `duplicate`: equal, but the live output holds the window more than once (copies of one firing): reported as a
  duplicate, not as a difference (an at-least-once sink after a restart);
- `value_differs`: on both sides, some aggregate (or, when the sink keeps updates, the firings) differ;
- `replay_only`, `live_only`: the window is on one side only.
`differing` lists the aggregates that differ; `timing` says `other_watermark` when both fired the (last) firing
with equal values but the live sink's fire watermark is another one (informational: not a difference).

Late rows: `matched`, `replay_only` (late in the replay, counted by the live job), `live_only` (late in the live
job, counted by the replay): the fourth kind of difference.

A window belongs to the replay's partition if it is in the replay, else to the live's (its `dt`) or the day of its
max timestamp. Agreement = (equal + duplicate) / windows compared (the windows on either side), in percent.
"""
from __future__ import annotations

from typing import Mapping, Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ..spark_jobs import gather
from .replay_side import Scope, time_label

CLASSES = ("equal", "duplicate", "value_differs", "replay_only", "live_only")
DIFFERENCES = ("value_differs", "replay_only", "live_only")
LATE_DIFFERENCES = ("late_replay_only", "late_live_only")


def window_class() -> Column:
    return (F.when(~F.col("in_live"), F.lit("replay_only"))
            .when(~F.col("in_replay"), F.lit("live_only"))
            .when(~F.col("values_equal"), F.lit("value_differs"))
            .when(F.col("live_copies") > 0, F.lit("duplicate"))
            .otherwise(F.lit("equal")))


def classify_windows(matched: DataFrame, aggs: Sequence[str], scope: Scope, keeps_updates: bool) -> DataFrame:
    both = F.col("in_replay") & F.col("in_live")
    differing = F.concat_ws(",", *[F.when(both & ~F.col(f"eq_{a}"), F.lit(a)) for a in aggs],
                            *([F.when(both & (F.col("replay_firings") != F.col("live_versions")), F.lit("firings"))]
                              if keeps_updates else []))
    timing = F.when(both & F.col("values_equal") & F.col("live_fire_watermark_ms").isNotNull()
                    & ~F.col("live_fire_watermark_ms").eqNullSafe(F.col("replay_fire_watermark_ms")),
                    F.lit("other_watermark"))
    partition = F.coalesce(F.col("replay_partition"), F.col("live_partition"),
                           time_label(F.col("window_end_ms") - 1, scope.hourly))
    out = matched.withColumn("class", window_class()).withColumn("differing", F.nullif(differing, F.lit(""))) \
        .withColumn("timing", timing).withColumn("partition", partition)
    return out.where(scope.contains(F.col("partition")))


def classify_late(late: DataFrame, scope: Scope) -> DataFrame:
    cls = (F.when(F.col("replay_only") > 0, F.lit("late_replay_only"))
           .when(F.col("live_only") > 0, F.lit("late_live_only")).otherwise(F.lit("matched")))
    partition = F.coalesce(F.col("replay_partition"), time_label(F.col("time_ms"), scope.hourly))
    return late.withColumn("class", cls).withColumn("partition", partition).where(scope.contains(F.col("partition")))


def partition_counts(windows: DataFrame, late: DataFrame | None) -> list[dict]:
    """Per partition: windows compared, per class, agreement %, late rows matched / one side only, timing notes
    (in one Spark job; partition_count_frames and partition_rows: gathered with other figures)."""
    return partition_rows(gather(partition_count_frames(windows, late)), late is not None)


def partition_count_frames(windows: DataFrame, late: DataFrame | None, extra: Sequence[Column] = ()
                           ) -> dict[str, DataFrame]:
    """partition_counts' small frames, to gather; `extra`: more sums per partition over the windows, computed in
    the same pass (the caller takes them out of the rows before partition_rows)."""
    counts = windows.groupBy("partition").agg(*extra,
        F.count(F.lit(1)).alias("windows"),
        *[F.sum((F.col("class") == c).cast("long")).alias(c) for c in CLASSES],
        F.sum(F.col("live_copies")).alias("live_copies"),
        F.sum((F.col("timing") == "other_watermark").cast("long")).alias("other_watermark"),
        F.sum("firings_compared").alias("firings_compared"), F.sum("firings_equal").alias("firings_equal"),
        F.sum("replay_firings").alias("replay_firings"), F.sum("live_versions").alias("live_firings"))
    frames = {"windows": counts}
    if late is not None:
        frames["late"] = late.groupBy("partition").agg(F.sum("matched").alias("late_matched"),
                                                       F.sum("replay_only").alias("late_replay_only"),
                                                       F.sum("live_only").alias("late_live_only"),
                                                       F.sum("live_duplicates").alias("late_live_duplicates"))
    return frames


def partition_rows(found: Mapping[str, list[dict]], has_late: bool) -> list[dict]:
    """partition_counts' rows from the gathered rows of partition_count_frames."""
    per = {r["partition"]: {k: (v if k == "partition" else int(v or 0)) for k, v in r.items()}
           for r in found["windows"]}
    for r in found.get("late", []):
        row = per.setdefault(r["partition"], {"partition": r["partition"], "windows": 0, **{c: 0 for c in CLASSES}})
        row.update({k: int(r[k] or 0) for k in ("late_matched", "late_replay_only", "late_live_only",
                                                "late_live_duplicates")})
    rows = []
    for p in sorted(per, key=str):
        r = {"partition": p, **{c: 0 for c in CLASSES}, "windows": 0, **per[p]}
        r["differing"] = sum(r[c] for c in DIFFERENCES)
        r["agreeing"] = r["equal"] + r["duplicate"]
        # Unrounded: 100 only when every window agrees (rounded, one window in 10^7 differing read as 100).
        r["agreement_pct"] = 100.0 * r["agreeing"] / r["windows"] if r["windows"] else 100.0
        if has_late:
            for k in ("late_matched", "late_replay_only", "late_live_only", "late_live_duplicates"):
                r.setdefault(k, 0)
        rows.append(r)
    return rows


def totals(rows: Sequence[dict]) -> dict:
    """The counts summed over the partitions (not their percentages, nor the threshold), agreement % of the sums."""
    keys = [k for k in (rows[0] if rows else {}) if k not in ("partition", "agreement_pct", "min_agreement_pct")]
    t = {k: sum(int(r.get(k) or 0) for r in rows) for k in keys}
    for c in (*CLASSES, "windows", "differing", "agreeing"):
        t.setdefault(c, 0)
    t["agreement_pct"] = 100.0 * t["agreeing"] / t["windows"] if t["windows"] else 100.0
    return t
