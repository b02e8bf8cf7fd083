"""The silence of the splits when the replay fired a window: the idle timeout's evidence.

Idleness is decided by silence on the arrival clock: a split with no row for longer than the idle timeout leaves
the minimum. Two idle timeouts T1 < T2 disagree exactly on the silences longer than T1 and not longer than T2, so
the windows fired at another watermark on each side should follow such a silence. For each window (with the replay
time of its first firing, evidence.fired_by), `silence_at_firing` gives the longest silence of any split at that
time: the one in progress (since the split's last row) or the one its last row ended, whichever is longer. One
ordered pass over the source's arrival times per split (split_read.read_source).
"""
from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from ..semantics.config import JobConfig
from .matching import WINDOW_ID
from .split_read import read_source


@dataclass(frozen=True)
class Silences:
    """Over the windows given: how many had a split silent at their firing, the range and the median of the
    silences, and the split most often silent."""
    windows: int
    shortest_ms: int
    median_ms: int
    longest_ms: int
    split: str
    split_windows: int


def silence_at_firing(spark: SparkSession, cfg: JobConfig, fired: DataFrame) -> DataFrame | None:
    """(WINDOW_ID, silent_split, silence_ms) for the windows of `fired` (WINDOW_ID, replay_fire_time_ms)."""
    rows = read_source(spark, cfg, ("split", "arrival"))
    if rows is None:
        return None
    marks = fired.where(F.col("replay_fire_time_ms").isNotNull()).select(*WINDOW_ID, "replay_fire_time_ms")
    splits = rows.select("split").distinct()
    arrivals = rows.select("split", F.col("arrival").alias("t"), F.lit(0).alias("mark"))
    at = marks.crossJoin(splits).select("split", F.col("replay_fire_time_ms").alias("t"), F.lit(1).alias("mark"),
                                        *WINDOW_ID)
    for c, kind in (("key", "string"), ("window_start_ms", "long"), ("window_end_ms", "long")):
        arrivals = arrivals.withColumn(c, F.lit(None).cast(kind))
    series = arrivals.unionByName(at)
    # Rows at the firing's time came before it (a tick follows the rows of its instant).
    order = Window.partitionBy("split").orderBy("t", "mark")
    # The split's previous row, skipping the firing times between (a lag would see a firing and lose the gap).
    before = order.rowsBetween(Window.unboundedPreceding, -1)
    prev_arrival = F.last(F.when(F.col("mark") == 0, F.col("t")), ignorenulls=True).over(before)
    series = series.withColumn("gap_before", F.when(F.col("mark") == 0, F.col("t") - prev_arrival))
    upto = order.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    series = series.withColumn("last_arrival", F.last(F.when(F.col("mark") == 0, F.col("t")), True).over(upto)) \
        .withColumn("last_gap", F.last("gap_before", True).over(upto))
    silence = F.greatest(F.col("t") - F.col("last_arrival"), F.coalesce(F.col("last_gap"), F.lit(0)))
    per_split = series.where((F.col("mark") == 1) & F.col("last_arrival").isNotNull()) \
        .select(*WINDOW_ID, "split", silence.alias("silence_ms"))
    return per_split.groupBy(*WINDOW_ID).agg(F.max_by("split", "silence_ms").alias("silent_split"),
                                             F.max("silence_ms").alias("silence_ms"))


def summary_frame(per_window: DataFrame) -> DataFrame:
    """The figures over all windows and the count per split (a rollup): a small frame to gather."""
    return per_window.rollup("silent_split").agg(
        F.grouping_id().alias("all"), F.count(F.lit(1)).alias("n"), F.min("silence_ms").alias("lo"),
        F.percentile_approx("silence_ms", 0.5).alias("mid"), F.max("silence_ms").alias("hi"))


def silences_from(rows: list[dict]) -> Silences | None:
    """The Silences of summary_frame's rows; None without a window."""
    total = next((r for r in rows if r["all"]), None)
    if total is None or not total["n"]:
        return None
    top = min((r for r in rows if not r["all"]), key=lambda r: (-r["n"], r["silent_split"]))
    return Silences(windows=int(total["n"]), shortest_ms=int(total["lo"]), median_ms=int(total["mid"]),
                    longest_ms=int(total["hi"]), split=top["silent_split"], split_windows=int(top["n"]))

