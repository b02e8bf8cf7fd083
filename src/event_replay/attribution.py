"""Which split held the stream watermark: the attribution the why-report and the tuning grid share.

The stream watermark is the minimum over the active splits, so each value W it reached was published by the
split(s) whose own watermark was W at the instant the stream first reached it: those held the stream there. A
value reached while every split was idle (the stream jumped to the largest published value) has no holder
("all-idle jump"). A late row is attributed to the holder of its late watermark, if the stream reached that
value before the row arrived.

`by` (columns of both inputs, e.g. a what-if grid's `variant`): several streams side by side, each attributed
on its own rows only, in the same plan.
"""
from __future__ import annotations

from typing import Sequence

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

ALL_IDLE = "all-idle jump"


def holders(wm: DataFrame, by: Sequence[str] = ()) -> DataFrame:
    """Per stream value W (and `by`): the first time the non-idle stream reached it and the split(s) publishing W
    then."""
    stream = (wm.where((F.col("scope") == "stream") & ~F.col("idle") & F.col("watermark_ms").isNotNull())
              .groupBy(*by, F.col("watermark_ms").alias("W")).agg(F.min("replay_time_ms").alias("e_time")))
    order = Window.partitionBy(*by, "split").orderBy("replay_time_ms", F.col("watermark_ms").asc_nulls_first())
    splits = (wm.where(F.col("scope") == "split")
              .withColumn("next_t", F.lead("replay_time_ms").over(order))
              .where(~F.col("idle")).select(*[F.col(c).alias(_theirs(c)) for c in by], "split", "watermark_ms",
                                           "replay_time_ms", "next_t"))
    cond = [F.col(c) == F.col(_theirs(c)) for c in by] + [
        (F.col("watermark_ms") == F.col("W")) & (F.col("replay_time_ms") <= F.col("e_time"))
        & (F.col("next_t").isNull() | (F.col("next_t") > F.col("e_time")))]
    held = (stream.join(splits, cond, "left")
            .groupBy(*by, "W", "e_time").agg(F.array_join(F.sort_array(F.collect_set("split")), "+").alias("holder")))
    return held.withColumn("holder", F.when(F.col("holder") == "", F.lit(None)).otherwise(F.col("holder")))


def _theirs(c: str) -> str:
    """A `by` column of the right side of a join, renamed apart from the left side's."""
    return f"_right_{c}"


def late_causes(late: DataFrame, holders: DataFrame, per_event: bool, by: Sequence[str] = ()) -> DataFrame:
    """(by..., split, cause, rows): the late rows counted per own split and cause (module doc)."""
    held = holders.select(*[F.col(c).alias(_theirs(c)) for c in by], "W", "e_time", "holder")
    j = late.join(held, [F.col(c) == F.col(_theirs(c)) for c in by] + [F.col("late_watermark_ms") == F.col("W")],
                  "left")
    # A tick at the row's arrival comes after the row; with per-event emission a change at the same arrival
    # time can come from an earlier row.
    before = (F.col("e_time") <= F.col("arrival_ms")) if per_event else (F.col("e_time") < F.col("arrival_ms"))
    cause = F.when(F.col("holder").isNotNull() & before, F.col("holder")).otherwise(F.lit(ALL_IDLE))
    return j.groupBy(*by, "split", cause.alias("cause")).agg(F.count(F.lit(1)).alias("rows"))
