"""Reading the source log: status of every row, quarantine, range cut (the whole source; one partition's folder:
io/partition_source.py, a span of them: io/span_source.py). The files are found and checked for drift in
io/files.py, the role columns mapped and each row's reason given in io/source_roles.py (the conversions and reasons
themselves: io/quarantine.py), duplicate and out-of-order
offsets decided in io/offsets.py (the rules: docs/semantics.md, "Quarantine").

Everything here is set-based: the only values brought to the driver are counts, min/max arrival times
and the distinct split names (small by nature).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from ..semantics.config import JobConfig
from ..semantics.config_keys import ConfigError
from .files import check_schema_drift, data_files, parquet_file_rows
from .fs import hadoop_fs
from .offsets import check_offsets
from .quarantine import (FOLDER_START, MAX_TIME_MS, MIN_TIME_MS, PARSED, REASON, REASON_COLUMN, SOURCE_EVENT_TIME,
                         STATUS, STATUS_CODE, STATUS_CODES)
from .read_order import TickPartials
from .row_filter import WINDOWED, windowed_flag
from .source_roles import Roles, parsed_roles, quarantine_reason, source_roles


@dataclass
class SourceData:
    """The source as the engine needs it, plus what the writer needs to account for every row read."""

    rows: DataFrame  # clean rows in range: split, offset, arrival_time, event_time, key, payload... (+ WINDOWED)
    quarantine: DataFrame  # every original column as read + reason
    rows_read: int
    clean_rows: int
    quarantined_rows: int
    skipped_rows: int
    splits: list[str]  # declared splits, sorted (includes side inputs)
    start_ms: int | None  # None only when there is no clean row and no explicit range
    end_ms: int | None
    source_columns: dict[str, str]  # role -> column name in the source
    payload_columns: list[str]
    timestamp_roles: set[str] = field(default_factory=set)  # time roles whose source column was a timestamp
    event_time_is_role: bool = True  # False for ingestion/processing time (see SOURCE_EVENT_TIME)
    clean_max_offsets: dict[str, int] | None = None  # split -> largest clean offset (None: not known, count it)
    # A span of partitions read at once (io/span_source.py): per folder (its start, ms) and status, the rows.
    rows_by_folder: dict[int, dict[str, int]] | None = None
    # The timeline's per-(split, tick) event times of `rows`, from the offset check's pass (io/read_order.py).
    tick_partials: TickPartials | None = None
    # Clean rows the job's filter keeps out of the windows (io/row_filter.py); per folder for a span of them.
    filtered_rows: int = 0
    filtered_by_folder: dict[int, int] | None = None
    _cached: list[DataFrame] = field(default_factory=list)

    def release(self) -> None:
        for df in self._cached:
            df.unpersist()
        self._cached = []


def read_raw(spark: SparkSession, cfg: JobConfig) -> DataFrame:
    src = cfg.source
    fs, path = hadoop_fs(spark, src.path)
    matches = fs.globStatus(path)
    if matches is None or len(matches) == 0:
        raise ConfigError("source.path", f"{src.path}: no such file or directory")
    if src.format == "csv":
        # No schema inference: every column stays a string as written, so the quarantine shows it as read
        # and the conversion below is the only interpretation of the values.
        return spark.read.option("header", True).option("mode", "PERMISSIVE").csv(src.path)
    check_schema_drift(spark, data_files(spark, src.path), src.format)
    return spark.read.parquet(src.path)


def read_source(spark: SparkSession, cfg: JobConfig) -> SourceData:
    raw = read_raw(spark, cfg)
    return prepare_source(raw, cfg)


@dataclass(frozen=True)
class Folders:
    """A span of partition folders read at once (io/span_source.py): `start` is the row's folder's start (ms),
    each folder covers [start, start + length); a row's range is its own folder's, as in a one-partition read."""
    start: Column
    length: int


def _with_status(parsed: DataFrame, reason: Column, cfg: JobConfig, folders: Folders | None = None) -> DataFrame:
    """STATUS: skipped (a valid arrival outside the range: it belongs to another partition's replay, not bad),
    quarantined (a reason; an arrival outside the time bounds belongs to no partition's replay), or candidate
    (the offset checks decide); STATUS_CODE says the same as a number."""
    a = F.col(f"{PARSED}arrival_time")
    start, end = cfg.replay.start_ms, cfg.replay.end_ms
    out_of_range = F.lit(False)
    if start is not None:
        out_of_range = out_of_range | (a < F.lit(start))
    if end is not None:
        out_of_range = out_of_range | (a >= F.lit(end))
    if folders is not None:
        out_of_range = out_of_range | (a < folders.start) | (a >= folders.start + F.lit(folders.length))
    # Null-safe: a null arrival must give False here, not null, or the row's reason would be lost.
    skipped = a.isNotNull() & a.between(F.lit(MIN_TIME_MS), F.lit(MAX_TIME_MS)) & out_of_range
    code = (F.when(skipped, F.lit(STATUS_CODES["skipped"]))
            .when(F.col(REASON).isNotNull(), F.lit(STATUS_CODES["quarantined"]))
            .otherwise(F.lit(STATUS_CODES["candidate"])))
    status = F.when(F.col(STATUS_CODE) == STATUS_CODES["skipped"], F.lit("skipped")).when(
        F.col(STATUS_CODE) == STATUS_CODES["quarantined"], F.lit("quarantined")).otherwise(F.lit("candidate"))
    return parsed.withColumn(REASON, F.when(~skipped, reason)).withColumn(STATUS_CODE, code).withColumn(STATUS, status)


def _range(cfg: JobConfig, clean_stats: dict | None) -> tuple[int | None, int | None]:
    """[start, end) of the replay: the configured bounds, else the clean rows' first and last arrival (without an
    explicit end, end = the last arrival: every row is included, no tick follows the last row)."""
    start, end = cfg.replay.start_ms, cfg.replay.end_ms
    start_ms = start if start is not None else (clean_stats["lo"] if clean_stats else None)
    end_ms = end if end is not None else (clean_stats["hi"] if clean_stats else None)
    if start_ms is not None and end_ms is None:
        end_ms = start_ms  # an explicit start and no clean row: an empty range
    if end_ms is not None and start_ms is None:
        start_ms = end_ms
    return start_ms, end_ms


def prepare_source(raw: DataFrame, cfg: JobConfig, carried_offsets: Mapping[str, int] | None = None,
                   folders: Folders | None = None) -> SourceData:
    """Parse, quarantine and cut a raw source DataFrame (as read) per cfg. `carried_offsets`: each split's last
    offset in the partitions replayed before this one (history/state.py), so that a redelivery or an offset going
    back across a cut is quarantined as in one replay of the whole range. `folders`: the rows come from a span of
    partition folders (`raw` has the folder column): each is cut to its folder and counted per folder, and the
    quarantine keeps the folder column (FOLDER_START)."""
    plain = raw.drop(FOLDER_START)  # the columns as read (roles, row content, order, quarantine)
    roles = source_roles(plain, cfg)
    parsed = _with_status(parsed_roles(raw, roles), quarantine_reason(roles, cfg), cfg, folders)
    # The rows are read by the offset check, the counts and the engine (twice). Parquet is read again each time,
    # with only the columns each read needs (building an in-memory copy of whole rows costs more than that); CSV
    # is parsed once and kept.
    cached = []
    if cfg.source.format == "csv":
        parsed = parsed.persist(StorageLevel.MEMORY_AND_DISK)
        cached.append(parsed)
    parsed, more, by_status = check_offsets(parsed, plain, F.col(f"{PARSED}split"), F.col(f"{PARSED}offset"),
                                            F.col(f"{PARSED}arrival_time"), carried_offsets,
                                            folders.start if folders is not None else None,
                                            F.col(f"{PARSED}event_time"), _tick_interval(cfg),
                                            _rows_at_most(plain, cfg))
    cached += more
    n = {st: (by_status[st]["n"] if st in by_status else 0) for st in ("clean", "quarantined", "skipped")}
    clean_stats = by_status.get("clean")
    start_ms, end_ms = _range(cfg, clean_stats)
    every_row_clean = n["clean"] == sum(n.values())
    windowed = windowed_flag(cfg, parsed, plain.columns) if cfg.filter is not None else None
    filtered = _filtered_by_folder(parsed, windowed, folders) if windowed is not None and n["clean"] else {}
    return SourceData(rows=_clean_rows(parsed, roles, every_row_clean, windowed),
                      quarantine=_quarantined_rows(parsed, plain, folders),
                      rows_read=sum(n.values()), clean_rows=n["clean"], quarantined_rows=n["quarantined"],
                      skipped_rows=n["skipped"], splits=_splits(cfg, clean_stats), start_ms=start_ms, end_ms=end_ms,
                      source_columns=roles.cols, payload_columns=roles.payload,
                      timestamp_roles=roles.timestamp_roles(), event_time_is_role=roles.event_time_from_source,
                      clean_max_offsets=clean_stats["max_offsets"] if clean_stats else {},
                      tick_partials=clean_stats.get("tick_partials") if clean_stats else None,
                      rows_by_folder=_by_folder(by_status) if folders is not None else None,
                      filtered_rows=sum(filtered.values()),
                      filtered_by_folder=filtered if folders is not None else None, _cached=cached)


def _filtered_by_folder(parsed: DataFrame, windowed: Column, folders: Folders | None) -> dict[int, int]:
    """The clean rows the filter drops, per folder start (0 for a whole source): one aggregate, run only for a job
    with a filter (the read's own pass counts statuses, not verdicts)."""
    folder = folders.start if folders is not None else F.lit(0).cast("long")
    dropped = parsed.filter((F.col(STATUS) == "clean") & ~windowed)
    return {int(r["f"]): int(r["n"]) for r in dropped.groupBy(folder.alias("f")).agg(F.count(F.lit(1)).alias("n"))
            .collect()}


def _rows_at_most(raw: DataFrame, cfg: JobConfig) -> int | None:
    """The rows of the files read, from their Parquet footers (no Spark job); None for CSV (no footer)."""
    if cfg.source.format != "parquet":
        return None
    return parquet_file_rows(raw.sparkSession, raw.inputFiles())


def _tick_interval(cfg: JobConfig) -> int:
    """The interval whose tick partials the offset check takes (0: none): periodic emission on event or
    ingestion time, the timelines that aggregate per (split, tick)."""
    return cfg.watermark.interval_ms if cfg.watermark.periodic and cfg.window.time != "processing" else 0


def _clean_rows(parsed: DataFrame, roles: Roles, every_row_clean: bool = False,
                windowed: Column | None = None) -> DataFrame:
    """The engine's columns, the payload, and for ingestion/processing time the source's own event time; with a
    filter, its verdict (`windowed`, as WINDOWED). `every_row_clean`: the read counted no other status, so no row
    needs its checks again: each later scan then reads only the columns it uses (the checks read split and offset,
    strings and all, for every row)."""
    carried_source_time = ([roles.column("event_time").alias(SOURCE_EVENT_TIME)]
                           if not roles.event_time_from_source and roles.cols["event_time"] in roles.types else [])
    clean = parsed if every_row_clean else parsed.filter(F.col(STATUS) == "clean")
    return clean.select(
        F.col(f"{PARSED}split").alias("split"), F.col(f"{PARSED}offset").alias("offset"),
        F.col(f"{PARSED}arrival_time").alias("arrival_time"), F.col(f"{PARSED}event_time").alias("event_time"),
        F.col(f"{PARSED}key").alias("key"), *[F.col(f"`{c}`") for c in roles.payload], *carried_source_time,
        *([windowed.alias(WINDOWED)] if windowed is not None else []))


def _quarantined_rows(parsed: DataFrame, raw: DataFrame, folders: Folders | None = None) -> DataFrame:
    """Every column as read, plus the reason (and the folder, for a span of folders)."""
    return parsed.filter(F.col(STATUS) == "quarantined").select(
        *[F.col(f"`{c}`") for c in raw.columns], F.col(REASON).alias(REASON_COLUMN),
        *([folders.start.alias(FOLDER_START)] if folders is not None else []))


def _by_folder(by_status: dict[str, dict]) -> dict[int, dict[str, int]]:
    """folder start -> status -> rows, from the offset check's counts."""
    out: dict[int, dict[str, int]] = {}
    for status, d in by_status.items():
        for folder, n in d["by_folder"].items():
            out.setdefault(int(folder), {})[status] = n
    return out


def _splits(cfg: JobConfig, clean_stats: dict | None) -> list[str]:
    """The declared splits, else the split names of the clean rows (small), with the side inputs; sorted."""
    if cfg.source.splits is not None:
        return sorted(set(cfg.source.splits) | set(cfg.source.side_inputs))
    seen = clean_stats["splits"] if clean_stats else []
    return sorted(set(seen) | set(cfg.source.side_inputs))
