"""Reading a span of consecutive partitions (`replay run --partitions FROM..TO`) as one source.

One-partition reads (partition_source.read_partition_source) take one folder and cut it to the partition's arrival range.
A span reads every present folder of the range in one scan and keeps each row's folder (from its file's path,
`_metadata.file_path`) as FOLDER_START, the folder's start in ms. Each row is then cut to its own folder's range,
counted per folder and, if quarantined, kept with its folder, so that every partition's rows, counts and
quarantine are exactly those of its own read. The offset checks run once over the span in replay order, which
is what the one-by-one reads do with each split's last offset carried across the cuts (io/offsets.py).
"""
from __future__ import annotations

import dataclasses
from typing import Mapping

from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F

from ..semantics.config import JobConfig
from ..spark import local_frame
from .files import check_schema_drift, data_files, neighbour_file
from .fs import hadoop_fs
from .partition_folders import FOLDER_IN_PATH, Folder
from .quarantine import FOLDER_START
from .partition_source import borrowed_schema, missing_partition, read_folders
from .source import Folders, SourceData, prepare_source

DAY_MS = 86_400_000
HOUR_MS = 3_600_000


def folder_start(path: Column, hourly: bool) -> Column:
    """The start (UTC ms) of the partition folder a file lies in, from its path."""
    day = F.to_date(F.regexp_extract(path, FOLDER_IN_PATH, 1), "yyyy-MM-dd")
    start = F.datediff(day, F.lit("1970-01-01").cast("date")).cast("long") * F.lit(DAY_MS)
    if hourly:
        start = start + F.regexp_extract(path, FOLDER_IN_PATH, 3).cast("long") * F.lit(HOUR_MS)
    return start


def read_span_source(spark: SparkSession, cfg: JobConfig, parts: list[Folder], allow_missing: bool = False,
                     carried_offsets: Mapping[str, int] | None = None) -> SourceData:
    """The rows of consecutive partitions `parts` (ascending), cut to [first start, last end) and each to its
    folder; see the module doc. A missing folder fails unless `allow_missing` (it then holds no rows), as for one
    partition; with no file anywhere in the span, the read is that of an empty partition."""
    root = cfg.source.path.rstrip("/")
    span = dataclasses.replace(cfg, replay=dataclasses.replace(cfg.replay, start_ms=parts[0].start_ms,
                                                               end_ms=parts[-1].end_ms))
    folders = Folders(F.col(FOLDER_START), parts[0].end_ms - parts[0].start_ms)
    paths, files = [], []
    for p in parts:
        path = f"{root}/{p.subpath}"
        fs, hp = hadoop_fs(spark, path)
        if not fs.exists(hp):
            if not allow_missing:
                raise missing_partition(p.subpath, path)
            continue
        found = data_files(spark, path)
        if found:
            paths.append(path)
            files += found
    if not files:  # the empty read of one partition, with the nearest files' column types
        raw = local_frame(spark, [], borrowed_schema(spark, cfg, parts[0].subpath))
        return prepare_source(raw.withColumn(FOLDER_START, F.lit(None).cast("long")), span, carried_offsets, folders)
    # Drift is judged against the past: the nearest partition before the span, else the span's first file.
    check_schema_drift(spark, files, cfg.source.format, neighbour_file(spark, cfg, parts[0].subpath, earlier_only=True))
    folder = folder_start(F.col("_metadata.file_path"), parts[0].hourly)
    raw = read_folders(spark, cfg.source.format, paths).select("*", folder.alias(FOLDER_START))
    return prepare_source(raw, span, carried_offsets, folders)
