"""Tables the driver built, as DataFrames that do not live in the JVM's heap.

The engine computes some tables on the driver with numpy: the watermark changes, the stream's values, lookup
tables. Up to `LOCAL_ROWS_MAX` rows such a table becomes a local relation (held whole in the driver JVM's heap and
copied into each task that scans it: cheap when small). Above, it is written as one Parquet file into the run's
scratch folder and read back like any input, so the heap holds a batch at a time whatever the log's length (a
bursty day has millions of watermark changes).

The scratch folder is a run's (`scratch_space`): under the output, on the file system the executors already write
to, named `_staging-scratch-<token>` so that a run killed before its end leaves nothing the next run's recovery
does not remove (io/commit.py). Without one (the engine called directly, e.g. by tests), a local master gets a
temporary folder of the process; any other master keeps the local relation.
"""
from __future__ import annotations

import atexit
import shutil
import tempfile
import uuid
from contextlib import contextmanager
from typing import Iterator

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from .commit import STAGING_PREFIX
from .fs import fs_for, hadoop_fs, is_local, local_path

LOCAL_ROWS_MAX = 50_000
SCRATCH_CONF = "spark.event_replay.scratch"  # the session's scratch folder (a session conf: seen by every caller)
_CHUNK_BYTES = 8 << 20  # bytes per py4j call when the file goes through a Hadoop FileSystem


@contextmanager
def scratch_space(spark: SparkSession, parent: str) -> Iterator[str]:
    """A scratch folder `<parent>/_staging-scratch-<token>` for the session's driver tables during the block,
    removed after it (also on failure)."""
    folder = f"{parent.rstrip('/')}/{STAGING_PREFIX}scratch-{uuid.uuid4().hex[:12]}"
    before = spark.conf.get(SCRATCH_CONF, None)
    spark.conf.set(SCRATCH_CONF, folder)
    try:
        yield folder
    finally:
        if before is None:
            spark.conf.unset(SCRATCH_CONF)
        else:
            spark.conf.set(SCRATCH_CONF, before)
        fs = fs_for(folder, spark)
        if fs.exists(folder):
            fs.delete(folder)


def driver_frame(spark: SparkSession, table: pa.Table, schema: T.StructType | None = None) -> DataFrame:
    """`table` as a DataFrame (with `schema`'s names and types if given): a local relation up to LOCAL_ROWS_MAX
    rows, else a Parquet file of the scratch folder read back."""
    folder = _scratch_folder(spark) if table.num_rows > LOCAL_ROWS_MAX else None
    if folder is None:
        return spark.createDataFrame(table, schema) if schema is not None else spark.createDataFrame(table)
    path = f"{folder}/{uuid.uuid4().hex}.parquet"
    _write_parquet(spark, table, path)
    reader = spark.read.schema(schema) if schema is not None else spark.read
    return reader.parquet(path)


def scratch_dataset(spark: SparkSession) -> str | None:
    """A new path in the session's scratch folder for a dataset Spark writes and reads back (None: no folder)."""
    folder = _scratch_folder(spark)
    return None if folder is None else f"{folder}/{uuid.uuid4().hex}"


def _scratch_folder(spark: SparkSession) -> str | None:
    folder = spark.conf.get(SCRATCH_CONF, None)
    if folder is None and spark.sparkContext.master.startswith("local"):
        folder = _process_folder()
    return folder


_PROCESS_FOLDER: list[str] = []


def _process_folder() -> str:
    """A temporary folder of this process (local masters without a run's scratch), removed at exit."""
    if not _PROCESS_FOLDER:
        folder = tempfile.mkdtemp(prefix="event-replay-scratch-")
        atexit.register(shutil.rmtree, folder, True)
        _PROCESS_FOLDER.append(folder)
    return _PROCESS_FOLDER[0]


def _dictionary_columns(table: pa.Table) -> list[str]:
    """Dictionaries for the string columns only (split names, scopes: few values). The numeric columns of these tables
    (ticks, watermarks) are nearly all distinct: a dictionary there costs a hash per value and is dropped anyway."""
    return [f.name for f in table.schema
            if pa.types.is_string(f.type) or pa.types.is_large_string(f.type) or pa.types.is_dictionary(f.type)]


def _write_parquet(spark: SparkSession, table: pa.Table, path: str) -> None:
    if is_local(path):
        fs_for(path).mkdirs(path.rsplit("/", 1)[0])
        pq.write_table(table, local_path(path), use_dictionary=_dictionary_columns(table))
        return
    buffer = pa.BufferOutputStream()
    pq.write_table(table, buffer, use_dictionary=_dictionary_columns(table))
    data = buffer.getvalue()
    fs, jpath = hadoop_fs(spark, path)
    out = fs.create(jpath, True)
    try:
        for at in range(0, data.size, _CHUNK_BYTES):
            out.write(bytearray(data[at:at + _CHUNK_BYTES].to_pybytes()))
    finally:
        out.close()
