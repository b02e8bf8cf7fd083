"""A table the driver already holds (a local relation: the counts, an empty quarantine, a split state), written by
the driver as one Parquet file, without a Spark job.

Contract: `written_by_driver(df, order, path)` writes `df` to `path` as a `repartition(1).sortWithinPartitions(
*order)` write would (one `part-00000-*.snappy.parquet` file, rows in that order, Spark's schema in the footer's
`org.apache.spark.sql.parquet.row.metadata`, a `_SUCCESS` marker) and returns True; it returns False, writing
nothing, for any frame it cannot write that way: a plan that is not a local relation, a nested column, a timestamp
Spark would write in another physical type (or a timestamp value), or rows to order by anything but plain string,
integer or boolean columns. A Spark job costs a scheduling round trip per write, which a small partition pays more than its rows.
`ms_of` names timestamp columns that are another long column's epoch milliseconds where those lie in Spark's range
(`ms_timestamp`, else null): their values come from those longs, not from the rows' timestamps (which Python would
convert by the process's time zone), so such a frame with rows is written too (the watermarks of a day: a job less).
"""
from __future__ import annotations

import os
import uuid
from typing import Mapping, Sequence, Union

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from .fs import is_local, local_path

SPARK_SCHEMA_KEY = b"org.apache.spark.sql.parquet.row.metadata"  # where Spark reads its schema back from
SPARK_VERSION_KEY = b"org.apache.spark.version"  # a file of Spark's own: its timestamps are read as written
# Timestamps Spark can hold (0001-01-01 .. 9999-12-31): a time outside has no timestamp (null).
MIN_TS_MS = -62_135_596_800_000
MAX_TS_MS = 253_402_300_799_999
# Before this instant (1900-01-01) Spark may rebase an INT96 value it writes or refuse it (int96RebaseModeInWrite):
# such a derived timestamp is left to Spark's write.
_REBASE_BEFORE_MS = -2_208_988_800_000
_ORDERABLE = (T.StringType, T.LongType, T.IntegerType, T.ShortType, T.ByteType, T.BooleanType)
_FLAT = (*_ORDERABLE, T.DoubleType, T.FloatType, T.DateType, T.BinaryType, T.TimestampType, T.TimestampNTZType)


def _int96(df: DataFrame, types: list, has_rows: bool, derived: int = 0) -> bool | None:
    """How Arrow writes these columns in Spark's physical types (True: timestamps as INT96), or None if it cannot:
    a nested column, or a timestamp that is not alone in a frame without rows (no value whose session time zone
    would need converting) in a type Spark's `outputTimestampType` writes alike (TIMESTAMP_MICROS: both are
    INT64 micros; INT96: TimestampType only, Arrow's switch applying to every timestamp). `derived`: how many
    more timestamp columns (TimestampType) have their values from milliseconds (`ms_of`): those may have rows."""
    if not all(isinstance(t, _FLAT) for t in types):
        return None
    timestamps = [t for t in types if isinstance(t, (T.TimestampType, T.TimestampNTZType))]
    if not timestamps and not derived:
        return False
    kind = df.sparkSession.conf.get("spark.sql.parquet.outputTimestampType", "INT96")
    if (timestamps and has_rows) or kind not in ("INT96", "TIMESTAMP_MICROS"):
        return None
    if kind == "INT96":
        return True if all(isinstance(t, T.TimestampType) for t in timestamps) else None
    return False


Order = Sequence[Union[str, tuple[str, str]]]  # a column ascending, nulls first; or (column, "nulls_last")


def _sort_keys(order: Order) -> list[tuple[str, str]] | None:
    """(column, nulls_first|nulls_last) per item of `order`; None for anything else (a Column)."""
    keys = [(o, "nulls_first") if isinstance(o, str) else o for o in order]
    ok = all(isinstance(k, tuple) and len(k) == 2 and isinstance(k[0], str) and k[1] in ("nulls_first", "nulls_last")
             for k in keys)
    return keys if ok else None


def ms_timestamp(ms: int | None) -> int | None:
    """The epoch microseconds of the timestamp Spark's `timestamp_millis` gives `ms` in its range, else None."""
    return ms * 1000 if ms is not None and MIN_TS_MS <= ms <= MAX_TS_MS else None


def written_by_driver(df: DataFrame, order: Order, path: str, ms_of: Mapping[str, str] | None = None) -> bool:
    if not is_local(path):
        return False  # a cluster's filesystem: Spark's writer knows it, the driver's pyarrow may not
    if df._jdf.queryExecution().optimizedPlan().getClass().getSimpleName() != "LocalRelation":
        return False
    ms_of = dict(ms_of or {})
    fields = {f.name: f.dataType for f in df.schema.fields}
    if not all(isinstance(fields.get(t), T.TimestampType) and isinstance(fields.get(m), T.LongType)
               for t, m in ms_of.items()):
        return False
    plain = [c for c in fields if c not in ms_of]
    # A local relation: collected without a job (the derived timestamps left out: Python would convert them).
    got = [tuple(r) for r in (df.select(*[f"`{c}`" for c in plain]) if ms_of else df).collect()]
    int96 = _int96(df, [fields[c] for c in plain], bool(got), len(ms_of))
    if int96 is None:
        return False
    at = {c: i for i, c in enumerate(plain)}
    derived = {t: [ms_timestamp(r[at[m]]) for r in got] for t, m in ms_of.items()}
    if any(v is not None and v < _REBASE_BEFORE_MS * 1000 for vs in derived.values() for v in vs):
        return False
    rows = [tuple(derived[c][k] if c in ms_of else r[at[c]] for c in fields) for k, r in enumerate(got)]
    arrow_schema = to_arrow_schema(df.schema)
    if len(rows) > 1:
        keys = _sort_keys(order)
        if keys is None or not all(isinstance(fields.get(c), _ORDERABLE) and c not in ms_of for c, _ in keys):
            return False
        index = list(fields)
        # Spark's ascending order: nulls first unless asked last; strings by UTF-8 bytes, which is code point order.
        rows.sort(key=lambda r: tuple(((r[i] is not None) == (how == "nulls_first"), r[i] if r[i] is not None else 0)
                                      for i, how in ((index.index(c), how) for c, how in keys)))
    columns = list(zip(*rows)) if rows else [()] * len(arrow_schema)
    arrays = [pa.array(list(c), type=pa.int64()).cast(f.type) if f.name in ms_of else pa.array(list(c), type=f.type)
              for c, f in zip(columns, arrow_schema)]
    table = pa.table(arrays, schema=arrow_schema.with_metadata({
        SPARK_SCHEMA_KEY: df.schema.json().encode(), SPARK_VERSION_KEY: df.sparkSession.version.encode()}))
    folder = local_path(path)
    os.makedirs(folder)  # fails if it exists, as Spark's errorifexists
    pq.write_table(table, f"{folder}/part-00000-{uuid.uuid4()}-c000.snappy.parquet", compression="snappy",
                   use_deprecated_int96_timestamps=int96)
    open(f"{folder}/_SUCCESS", "wb").close()
    return True
