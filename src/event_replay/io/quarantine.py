"""What a quarantined row is: the reasons, in the order they are checked, the time bounds, and the conversion of
a row's role columns (times to long epoch ms, offsets to longs) that decides most of them (docs/semantics.md,
"Quarantine"). Duplicates and out-of-order offsets are decided last (io/offsets.py)."""
from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..semantics.config_keys import ConfigError

# Quarantine reasons, checked in this order (a row gets the first that applies); duplicates and out-of-order
# offsets are decided last, among the rows that passed every other check.
MISSING_ARRIVAL_TIME = "missing_arrival_time"
BAD_ARRIVAL_TIME = "bad_arrival_time"
MISSING_EVENT_TIME = "missing_event_time"
BAD_EVENT_TIME = "bad_event_time"
MISSING_SPLIT = "missing_split"
UNDECLARED_SPLIT = "undeclared_split"
MISSING_OFFSET = "missing_offset"
BAD_OFFSET = "bad_offset"
MISSING_KEY = "missing_key"
DUPLICATE_OFFSET = "duplicate_offset"  # a second row at (split, offset) with different content
DUPLICATE_ROW = "duplicate_row"  # an exact copy of the row kept at (split, offset): a redelivery
OFFSET_OUT_OF_ORDER = "offset_out_of_order"  # offset not above one that arrived earlier in its split
# Time bounds (after the conversion to ms): [1970-01-01T00:00:00.000Z, 9999-12-31T23:59:59.999Z]. The upper one is
# the last instant a Spark/Parquet timestamp can be written back as; the lower one because an event log of a
# streaming job predates nothing before the epoch: a time before it is a zero or sentinel default (and
# watermark arithmetic near the long minimum would overflow).
MIN_TIME_MS = 0
MAX_TIME_MS = 253_402_300_799_999
ARRIVAL_TIME_BEFORE_1970 = "arrival_time_before_1970"
ARRIVAL_TIME_AFTER_9999 = "arrival_time_after_9999"
EVENT_TIME_BEFORE_1970 = "event_time_before_1970"
EVENT_TIME_AFTER_9999 = "event_time_after_9999"

REASON_COLUMN = "reason"
# With ingestion/processing time the source's event-time column is no role (the arrival time is the event time):
# it rides along under this name, untouched, so that a late row keeps every column it was read with.
SOURCE_EVENT_TIME = "__source_event_time"
# Names the engine adds to rows; a payload column with one of these names would be overwritten.
ENGINE_COLUMNS = {"wm_before", "late_watermark", "late_watermark_ms", SOURCE_EVENT_TIME}

STATUS = "__status"  # clean | quarantined | skipped
# The read's status as a number (the read-order pass's code, io/read_order.py), from which STATUS is derived:
# the pass over every row then compares no strings. The codes, once for the reader and the offset check.
STATUS_CODE = "__status_code"
STATUS_CODES = {"candidate": 0, "skipped": 1, "quarantined": 2}
FOLDER_START = "__folder_start"  # a span of partition folders read at once: the row's folder's start (ms)
REASON = "__reason"
PARSED = "__r_"  # prefix of the parsed role columns while the original columns are still around


def time_to_ms(col: Column, dtype: T.DataType, key: str) -> Column:
    """A timestamp, date, epoch-ms number or string as long epoch ms, sub-ms truncated; null if unparseable."""
    if isinstance(dtype, T.TimestampType):
        return F.unix_millis(col)  # floors the microseconds
    if isinstance(dtype, (T.TimestampNTZType, T.DateType)):
        return F.unix_millis(col.cast("timestamp"))  # the session time zone is UTC (spark.build_session)
    if isinstance(dtype, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
        return col.cast("long")
    if isinstance(dtype, (T.FloatType, T.DoubleType, T.DecimalType)):
        return F.floor(col).try_cast("long")
    if isinstance(dtype, T.StringType):
        s = F.trim(col)
        return F.coalesce(s.try_cast("long"), F.unix_millis(s.try_cast("timestamp")))
    raise ConfigError(key, f"has type {dtype.simpleString()}: expected a timestamp, epoch-ms integer or string")


def offset_to_long(col: Column, dtype: T.DataType) -> Column:
    if isinstance(dtype, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
        return col.cast("long")
    if isinstance(dtype, T.StringType):
        return F.trim(col).try_cast("long")
    if isinstance(dtype, (T.DecimalType, T.FloatType, T.DoubleType)):
        return F.when(col == F.floor(col), col.try_cast("long"))  # 1.5 is not an offset
    raise ConfigError("source.columns.offset", f"has type {dtype.simpleString()}: expected an integer")


def _orderable(dtype: T.DataType) -> bool:
    if isinstance(dtype, (T.MapType, T.VariantType)):
        return False
    if isinstance(dtype, T.ArrayType):
        return _orderable(dtype.elementType)
    if isinstance(dtype, T.StructType):
        return all(_orderable(f.dataType) for f in dtype.fields)
    return True


def orderable_columns(df: DataFrame) -> list[str]:
    return [f.name for f in df.schema.fields if _orderable(f.dataType)]


def row_content(raw: DataFrame) -> Column:
    """Every column of a row, as one comparable value (maps and variants compared through their JSON)."""
    fields = [F.col(f"`{f.name}`") if _orderable(f.dataType) else F.to_json(F.col(f"`{f.name}`"))
              for f in raw.schema.fields]
    return F.struct(*fields)
