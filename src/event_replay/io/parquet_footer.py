"""Read Parquet without a Spark job to learn its schema: the one reader that skips schema inference.

`spark.read.parquet(path)` runs a Spark job to read a footer and infer the schema, once per read: a report that
reads five outputs pays five jobs before its first figure, a partition's replay one before its first pass. The
driver reads the schema itself, with Spark's own footer conversion (files.inferred_schema), and hands it to the
reader: from the one file a read is known to be (a source partition of one file, io/partition_source.py), or, for
a dataset Spark wrote on a local disk, from its first data file in name order (partition columns are still
discovered from the folder names). Elsewhere (HDFS, object stores, several source folders) the reader infers as
usual.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from .files import hidden, inferred_schema


def _local(path: str) -> Path | None:
    if path.startswith("file:"):
        return Path("/" + path[len("file:"):].lstrip("/"))
    return None if "://" in path else Path(path)


def _first_data_file(folder: Path) -> Path | None:
    """The first data file under `folder` in name order (files.hidden names are not data, as for Spark)."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return None
    for e in entries:
        if hidden(e.name):
            continue
        if e.is_dir():
            found = _first_data_file(Path(e.path))
            if found is not None:
                return found
        elif e.is_file():
            return Path(e.path)
    return None


def footer_schema(spark: SparkSession, path: str) -> T.StructType | None:
    """The schema Spark infers for the first data file under a local `path` (None: not local, no data file, or
    not a Parquet file: Spark's reader then says why)."""
    local = _local(path)
    first = _first_data_file(local) if local is not None else None
    if first is None:
        return None
    try:
        return inferred_schema(spark, str(first))
    except Exception:  # noqa: BLE001 - Py4J's error for a file that is not Parquet: left to Spark's reader
        return None


def read_parquet(spark: SparkSession, paths: str | Sequence[str], base_path: str | None = None, *,
                 recursive: bool = False, one_file: str | None = None) -> DataFrame:
    """spark.read.parquet(paths), with the schema read on the driver when it can be (module doc). `one_file`: the
    read is that one file (its footer's schema: a file that is not Parquet fails here, as Spark's inference would);
    `recursive`: files looked up recursively with partition discovery off (source folders: a day of `hour=`
    folders reads as its data columns only), whose schema comes only from `one_file`."""
    paths = [paths] if isinstance(paths, str) else list(paths)
    reader = spark.read.option("recursiveFileLookup", "true") if recursive else spark.read
    if base_path is not None:
        reader = reader.option("basePath", base_path)
    if one_file is not None:
        schema = inferred_schema(spark, one_file)
    else:
        schema = footer_schema(spark, paths[0]) if len(paths) == 1 and not recursive else None
    return (reader.schema(schema) if schema is not None else reader).parquet(*paths)
