"""Session windows in Spark: one sequential pass per key, in the engine's Spark extension.

Sessions merge, so a row's windows depend on every earlier row of its key: they need a walk of each key's rows in
replay order (Flink's MergingWindowSet, docs/semantics.md "Windows"). The rows (with `wm_before`) are hash-
partitioned by key into a fixed number of buckets and sorted by (key, replay order) within them; the walk
(jvm/src/io/eventreplay/spark/SessionWalk.java, KeyWalk.java) then takes each key in turn, holding only that
key's rows, and emits per fired window one element per row it holds (the window's id, bounds, position and the
firing made at that size) and one record per late row, each with its row's input columns. The pass is
materialised once: the firings and the late rows both read it. O(n log n): the sort, a timer heap and a sorted
list of live windows per key. Any number of buckets gives the same result (keys are walked independently).
"""
from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ...extension import required_class
from ...semantics.config import JobConfig
from ...semantics.model import FIRE_LATE_ROW
from ..elements import ORDER, PENDING

WID_SPLIT, WID_OFFSET = "__wid_split", "__wid_offset"  # a session window's id: the row that created it
BUCKETS_PER_CORE = 4  # keys are walked in buckets; any number gives the same result


def session_elements(rows: DataFrame, cfg: JobConfig, input_cols: list[str]) -> tuple[DataFrame, DataFrame]:
    """(elements, late rows) of the session windows of `rows` (which carry wm_before)."""
    spark = rows.sparkSession
    walk = required_class(spark, "SessionWalk", "session windows")
    buckets = BUCKETS_PER_CORE * spark.sparkContext.defaultParallelism
    ordered = (rows.select(*input_cols, "wm_before").repartition(buckets, "key")
               .sortWithinPartitions("key", *ORDER))
    walked = DataFrame(walk.walk(ordered._jdf, cfg.window.gap_ms, cfg.window.allowed_lateness_ms, PENDING,
                                 FIRE_LATE_ROW), spark).localCheckpoint(eager=True)
    late = walked.where(F.col("kind") == "l").select(*input_cols, F.col("fire_watermark").alias("late_watermark"))
    elems = walked.where(F.col("kind") == "m").drop("kind", "wm_before")
    return elems, late
