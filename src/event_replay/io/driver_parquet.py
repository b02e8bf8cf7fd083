"""A table the driver already holds (a local relation: the counts, an empty quarantine, a split state), written by
the driver as one Parquet file, without a Spark job.

Contract: `written_by_driver(df, order, path)` writes `df` to `path` as a `repartition(1).sortWithinPartitions(
*order)` write would (one `part-00000-*.snappy.parquet` file, rows in that order, Spark's schema in the footer's
`org.apache.spark.sql.parquet.row.metadata`, a `_SUCCESS` marker) and returns True; it returns False, writing
nothing, for any frame it cannot write that way: a plan that is not a local relation, a nested column, a timestamp
Spark would write in another physical type (or a timestamp value), or rows to order by anything but plain string,
integer or boolean columns. A Spark job costs a scheduling round trip per write, which a small partition pays more than its rows.
"""
from __future__ import annotations

import os
import uuid

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from .fs import is_local, local_path

SPARK_SCHEMA_KEY = b"org.apache.spark.sql.parquet.row.metadata"  # where Spark reads its schema back from
_ORDERABLE = (T.StringType, T.LongType, T.IntegerType, T.ShortType, T.ByteType, T.BooleanType)
_FLAT = (*_ORDERABLE, T.DoubleType, T.FloatType, T.DateType, T.BinaryType, T.TimestampType, T.TimestampNTZType)


def _int96(df: DataFrame, types: list, has_rows: bool) -> bool | None:
    """How Arrow writes these columns in Spark's physical types (True: timestamps as INT96), or None if it cannot:
    a nested column, or a timestamp that is not alone in a frame without rows (no value whose session time zone
    would need converting) in a type Spark's `outputTimestampType` writes alike (TIMESTAMP_MICROS: both are
    INT64 micros; INT96: TimestampType only, Arrow's switch applying to every timestamp)."""
    if not all(isinstance(t, _FLAT) for t in types):
        return None
    timestamps = [t for t in types if isinstance(t, (T.TimestampType, T.TimestampNTZType))]
    if not timestamps:
        return False
    kind = df.sparkSession.conf.get("spark.sql.parquet.outputTimestampType", "INT96")
    if has_rows or kind not in ("INT96", "TIMESTAMP_MICROS"):
        return None
    if kind == "INT96":
        return True if all(isinstance(t, T.TimestampType) for t in timestamps) else None
    return False


def written_by_driver(df: DataFrame, order: list, path: str) -> bool:
    if not is_local(path):
        return False  # a cluster's filesystem: Spark's writer knows it, the driver's pyarrow may not
    if df._jdf.queryExecution().optimizedPlan().getClass().getSimpleName() != "LocalRelation":
        return False
    fields = {f.name: f.dataType for f in df.schema.fields}
    rows = [tuple(r) for r in df.collect()]  # a local relation: collected without a job
    int96 = _int96(df, list(fields.values()), bool(rows))
    if int96 is None:
        return False
    arrow_schema = to_arrow_schema(df.schema)
    if len(rows) > 1:
        if not all(isinstance(c, str) and isinstance(fields.get(c), _ORDERABLE) for c in order):
            return False
        at = [list(fields).index(c) for c in order]
        # Spark's ascending order: nulls first; strings by UTF-8 bytes, which is code point order.
        rows.sort(key=lambda r: tuple((r[i] is not None, r[i] if r[i] is not None else 0) for i in at))
    columns = list(zip(*rows)) if rows else [()] * len(arrow_schema)
    table = pa.table([pa.array(list(c), type=f.type) for c, f in zip(columns, arrow_schema)],
                     schema=arrow_schema.with_metadata({SPARK_SCHEMA_KEY: df.schema.json().encode()}))
    folder = local_path(path)
    os.makedirs(folder)  # fails if it exists, as Spark's errorifexists
    pq.write_table(table, f"{folder}/part-00000-{uuid.uuid4()}-c000.snappy.parquet", compression="snappy",
                   use_deprecated_int96_timestamps=int96)
    open(f"{folder}/_SUCCESS", "wb").close()
    return True
