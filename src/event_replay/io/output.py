"""Writing the replay's outputs: canonical order, fixed file count, all-or-nothing replacement.

Layout under cfg.output.path: windows/, late_events/, watermarks/, quarantine/, counts/ (Parquet datasets).
Everything is first written to a staging folder `<output>/_staging-*`, then committed as a whole with a journal
(io/commit.py): after a crash at any point, the outputs are either the previous complete ones or, once the journal
is rolled forward, the new complete ones.
"""
from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable, Sequence

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..layout import DATASETS
from ..semantics.config import JobConfig
from ..spark import local_frame
from .commit import stage_and_commit
from .driver_parquet import MAX_TS_MS, MIN_TS_MS, written_by_driver
from .failpoints import failpoint
from .files import parquet_rows
from .fs import fs_for, hadoop_fs
from .quarantine import REASON_COLUMN, SOURCE_EVENT_TIME, orderable_columns
from .source import SourceData

OUTPUT_FILES = 1  # files per dataset (but windows: output.windows_files): fixed, so that the output does not
# depend on cores or partitions

# Timestamps Spark can hold (driver_parquet.py MIN_TS_MS .. MAX_TS_MS): -inf/+inf watermarks have no timestamp
# (null), so every watermark column has its exact long next to it (`*_ms`): a firing at +inf (every split idle, a
# side input declared) has fire_watermark_ms = 2^63-1, an end-of-input flush a null one (docs/semantics.md,
# "Outputs").


def ms_to_timestamp(col: Column) -> Column:
    return F.when(col.between(MIN_TS_MS, MAX_TS_MS), F.timestamp_millis(col))


@dataclass
class WriteSummary:
    path: str
    rows_read: int
    firings: int
    rows_in_windows: int
    late_rows: int
    quarantined_rows: int
    skipped_rows: int
    filtered_rows: int = 0  # clean rows the job's filter kept out of the windows (io/row_filter.py)


# The windows output's order, on the engine's columns (window bounds in ms, the fire index): by time, then key. The
# write sorts by them before converting the bounds to timestamps, which keeps the order, so firings that come in
# this order (the fixed windows' walk declares it) are not sorted again.
WINDOWS_ORDER = ["window_start", "key", "window_end", "fire_index"]


def windows_output(firings: DataFrame, cfg: JobConfig, keep: Sequence[str] = ()) -> DataFrame:
    """The windows output from the engine's firings (`keep`: more columns to pass through, e.g. folders)."""
    aggs = list(cfg.aggregations)
    return firings.select(
        "key", ms_to_timestamp(F.col("window_start")).alias("window_start"),
        ms_to_timestamp(F.col("window_end")).alias("window_end"), F.col("fire_index").cast("int").alias("fire_index"),
        ms_to_timestamp(F.col("fire_watermark")).alias("fire_watermark"), "fire_reason",
        *[_one_nan(firings, a) for a in aggs], F.col("fire_watermark").cast("long").alias("fire_watermark_ms"),
        *keep,
    )


def _one_nan(firings: DataFrame, name: str) -> Column:
    """An aggregate column with every NaN written as the one NaN (0x7ff8...): the sign and payload of a NaN that
    an addition produces (inf + -inf) depend on which operand the JIT puts first, so a rerun could write other bits
    for the same firing."""
    col = F.col(f"`{name}`")
    kind = firings.schema[name].dataType
    if not isinstance(kind, (T.DoubleType, T.FloatType)):
        return col
    return F.when(F.isnan(col), F.lit(float("nan")).cast(kind)).otherwise(col).alias(name)


def late_events_output(late: DataFrame, source: SourceData, keep: Sequence[str] = ()) -> tuple[DataFrame, list[str]]:
    """The late rows with every source column under its own name; time columns as the source had them (timestamp
    or ms). With ingestion/processing time the source's event-time column (if it has one) is not a role: it comes
    back as it was read, untouched."""
    cols = source.source_columns
    out = []
    for role in ("split", "offset", "arrival_time", "event_time", "key"):
        if cols.get(role) is None:  # a keyless job's log has no key column: its late rows have none either
            continue
        if role == "event_time" and not source.event_time_is_role:
            if SOURCE_EVENT_TIME in late.columns:
                out.append(F.col(SOURCE_EVENT_TIME).alias(cols[role]))
            continue
        c = F.col(role)
        if role in source.timestamp_roles:
            c = ms_to_timestamp(c)
        out.append(c.alias(cols[role]))
    out += [F.col(f"`{p}`") for p in source.payload_columns]
    out.append(ms_to_timestamp(F.col("late_watermark")).alias("late_watermark"))
    out.append(F.col("late_watermark").cast("long").alias("late_watermark_ms"))
    out += [F.col(c) for c in keep]
    # Replay order is a total order on rows: (arrival, split, offset).
    order = [cols["arrival_time"], cols["split"], cols["offset"]]
    return late.select(*out), order


def watermarks_output(watermarks: DataFrame, keep: Sequence[str] = ()) -> tuple[DataFrame, list[Column]]:
    out = watermarks.select(
        ms_to_timestamp(F.col("replay_time")).alias("replay_time"), "scope", "split",
        ms_to_timestamp(F.col("watermark")).alias("watermark"), "idle",
        F.col("watermark").alias("watermark_ms"), F.col("replay_time").alias("replay_time_ms"), *keep)
    # Several changes can share a replay time (per-event emission, equal arrivals); watermarks only rise, so
    # ascending watermark within (time, scope, split) is their order of occurrence.
    order = [F.col("replay_time_ms"), F.col("scope"), F.col("split").asc_nulls_first(),
             F.col("idle"), F.col("watermark_ms").asc_nulls_last()]
    return out, order


# The watermarks as the driver writes them when it holds them (driver_parquet.py): the same order, and each
# timestamp from its `*_ms` column (watermarks_output).
WATERMARKS_DRIVER_ORDER = ["replay_time_ms", "scope", "split", "idle", ("watermark_ms", "nulls_last")]
WATERMARKS_MS_OF = {"replay_time": "replay_time_ms", "watermark": "watermark_ms"}


def write_dataset(df: DataFrame, order: list, path: str, files: int = OUTPUT_FILES, spread_by: str | None = None,
                  folders: list[str] | None = None, shape: Callable[[DataFrame], DataFrame] | None = None,
                  gather_narrow: bool = False) -> None:
    # A fixed number of partitions, each sorted: the same files whatever the cores, partitions or input file order.
    # Several files are filled by a hash of `spread_by` (Spark's murmur3: the same on any cluster), so file i holds
    # the same rows on every run; an empty one is not written. `folders`: one sub-folder per value of these
    # columns (a span of partitions, io/span_output.py), each holding exactly the files a write of its rows alone
    # would (the same hash, the same order). `shape`: the columns written, made from the arranged rows.
    # `gather_narrow`: see arranged. A table the driver holds is written by the driver (io/driver_parquet.py).
    if files == 1 and not folders and shape is None and written_by_driver(df, order, path):
        return
    parts = arranged(df, order, files, spread_by, folders, gather_narrow)
    writer = (parts if shape is None else shape(parts)).write.mode("errorifexists")
    if folders:
        writer = writer.partitionBy(*folders)
    writer.parquet(path)


def arranged(df: DataFrame, order: list, files: int = OUTPUT_FILES, spread_by: str | None = None,
             folders: list[str] | None = None, gather_narrow: bool = False) -> DataFrame:
    """`df` as write_dataset writes it: `files` partitions (by a hash of `spread_by`), each sorted. One file of a
    frame that is a cheap scan (`gather_narrow`: files the driver wrote) is gathered by the task that writes it,
    without a shuffle; any other frame is shuffled into it, so that its own work keeps its partitions."""
    if files > 1:
        parts = df.repartition(files, F.col(spread_by))
    else:
        parts = df.coalesce(1) if gather_narrow else df.repartition(1)
    return parts.sortWithinPartitions(*(folders or []), *order)


def write_outputs(spark: SparkSession, cfg: JobConfig, source: SourceData, firings: DataFrame,
                  late: DataFrame, watermarks: DataFrame, watermarks_from_driver: bool = False) -> WriteSummary:
    """Write every output of a whole source, all or nothing: each dataset is replaced whole. (A partition's
    outputs are staged with stage_outputs and committed with its carried state.)"""
    def stage(staging: str) -> tuple[WriteSummary, list[tuple[str, str]]]:
        return stage_outputs(spark, cfg, source, firings, late, watermarks, staging,
                             watermarks_from_driver=watermarks_from_driver)

    target = cfg.output.path.rstrip("/")
    return stage_and_commit(fs_for(target, spark), target, stage)


def stage_outputs(spark: SparkSession, cfg: JobConfig, source: SourceData, firings: DataFrame,
                  late: DataFrame, watermarks: DataFrame, staging: str, partition_subpath: str | None = None,
                  watermarks_from_driver: bool = False) -> tuple[WriteSummary, list[tuple[str, str]]]:
    """Write every dataset under `staging`; return the counts and the moves that commit them (io/commit.py). With
    `partition_subpath` (e.g. `dt=2024-01-01`), the outputs of one partition go to
    `<output.path>/<dataset>/<partition_subpath>/`, so a rerun of the partition replaces exactly its own outputs.
    `watermarks_from_driver`: the watermarks are a scan of the driver's files (EngineResult)."""
    target = cfg.output.path.rstrip("/")
    stage_datasets(spark, cfg, source, firings, late, watermarks, staging,
                   watermarks_from_driver=watermarks_from_driver)
    # Counts from what was written (the files' footers), not from a second run of the engine.
    counts = summary_of(target, source.rows_read, source.clean_rows, source.quarantined_rows, source.skipped_rows,
                        parquet_rows(spark, f"{staging}/windows"), parquet_rows(spark, f"{staging}/late_events"),
                        source.filtered_rows)
    write_dataset(counts_frame(spark, [counts]), ["rows_read"], f"{staging}/counts")
    sub = f"/{partition_subpath}" if partition_subpath is not None else ""
    moves = [(f"{staging}/{name}", f"{target}/{name}{sub}") for name in DATASETS]
    return counts, moves


def stage_datasets(spark: SparkSession, cfg: JobConfig, source: SourceData, firings: DataFrame, late: DataFrame,
                   watermarks: DataFrame, staging: str, quarantine: DataFrame | None = None,
                   folders: list[str] | None = None, watermarks_from_driver: bool = False) -> dict[str, DataFrame]:
    """windows/, late_events/, watermarks/ and quarantine/ (by default the source's) under `staging`; returns the
    frames written, by dataset. `folders`: the frames carry these columns and each dataset is written in one
    sub-folder per value (a span of partitions, io/span_output.py)."""
    keep = folders or []
    q = source.quarantine if quarantine is None else quarantine
    if source.quarantined_rows == 0:  # counted by the source already: no pass over the rows to find none
        q = local_frame(spark, [], q.schema)
    quarantine_order = [REASON_COLUMN] + [c for c in orderable_columns(q) if c not in (REASON_COLUMN, *keep)]
    specs = {"windows": (firings, WINDOWS_ORDER, cfg.output.windows_files, "key",
                         lambda arranged_firings: windows_output(arranged_firings, cfg, keep)),
             "late_events": (*late_events_output(late, source, keep), OUTPUT_FILES, None, None),
             "watermarks": (*watermarks_output(watermarks, keep), OUTPUT_FILES, None, None),
             "quarantine": (q, quarantine_order, OUTPUT_FILES, None, None)}

    def write(name: str) -> None:
        df, order, files, spread_by, shape = specs[name]
        if name == "watermarks" and not folders and written_by_driver(
                df, WATERMARKS_DRIVER_ORDER, f"{staging}/{name}", ms_of=WATERMARKS_MS_OF):
            return  # a day's watermarks, held by the driver: no Spark job
        write_dataset(df, order, f"{staging}/{name}", files, spread_by, folders, shape,
                      gather_narrow=name == "watermarks" and watermarks_from_driver)

    # The small datasets are written beside the windows (Spark runs the jobs of several threads at once): their
    # planning and few tasks then overlap the large write instead of following it. Each write is the same.
    with ThreadPoolExecutor(max_workers=len(specs) - 1, thread_name_prefix="replay-write") as pool:
        beside = [pool.submit(write, name) for name in specs if name != "windows"]
        write("windows")
        failpoint("mid_staging")
        for done in beside:
            done.result()  # a failed write raises here (the pool has let every write end first)
    return {name: df if shape is None else shape(df) for name, (df, _, _, _, shape) in specs.items()}


def summary_of(target: str, rows_read: int, clean_rows: int, quarantined: int, skipped: int, firings: int,
               late: int, filtered: int = 0) -> WriteSummary:
    # Every clean row in range is either filtered, late or held by a window (SEMANTICS §5, §7; a filtered row is
    # never late: the filter runs before the window operator decides lateness).
    return WriteSummary(path=target, rows_read=rows_read, firings=firings, rows_in_windows=clean_rows - late - filtered,
                        late_rows=late, quarantined_rows=quarantined, skipped_rows=skipped, filtered_rows=filtered)


# rows_read = rows_in_windows + late_rows + quarantined_rows + skipped_rows + filtered_rows (filtered_rows last: the
# columns before it keep their places).
COUNTS_COLUMNS = ("rows_read", "rows_in_windows", "late_rows", "quarantined_rows", "skipped_rows", "filtered_rows")


def counts_frame(spark: SparkSession, summaries: list[WriteSummary], folders: list[tuple] | None = None,
                 folder_columns: list[str] | None = None) -> DataFrame:
    """The counts/ dataset: a row per summary (plus its folder columns' values, for a span of partitions)."""
    fields = [T.StructField(n, T.LongType(), False) for n in COUNTS_COLUMNS]
    fields += [T.StructField(c, T.StringType(), False) for c in folder_columns or []]
    rows = [tuple(getattr(s, n) for n in COUNTS_COLUMNS) + tuple(folders[i] if folders else ())
            for i, s in enumerate(summaries)]
    return local_frame(spark, rows, T.StructType(fields))


def swap_in(spark: SparkSession, staging: str, target: str) -> None:
    """Replace target by staging with renames; the previous output is removed only once the new one is in place."""
    fs, target_p = hadoop_fs(spark, target)
    Path = spark.sparkContext._jvm.org.apache.hadoop.fs.Path
    staging_p = Path(staging)
    parent = target_p.getParent()
    if parent is not None and not fs.exists(parent):
        fs.mkdirs(parent)
    previous_p = Path(f"{target}.previous-{uuid.uuid4().hex[:12]}")
    had_previous = fs.exists(target_p)
    if had_previous and not fs.rename(target_p, previous_p):
        raise OSError(f"cannot move the previous output {target} aside")
    if not fs.rename(staging_p, target_p):
        if had_previous:
            fs.rename(previous_p, target_p)  # put the previous output back
        raise OSError(f"cannot rename {staging} to {target}")
    if had_previous:
        fs.delete(previous_p, True)
