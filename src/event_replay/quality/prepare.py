"""The batches the suites run on, built from a replay's outputs with Spark (no per-row data reaches the driver).

Every time becomes an epoch-ms long (`*_ms`: the unit of SEMANTICS, and exact where the writer could not give a
timestamp: it keeps `watermark_ms`), and the config's parameters become `cfg_*` literal columns, so the saved suites
are the same for every job. The accounting batch is one row: counts/ next to the sizes of the other outputs.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..history.state_files import MANIFEST
from ..io.commit import recover
from ..io.fs import fs_for
from ..io.parquet_footer import read_parquet
from ..io.partition_folders import folder_of, partitions_present
from ..layout import DATASETS, state_dir
from ..semantics.config import JobConfig
from ..semantics.durations import POS_INF
from ..spark_jobs import session_conf

_COUNT_STAR = re.compile(r"^\s*count\s*\(\s*(\*|1)\s*\)\s*$", re.IGNORECASE)


class OutputsMissing(FileNotFoundError):
    pass


def count_star_column(cfg: JobConfig) -> str | None:
    """The aggregate column that counts the rows a window holds, if the config has one."""
    for name, expr in cfg.aggregations.items():
        if _COUNT_STAR.match(expr):
            return name
    return None


def to_ms(col: Column, dtype: T.DataType) -> Column:
    if isinstance(dtype, (T.TimestampType, T.TimestampNTZType)):
        return F.unix_millis(col.cast("timestamp"))
    if isinstance(dtype, T.StringType):
        s = F.trim(col)
        return F.coalesce(s.try_cast("long"), F.unix_millis(s.try_cast("timestamp")))
    return col.cast("long")


def _ms(df: DataFrame, name: str) -> Column:
    return to_ms(F.col(f"`{name}`"), df.schema[name].dataType)


def read_outputs(spark: SparkSession, output_path: str, partition: str | None = None) -> dict[str, DataFrame]:
    """Every output dataset under `output_path`; with `partition` (a day or hour id) only that partition's folder
    of each, its partition columns kept."""
    root = output_path.rstrip("/")
    recover(root, spark)  # a run killed after its commit point: read its outputs whole, never half-renamed
    sub = f"/{folder_of(partition)}" if partition else ""
    missing = [d for d in DATASETS if not Path(f"{root}/{d}{sub}").exists()] if "://" not in root else []
    if missing:
        raise OutputsMissing(f"{root}: missing output datasets {', '.join(missing)}"
                             + (f" of partition {partition}" if partition else ""))
    with _listed_on_driver(spark, local="://" not in root or root.startswith("file:")):
        return {d: read_parquet(spark, f"{root}/{d}{sub}", base_path=f"{root}/{d}") for d in DATASETS}


# Spark lists a dataset with more than 32 partition folders in a Spark job of its own, one per dataset read: on a
# local disk the driver lists a year of day folders in milliseconds, the job takes seconds. Object stores keep
# Spark's parallel listing.
_DISCOVERY = "spark.sql.sources.parallelPartitionDiscovery.threshold"


def _listed_on_driver(spark: SparkSession, local: bool):
    return session_conf(spark, {_DISCOVERY: str(2**31 - 1)} if local else {})


def _cfg_columns(cfg: JobConfig) -> list[Column]:
    w = cfg.window
    size = w.size_ms or 0
    slide = (w.slide_ms if w.type == "sliding" else w.size_ms) or 1
    return [F.lit(w.type).alias("cfg_window_type"), F.lit(size).cast("long").alias("cfg_size_ms"),
            F.lit(slide).cast("long").alias("cfg_slide_ms"), F.lit(w.offset_ms).cast("long").alias("cfg_offset_ms"),
            F.lit(w.gap_ms or 0).cast("long").alias("cfg_gap_ms"),
            F.lit(w.allowed_lateness_ms).cast("long").alias("cfg_allowed_lateness_ms"),
            F.lit(cfg.replay.end_of_input).alias("cfg_end_of_input"),
            F.lit(cfg.having is not None).alias("cfg_having")]  # HAVING drops firings, keeping their indexes


# A watermark beyond the timestamp range is written as null (io.output.ms_to_timestamp). Only +inf can be behind a
# null on a non-flush firing or a late row: the stream reaches +inf when every split is idle but a side input
# (+inf, never idle) remains. Read it back as +inf; a writer-provided exact `*_ms` column wins.
def _watermark_ms(df: DataFrame, name: str, present: Column) -> Column:
    if f"{name}_ms" in df.columns:
        return F.col(f"{name}_ms").cast("long")
    return F.when(F.col(name).isNull() & present, F.lit(POS_INF)).otherwise(_ms(df, name))


def windows_batch(windows: DataFrame, cfg: JobConfig) -> DataFrame:
    held = count_star_column(cfg)
    return windows.select(
        "key", "window_start", "window_end", "fire_index", "fire_watermark", "fire_reason",
        _ms(windows, "window_start").alias("window_start_ms"), _ms(windows, "window_end").alias("window_end_ms"),
        _watermark_ms(windows, "fire_watermark", F.col("fire_reason") == "watermark").alias("fire_watermark_ms"),
        (F.col(f"`{held}`").cast("long") if held and held in windows.columns else F.lit(None).cast("long"))
        .alias("held_rows"),
        *_cfg_columns(cfg))


def watermarks_batch(watermarks: DataFrame) -> DataFrame:
    # The writer keeps the exact long next to the timestamp (a -inf/+inf watermark has no timestamp).
    wm = F.col("watermark_ms").cast("long") if "watermark_ms" in watermarks.columns else _ms(watermarks, "watermark")
    rt = (F.col("replay_time_ms").cast("long") if "replay_time_ms" in watermarks.columns
          else _ms(watermarks, "replay_time"))
    return watermarks.select("replay_time", "scope", "split", "watermark", "idle",
                             rt.alias("replay_time_ms"), wm.alias("watermark_ms"))


def late_events_batch(late: DataFrame, cfg: JobConfig) -> DataFrame:
    cols = cfg.source.columns
    # The time the windows read: event time, or the arrival time for ingestion/processing time (SEMANTICS intro).
    time_col = cols["event_time"] if cfg.window.time == "event" else cols["arrival_time"]
    return late.select(
        F.col(f"`{cols['split']}`").cast("string").alias("split"), F.col(f"`{cols['offset']}`").alias("offset"),
        (F.lit(None).cast("string") if cols["key"] is None else F.col(f"`{cols['key']}`")).alias("key"),
        _ms(late, cols["arrival_time"]).alias("arrival_ms"), _ms(late, time_col).alias("time_ms"),
        _watermark_ms(late, "late_watermark", F.lit(True)).alias("late_watermark_ms"), *_cfg_columns(cfg))


def windows_per_row(cfg: JobConfig) -> int:
    w = cfg.window
    return math.ceil(w.size_ms / w.slide_ms) if w.type == "sliding" else 1


def last_firings(windows: DataFrame, cfg: JobConfig) -> tuple[DataFrame, DataFrame] | None:
    """The count(*) of the last firing of every window, and of those not contained in another window of their key
    (sessions grow by merging: a swallowed window's rows are in the covering one; a cumulate window's rows are in
    the longer windows of its start); None without a count(*)."""
    held = count_star_column(cfg)
    if not held or held not in windows.columns:
        return None
    wb = windows_batch(windows, cfg)
    last = (wb.groupBy("key", "window_start_ms", "window_end_ms")
            .agg(F.max_by("held_rows", "fire_index").alias("held")))
    every = last
    if cfg.window.type in ("session", "cumulate"):
        o = last.select(F.col("key").alias("o_key"), F.col("window_start_ms").alias("o_start"),
                        F.col("window_end_ms").alias("o_end"))
        inside = (F.col("key").eqNullSafe(F.col("o_key")) & (F.col("o_start") <= F.col("window_start_ms"))
                  & (F.col("o_end") >= F.col("window_end_ms"))
                  & ((F.col("o_start") < F.col("window_start_ms")) | (F.col("o_end") > F.col("window_end_ms"))))
        last = last.join(o, inside, "left_anti")
    return every, last


PARTITION_COLUMNS = ("dt", "hour")  # what Spark's partition discovery adds for `replay run --partition` outputs


def partition_columns(df: DataFrame) -> list[str]:
    return [c for c in PARTITION_COLUMNS if c in df.columns]


def _partition_id(row, parts: list[str]) -> str:
    return str(row["dt"]) + (f"T{int(row['hour']):02d}" if "hour" in parts else "")


def partition_ids(counts: DataFrame) -> list[str]:
    """The partitions a `dt=` partitioned history holds, in order (counts/ has a row per partition: a small
    read, a Spark job); [] for the output of one run. `listed_partition_ids` lists them without a job."""
    parts = partition_columns(counts)
    if not parts:
        return []
    return [_partition_id(r, parts) for r in counts.select(*parts).distinct().orderBy(*parts).collect()]


def listed_partition_ids(spark: SparkSession, output_path: str, counts: DataFrame) -> list[str]:
    """partition_ids from the folders of counts/ (the driver lists them, as the read did: no Spark job)."""
    parts = partition_columns(counts)
    if not parts:
        return []
    root = f"{output_path.rstrip('/')}/counts"
    return partitions_present(fs_for(root, spark), root, hourly="hour" in parts)


def effective_end_of_input(spark: SparkSession, output_path: str, counts: DataFrame, cfg: JobConfig,
                           partitions: list[str] | None = None) -> str:
    """How the replayed history ended. One run: the config's end_of_input. A `dt=` partitioned history: whether
    its last partition flushed, from that partition's carried-state manifest (the DAGs hold every partition but
    the last of a range, so the config alone cannot say); no manifest = hold (nothing claims the end).
    `partitions`: the history's partition ids when the caller listed them (the manifest is then read by the
    driver: no Spark job)."""
    parts = partition_columns(counts)
    if not parts:
        return cfg.replay.end_of_input
    if partitions is not None:
        if not partitions:
            return "hold"
        path = f"{state_dir(output_path, partitions[-1])}/{MANIFEST}"
        try:
            text = fs_for(path, spark).read_text(path)
            flushed = bool(json.loads(text).get("flushed")) if text else False
        except (OSError, ValueError, AttributeError):  # unreadable or not an object: no manifest
            return "hold"
        return "flush" if flushed else "hold"
    last = counts.select(*parts).distinct().orderBy(*[F.col(c).desc() for c in parts]).limit(1).collect()
    if not last:
        return "hold"
    pid = _partition_id(last[0], parts)

    path = f"{state_dir(output_path, pid)}/{MANIFEST}"
    try:
        manifest = spark.read.option("multiLine", True).json(path).select("flushed").collect()
    except Exception:  # noqa: BLE001 - AnalysisException (no such path) and friends: no manifest
        return "hold"
    return "flush" if manifest and manifest[0]["flushed"] else "hold"


def accounting_batch(spark: SparkSession, out: dict[str, DataFrame], cfg: JobConfig) -> DataFrame:
    """One row. counts/ has one row per run, or per partition for a `dt=` partitioned history: the partitions'
    counts add up (a row is read by exactly one partition), and the windows' last firings span the partitions."""
    counts = out["counts"]
    parts = partition_columns(counts)
    n_parts = (F.count_distinct(*[F.col(c) for c in parts]) if parts else F.lit(1)).alias("counts_partitions")
    c = counts.agg(F.count(F.lit(1)).alias("counts_rows"), n_parts,
                   *[F.sum(F.col(n).cast("long")).alias(n) for n in
                     ("rows_read", "rows_in_windows", "late_rows", "quarantined_rows", "skipped_rows")],
                   # Outputs written before the row filter existed have no filtered_rows: none was filtered.
                   (F.sum(F.col("filtered_rows").cast("long")) if "filtered_rows" in counts.columns
                    else F.lit(0).cast("long")).alias("filtered_rows"))
    late = out["late_events"].agg(F.count(F.lit(1)).alias("late_events_rows"))
    # The firings and windows figures (Data Docs show them): a window is its key and bounds (a struct: a null key
    # counts), as the why-report counts them.
    fired = out["windows"].agg(F.count(F.lit(1)).alias("firings"),
                               F.count_distinct(F.struct("key", "window_start", "window_end")).alias("windows"))
    q = out["quarantine"]
    reason = F.col("reason") if "reason" in q.columns else F.lit(None)
    quarantine = q.agg(F.count(F.lit(1)).alias("quarantine_rows"),
                       F.sum(F.when(reason.isNull(), 1).otherwise(0)).cast("long").alias("quarantine_without_reason"))
    lasts = last_firings(out["windows"], cfg)
    if lasts is None:
        held = spark.range(1).select(F.lit(None).cast("long").alias("held_rows_all"),
                                     F.lit(None).cast("long").alias("held_rows"))
    else:
        total = F.coalesce(F.sum("held"), F.lit(0)).cast("long")
        held = lasts[0].agg(total.alias("held_rows_all")).crossJoin(lasts[1].agg(total.alias("held_rows")))
    w = cfg.window
    return (c.crossJoin(late).crossJoin(quarantine).crossJoin(held).crossJoin(fired)
            .withColumn("cfg_windows_per_row", F.lit(windows_per_row(cfg)).cast("long"))
            .withColumn("cfg_window_type", F.lit(w.type))
            .withColumn("cfg_end_of_input", F.lit(cfg.replay.end_of_input))
            .withColumn("cfg_having", F.lit(cfg.having is not None)))


@dataclass
class Batches:
    windows: DataFrame
    watermarks: DataFrame
    late_events: DataFrame
    accounting: DataFrame
    partitions: list[str]  # the partition ids validated ([]: the output of one run)

    def by_suite(self) -> dict[str, DataFrame]:
        return {"windows": self.windows, "watermarks": self.watermarks, "late_events": self.late_events,
                "accounting": self.accounting}


def prepare(spark: SparkSession, output_path: str, cfg: JobConfig) -> Batches:
    out = read_outputs(spark, output_path)
    partitions = listed_partition_ids(spark, output_path, out["counts"])
    end = effective_end_of_input(spark, output_path, out["counts"], cfg, partitions)
    if end != cfg.replay.end_of_input:
        cfg = cfg.with_end_of_input(end)
    return Batches(windows=windows_batch(out["windows"], cfg), watermarks=watermarks_batch(out["watermarks"]),
                   late_events=late_events_batch(out["late_events"], cfg),
                   accounting=accounting_batch(spark, out, cfg), partitions=partitions)
