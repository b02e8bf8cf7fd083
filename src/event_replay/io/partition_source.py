"""Reading one partition of the source (`dt=D` or `dt=D/hour=HH` under source.path), cut to its arrival range: its
folder found, a missing partition told from an empty one (`MissingPartitionError` unless allowed), an empty read
given the column types of its nearest neighbour with files. What is read is parsed, quarantined and cut by
io/source.py `prepare_source`; a span of partitions read at once is io/span_source.py.
"""
from __future__ import annotations

import dataclasses
from typing import Mapping

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from ..semantics.config import JobConfig
from ..semantics.config_keys import ConfigError
from ..spark import local_frame
from .files import check_schema_drift, csv_reader, data_files, neighbour_file
from .fs import hadoop_fs
from .parquet_footer import read_parquet
from .source import SourceData, prepare_source


def partition_config(cfg: JobConfig, subpath: str, start_ms: int, end_ms: int) -> JobConfig:
    """The config of one partition's replay: its folder of the source and its arrival range [start, end)."""
    src = dataclasses.replace(cfg.source, path=f"{cfg.source.path.rstrip('/')}/{subpath}")
    rng = dataclasses.replace(cfg.replay, start_ms=start_ms, end_ms=end_ms)
    return dataclasses.replace(cfg, source=src, replay=rng)


class MissingPartitionError(ConfigError):
    """A partition with no folder in the source (not the same as an empty one)."""

    def __init__(self, why: str):
        super().__init__("--partition", why)


def read_partition_source(spark: SparkSession, cfg: JobConfig, subpath: str, start_ms: int,
                          end_ms: int, allow_missing: bool = False,
                          carried_offsets: Mapping[str, int] | None = None) -> SourceData:
    """Only the files of one partition (`dt=D` or `dt=D/hour=HH` under source.path), cut to [start, end).

    Files are looked up recursively with partition discovery off, so a day made of `hour=` folders reads as
    its data columns only (no `hour` column appears among the payload).

    An empty partition (a folder without rows, or without files) is a valid replay of no rows: time still
    passes and the state carries on. A missing one (no folder) is an error unless `allow_missing`, since it
    usually means an upstream export has not landed; allowed, it replays as empty. Either way the empty
    replay borrows the column types of the nearest partition that has files, so that its outputs have the
    same schema as its neighbours'. The files are checked for schema drift against the nearest earlier
    partition's first file."""
    pcfg = partition_config(cfg, subpath, start_ms, end_ms)
    path = pcfg.source.path
    fs, hp = hadoop_fs(spark, path)
    exists = fs.exists(hp)
    if not exists and not allow_missing:
        raise missing_partition(subpath, path)
    files = data_files(spark, path) if exists else []
    if not files:
        return prepare_source(local_frame(spark, [], borrowed_schema(spark, cfg, subpath)), pcfg, carried_offsets)
    # Drift is judged against the past (the nearest earlier partition): a later partition's drift is its own.
    check_schema_drift(spark, files, pcfg.source.format, neighbour_file(spark, cfg, subpath, earlier_only=True))
    # One file: its schema is the one Spark would infer, read without the job inference runs (parquet_footer.py).
    return prepare_source(read_folders(spark, pcfg.source.format, [path], files[0] if len(files) == 1 else None),
                          pcfg, carried_offsets)


def read_folders(spark: SparkSession, fmt: str, paths: list[str], one_file: str | None = None) -> DataFrame:
    """The files under partition folders, looked up recursively with partition discovery off (a day made of
    `hour=` folders reads as its data columns only); CSV as strings, as source.read_raw. `one_file`: the read's one
    file, when known: a Parquet read takes its schema from it (parquet_footer.read_parquet)."""
    if fmt == "csv":
        return spark.read.option("recursiveFileLookup", "true").option("header", True).option(
            "mode", "PERMISSIVE").csv(paths)
    return read_parquet(spark, paths, recursive=True, one_file=one_file)


def missing_partition(subpath: str, path: str) -> MissingPartitionError:
    return MissingPartitionError(f"partition {subpath} has no folder in the source ({path}): it is missing, not "
                                 "empty; replay it as empty with --allow-missing if no data will come")


def borrowed_schema(spark: SparkSession, cfg: JobConfig, subpath: str) -> T.StructType:
    """The column types of a partition without files: the nearest partition's that has one, else the role
    columns as strings (converted as any string column)."""
    neighbour = neighbour_file(spark, cfg, subpath)
    if neighbour is None:
        return T.StructType([T.StructField(c, T.StringType()) for c in dict.fromkeys(cfg.source.role_columns().values())])
    if cfg.source.format == "csv":
        return csv_reader(spark).csv(neighbour).schema
    return spark.read.parquet(neighbour).schema
