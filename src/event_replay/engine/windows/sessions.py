"""Session windows in Spark: the sequential pass (`session_pass.py`) over buckets of keys, then one join that
brings each element's and late row's input columns (the pass only names rows by split and offset)."""
from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ...semantics.config import JobConfig
from .session_pass import SESSION_OUT, session_pass

BUCKETS_PER_CORE = 4  # keys are walked in buckets; any number gives the same result


def session_elements(rows: DataFrame, cfg: JobConfig, input_cols: list[str]) -> tuple[DataFrame, DataFrame]:
    """(elements, late rows) of the session windows of `rows` (which carry wm_before)."""
    buckets = BUCKETS_PER_CORE * rows.sparkSession.sparkContext.defaultParallelism
    pass_out = (rows.select("key", "split", "offset", "arrival_time", "event_time", "wm_before")
                .groupBy(F.pmod(F.xxhash64("key"), F.lit(buckets)).alias("__bucket"))
                .applyInPandas(session_pass(cfg.window.gap_ms, cfg.window.allowed_lateness_ms), SESSION_OUT))
    joined = pass_out.join(rows.select(*input_cols), ["split", "offset"])
    late = joined.where(F.col("kind") == "l").select(*input_cols, F.col("fire_watermark").alias("late_watermark"))
    elems = joined.where(F.col("kind") == "m").drop("kind")
    return elems, late
