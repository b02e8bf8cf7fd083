"""Which split held the stream watermark: the attribution the why-report and the tuning grid share.

The stream watermark is the minimum over the active splits, so each value W it reached was published by the
split(s) whose own watermark was W at the instant the stream first reached it: those held the stream there. A
value reached while every split was idle (the stream jumped to the largest published value) has no holder
("all-idle jump"). A late row is attributed to the holder of its late watermark, if the stream reached that
value before the row arrived.
"""
from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

ALL_IDLE = "all-idle jump"


def holders(wm: DataFrame) -> DataFrame:
    """Per stream value W: the first time the non-idle stream reached it and the split(s) publishing W then."""
    stream = (wm.where((F.col("scope") == "stream") & ~F.col("idle") & F.col("watermark_ms").isNotNull())
              .groupBy(F.col("watermark_ms").alias("W")).agg(F.min("replay_time_ms").alias("e_time")))
    order = Window.partitionBy("split").orderBy("replay_time_ms", F.col("watermark_ms").asc_nulls_first())
    splits = (wm.where(F.col("scope") == "split")
              .withColumn("next_t", F.lead("replay_time_ms").over(order))
              .where(~F.col("idle")))
    cond = ((splits.watermark_ms == stream.W) & (splits.replay_time_ms <= stream.e_time)
            & (splits.next_t.isNull() | (splits.next_t > stream.e_time)))
    held = (stream.join(splits, cond, "left")
            .groupBy("W", "e_time").agg(F.array_join(F.sort_array(F.collect_set("split")), "+").alias("holder")))
    return held.withColumn("holder", F.when(F.col("holder") == "", F.lit(None)).otherwise(F.col("holder")))


def late_causes(late: DataFrame, holders: DataFrame, per_event: bool) -> DataFrame:
    j = late.join(holders, late.late_watermark_ms == holders.W, "left")
    # A tick at the row's arrival comes after the row; with per-event emission a change at the same arrival
    # time can come from an earlier row.
    before = (F.col("e_time") <= F.col("arrival_ms")) if per_event else (F.col("e_time") < F.col("arrival_ms"))
    cause = F.when(F.col("holder").isNotNull() & before, F.col("holder")).otherwise(F.lit(ALL_IDLE))
    return j.groupBy("split", cause.alias("cause")).agg(F.count(F.lit(1)).alias("rows"))
