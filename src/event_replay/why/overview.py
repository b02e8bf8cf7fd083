"""Per-partition figures of the why-report, so that a long history reads partition by partition.

For each partition of the replay clock (a UTC day or hour: the outputs' own partitioning, days when unpartitioned):
- `idle_share`: the share of the partition's time its splits were idle, averaged over the splits;
- `lag_p50_ms`, `lag_p90_ms`, `lag_max_ms`: the watermark lag (timelines.lag_segments), time-weighted, over the
  part of the partition where it is defined;
- `held_most`, `held_most_share`: the split that held the stream watermark longest in the partition, and the share
  of the partition's time it did (ties: the first split by name).

The idle and held intervals and the lag segments are cut at the partitions' boundaries by one expression (an
interval explodes into the partitions it overlaps), so the figures of every partition come back with the report's
other figures in one Spark job, whatever the number of partitions; a row per partition reaches the driver. Milliseconds are 64-bit
throughout: a partition index times a day in ms overflows 32 bits.
"""
from __future__ import annotations

import datetime as dt

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from .timelines import HELD, IDLE

DAY_MS, HOUR_MS = 86_400_000, 3_600_000
LAG_QUANTILES = (0.5, 0.9)


def cut_by_partition(intervals: DataFrame, length_ms: int) -> DataFrame:
    """`intervals` with half-open [a, z) columns: one row per (interval, partition it overlaps), its other columns,
    `p` (the partition's index: start // length_ms) and `ms` (the overlap's length, > 0)."""
    keep = [c for c in intervals.columns if c not in ("a", "z")]
    length = F.lit(length_ms).cast("long")
    first = F.floor(F.col("a") / length).cast("long")
    last = F.floor((F.col("z") - 1) / length).cast("long")
    cut = (intervals.where(F.col("z") > F.col("a"))
           .select(*keep, "a", "z", F.explode(F.sequence(first, last)).alias("p")))
    start = F.col("p") * length
    ms = F.least(F.col("z"), start + length) - F.greatest(F.col("a"), start)
    return cut.select(*keep, "p", ms.alias("ms")).where(F.col("ms") > 0)


def partition_label(p: int, length_ms: int) -> str:
    t = dt.datetime.fromtimestamp(p * length_ms / 1000, dt.timezone.utc)
    return t.strftime("%Y-%m-%dT%H" if length_ms == HOUR_MS else "%Y-%m-%d")


def partition_figure_frame(intervals: DataFrame, segments: DataFrame | None, n_splits: int, length_ms: int
                           ) -> DataFrame:
    """A row per partition the intervals or the lag touch, lazily: `p` and the module doc's figures (partition_
    figures reads them)."""
    shares = (cut_by_partition(intervals, length_ms).groupBy("p", "kind", "series").agg(F.sum("ms").alias("ms")))
    idle = (shares.where((F.col("kind") == IDLE) & (F.col("series") != "stream")).groupBy("p")
            .agg((F.sum("ms") / F.lit(float(max(1, n_splits) * length_ms))).alias("idle_share")))
    order = Window.partitionBy("p").orderBy(F.col("ms").desc(), F.col("series"))
    held = (shares.where(F.col("kind") == HELD).withColumn("_r", F.row_number().over(order)).where(F.col("_r") == 1)
            .select("p", F.col("series").alias("held_most"),
                    (F.col("ms") / F.lit(float(length_ms))).alias("held_most_share")))
    figures = idle.join(held, "p", "full_outer")
    if segments is not None:
        cut = cut_by_partition(segments.select("lag", F.col("t").alias("a"), (F.col("t") + F.col("dur")).alias("z")),
                               length_ms)
        lag = cut.groupBy("p").agg(F.percentile(F.col("lag"), list(LAG_QUANTILES), F.col("ms")).alias("q"),
                                   F.max("lag").alias("lag_max_ms"))
        figures = figures.join(lag, "p", "full_outer")
    return figures


def partition_figures(rows: list[dict], length_ms: int) -> dict[str, dict]:
    """{partition label: figures (module doc)} from partition_figure_frame's rows."""
    found = {}
    for r in rows:
        q = r.get("q")
        found[partition_label(r["p"], length_ms)] = {
            "idle_share": min(1.0, r.get("idle_share") or 0.0), "held_most": r.get("held_most"),
            "held_most_share": min(1.0, r["held_most_share"]) if r.get("held_most_share") is not None else None,
            "lag_p50_ms": float(q[0]) if q else None, "lag_p90_ms": float(q[1]) if q else None,
            "lag_max_ms": int(r["lag_max_ms"]) if q and r.get("lag_max_ms") is not None else None}
    return found


def with_figures(partitions: list[dict], figures: dict[str, dict]) -> list[dict]:
    """The report's partition rows (counts and firings) with their figures; an unpartitioned output's single row
    has none."""
    empty = {"idle_share": None, "held_most": None, "held_most_share": None, "lag_p50_ms": None, "lag_p90_ms": None,
             "lag_max_ms": None}
    return [{**p, **empty, **figures.get(p.get("partition") or "", {})} for p in partitions]
