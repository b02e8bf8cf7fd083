"""Reading the source log: role mapping, time conversion to long ms (once, on read), quarantine, range cut.

Everything here is set-based: the only values brought to the driver are counts, min/max arrival times
and the distinct split names (small by nature).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..semantics.config import COLUMN_ROLES, ConfigError, JobConfig

# Quarantine reasons, checked in this order (a row gets the first that applies).
MISSING_ARRIVAL_TIME = "missing_arrival_time"
BAD_ARRIVAL_TIME = "bad_arrival_time"
MISSING_EVENT_TIME = "missing_event_time"
BAD_EVENT_TIME = "bad_event_time"
MISSING_SPLIT = "missing_split"
UNDECLARED_SPLIT = "undeclared_split"
MISSING_OFFSET = "missing_offset"
BAD_OFFSET = "bad_offset"
MISSING_KEY = "missing_key"
DUPLICATE_OFFSET = "duplicate_offset"

REASON_COLUMN = "reason"
# Names the engine adds to rows; a payload column with one of these names would be overwritten.
ENGINE_COLUMNS = {"wm_before", "late_watermark"}

_STATUS = "__status"  # clean | quarantined | skipped
_REASON = "__reason"
_P = "__r_"  # prefix of the parsed role columns while the original columns are still around


@dataclass
class SourceData:
    """The source as the engine needs it, plus what the writer needs to account for every row read."""

    rows: DataFrame  # clean rows in range: split, offset, arrival_time, event_time, key, payload...
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
    _cached: DataFrame | None = None

    def release(self) -> None:
        if self._cached is not None:
            self._cached.unpersist()
            self._cached = None


def read_raw(spark: SparkSession, cfg: JobConfig) -> DataFrame:
    src = cfg.source
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(src.path)
    matches = path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()).globStatus(path)
    if matches is None or len(matches) == 0:
        raise ConfigError("source.path", f"{src.path}: no such file or directory")
    if src.format == "csv":
        # No schema inference: every column stays a string as written, so the quarantine shows it as read
        # and the conversion below is the only interpretation of the values.
        return spark.read.option("header", True).option("mode", "PERMISSIVE").csv(src.path)
    return spark.read.parquet(src.path)


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


def _offset_to_long(col: Column, dtype: T.DataType) -> Column:
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


def read_source(spark: SparkSession, cfg: JobConfig) -> SourceData:
    raw = read_raw(spark, cfg)
    return prepare_source(raw, cfg)


def partition_config(cfg: JobConfig, subpath: str, start_ms: int, end_ms: int) -> JobConfig:
    """The config of one partition's replay: its folder of the source and its arrival range [start, end)."""
    import dataclasses

    src = dataclasses.replace(cfg.source, path=f"{cfg.source.path.rstrip('/')}/{subpath}")
    rng = dataclasses.replace(cfg.replay, start_ms=start_ms, end_ms=end_ms)
    return dataclasses.replace(cfg, source=src, replay=rng)


def read_partition_source(spark: SparkSession, cfg: JobConfig, subpath: str, start_ms: int,
                          end_ms: int) -> SourceData:
    """Only the files of one partition (`dt=D` or `dt=D/hour=HH` under source.path), cut to [start, end).

    Files are looked up recursively with partition discovery off, so a day made of `hour=` folders reads as
    its data columns only (no `hour` column appears among the payload)."""
    pcfg = partition_config(cfg, subpath, start_ms, end_ms)
    path = pcfg.source.path
    jvm = spark.sparkContext._jvm
    hp = jvm.org.apache.hadoop.fs.Path(path)
    if not hp.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()).exists(hp):
        raise ConfigError("source.path", f"{path}: the partition has no folder in the source")
    reader = spark.read.option("recursiveFileLookup", "true")
    if pcfg.source.format == "csv":
        raw = reader.option("header", True).option("mode", "PERMISSIVE").csv(path)
    else:
        raw = reader.parquet(path)
    return prepare_source(raw, pcfg)


def prepare_source(raw: DataFrame, cfg: JobConfig) -> SourceData:
    """Parse, quarantine and cut a raw source DataFrame (as read) per cfg."""
    src = cfg.source
    event_time_from_source = cfg.window.time == "event"
    types = {f.name: f.dataType for f in raw.schema.fields}
    raw_cols = list(types)
    cols = dict(src.columns)
    needed = [r for r in COLUMN_ROLES if r != "event_time" or event_time_from_source]
    for role in needed:
        if cols[role] not in types:
            raise ConfigError(f"source.columns.{role}", f"column {cols[role]!r} is not in the source "
                                                        f"(columns: {', '.join(raw_cols)})")
    if REASON_COLUMN in types:
        raise ConfigError("source.path", f"the source has a column named {REASON_COLUMN!r}, which the "
                                         "quarantine output reserves")
    role_source_cols = {cols[r] for r in needed}
    if not event_time_from_source:
        # Ingestion/processing time: the source's event-time column (if any) is not what the replay uses.
        role_source_cols.add(cols["event_time"])
    payload = [c for c in raw_cols if c not in role_source_cols]
    for c in payload:
        if c in COLUMN_ROLES or c in ENGINE_COLUMNS:
            raise ConfigError("source.columns", f"source column {c!r} is not mapped to a role but its name is "
                                                "reserved by the engine: map it or rename it")

    def q(name: str) -> Column:
        return F.col(f"`{name}`")

    arrival = time_to_ms(q(cols["arrival_time"]), types[cols["arrival_time"]], "source.columns.arrival_time")
    if event_time_from_source:
        event = time_to_ms(q(cols["event_time"]), types[cols["event_time"]], "source.columns.event_time")
    else:
        event = F.col(f"{_P}arrival_time")
    split_t = types[cols["split"]]
    split = q(cols["split"]) if isinstance(split_t, T.StringType) else q(cols["split"]).cast("string")
    parsed = raw.withColumn(f"{_P}arrival_time", arrival).withColumns({
        f"{_P}event_time": event,
        f"{_P}split": split,
        f"{_P}offset": _offset_to_long(q(cols["offset"]), types[cols["offset"]]),
        f"{_P}key": q(cols["key"]),
    })
    a, e = F.col(f"{_P}arrival_time"), F.col(f"{_P}event_time")
    s, o, k = F.col(f"{_P}split"), F.col(f"{_P}offset"), F.col(f"{_P}key")

    reason = (F.when(q(cols["arrival_time"]).isNull(), F.lit(MISSING_ARRIVAL_TIME))
              .when(a.isNull(), F.lit(BAD_ARRIVAL_TIME)))
    if event_time_from_source:
        reason = (reason.when(q(cols["event_time"]).isNull(), F.lit(MISSING_EVENT_TIME))
                  .when(e.isNull(), F.lit(BAD_EVENT_TIME)))
    reason = reason.when(s.isNull() | (s == ""), F.lit(MISSING_SPLIT))
    if src.splits is not None:
        declared = sorted(set(src.splits) | set(src.side_inputs))
        reason = reason.when(~s.isin(declared), F.lit(UNDECLARED_SPLIT))
    reason = (reason.when(q(cols["offset"]).isNull(), F.lit(MISSING_OFFSET))
              .when(o.isNull(), F.lit(BAD_OFFSET))
              .when(k.isNull(), F.lit(MISSING_KEY)))

    start, end = cfg.replay.start_ms, cfg.replay.end_ms
    out_of_range = F.lit(False)
    if start is not None:
        out_of_range = out_of_range | (a < F.lit(start))
    if end is not None:
        out_of_range = out_of_range | (a >= F.lit(end))
    # A row whose arrival is known and outside the range belongs to another partition's replay: skipped, not bad.
    skipped = a.isNotNull() & out_of_range
    parsed = parsed.withColumn(_REASON, F.when(~skipped, reason)).withColumn(
        _STATUS, F.when(skipped, F.lit("skipped")).when(F.col(_REASON).isNotNull(), F.lit("quarantined"))
        .otherwise(F.lit("candidate")))

    # Offsets are strictly increasing per split, so a second row at the same (split, offset) is bad input.
    # The copy kept is the first in a total order over its content, so the choice cannot depend on files.
    tie_break = [F.col(f"{_P}arrival_time"), F.col(f"{_P}event_time")] + [q(c) for c in orderable_columns(raw)]
    w = Window.partitionBy(F.col(_STATUS), s, o).orderBy(*tie_break)
    dup = (F.col(_STATUS) == "candidate") & (F.row_number().over(w) > 1)
    parsed = (parsed.withColumn(_REASON, F.when(dup, F.lit(DUPLICATE_OFFSET)).otherwise(F.col(_REASON)))
              .withColumn(_STATUS, F.when(dup, F.lit("quarantined"))
                          .when(F.col(_STATUS) == "candidate", F.lit("clean")).otherwise(F.col(_STATUS))))
    parsed = parsed.persist(StorageLevel.MEMORY_AND_DISK)

    # One pass for every count, the range of the clean rows and the splits seen (a few names per status).
    stats = parsed.groupBy(_STATUS).agg(F.count(F.lit(1)).alias("n"), F.min(a).alias("lo"),
                                        F.max(a).alias("hi"), F.collect_set(s).alias("splits")).collect()
    by_status = {r[_STATUS]: r for r in stats}
    n = {st: (by_status[st]["n"] if st in by_status else 0) for st in ("clean", "quarantined", "skipped")}
    clean_stats = by_status.get("clean")
    lo = clean_stats["lo"] if clean_stats else None
    hi = clean_stats["hi"] if clean_stats else None
    start_ms = start if start is not None else lo
    # Without an explicit end, end = last arrival: every row is included, no tick follows the last row.
    end_ms = end if end is not None else hi
    if start_ms is not None and end_ms is None:
        end_ms = start_ms  # an explicit start and no clean row: an empty range
    if end_ms is not None and start_ms is None:
        start_ms = end_ms

    clean = parsed.filter(F.col(_STATUS) == "clean").select(
        F.col(f"{_P}split").alias("split"), F.col(f"{_P}offset").alias("offset"),
        F.col(f"{_P}arrival_time").alias("arrival_time"), F.col(f"{_P}event_time").alias("event_time"),
        F.col(f"{_P}key").alias("key"), *[q(c) for c in payload])
    quarantine = parsed.filter(F.col(_STATUS) == "quarantined").select(
        *[q(c) for c in raw_cols], F.col(_REASON).alias(REASON_COLUMN))

    if src.splits is not None:
        splits = sorted(set(src.splits) | set(src.side_inputs))
    else:
        seen = clean_stats["splits"] if clean_stats else []  # the split names of the clean rows: small
        splits = sorted(set(seen) | set(src.side_inputs))

    timestamp_roles = {r for r in ("arrival_time", "event_time")
                       if cols[r] in types and isinstance(types[cols[r]], (T.TimestampType, T.TimestampNTZType))}
    return SourceData(rows=clean, quarantine=quarantine, rows_read=sum(n.values()), clean_rows=n["clean"],
                      quarantined_rows=n["quarantined"], skipped_rows=n["skipped"], splits=splits,
                      start_ms=start_ms, end_ms=end_ms, source_columns=cols, payload_columns=payload,
                      timestamp_roles=timestamp_roles, _cached=parsed)
