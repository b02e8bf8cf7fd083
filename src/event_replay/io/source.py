"""Reading the source log: role mapping, time conversion to long ms (once, on read), quarantine, range cut
(the quarantine reasons and the offset rules: docs/semantics.md, "Quarantine").

Everything here is set-based: the only values brought to the driver are counts, min/max arrival times
and the distinct split names (small by nature).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..semantics.config import COLUMN_ROLES, ConfigError, JobConfig

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
    event_time_is_role: bool = True  # False for ingestion/processing time (see SOURCE_EVENT_TIME)
    _cached: list[DataFrame] = field(default_factory=list)

    def release(self) -> None:
        for df in self._cached:
            df.unpersist()
        self._cached = []


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
    check_schema_drift(spark, data_files(spark, src.path), src.format)
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


def _content(raw: DataFrame) -> Column:
    """Every column of a row, as one comparable value (maps and variants compared through their JSON)."""
    fields = [F.col(f"`{f.name}`") if _orderable(f.dataType) else F.to_json(F.col(f"`{f.name}`"))
              for f in raw.schema.fields]
    return F.struct(*fields)


def read_source(spark: SparkSession, cfg: JobConfig) -> SourceData:
    raw = read_raw(spark, cfg)
    return prepare_source(raw, cfg)


def partition_config(cfg: JobConfig, subpath: str, start_ms: int, end_ms: int) -> JobConfig:
    """The config of one partition's replay: its folder of the source and its arrival range [start, end)."""
    import dataclasses

    src = dataclasses.replace(cfg.source, path=f"{cfg.source.path.rstrip('/')}/{subpath}")
    rng = dataclasses.replace(cfg.replay, start_ms=start_ms, end_ms=end_ms)
    return dataclasses.replace(cfg, source=src, replay=rng)


class SchemaDriftError(ConfigError):
    """A source file whose column types differ from the others: refused before the replay, naming the file."""

    def __init__(self, why: str):
        super().__init__("source.path", why)


def _hadoop(spark: SparkSession, path: str):
    jvm = spark.sparkContext._jvm
    p = jvm.org.apache.hadoop.fs.Path(path)
    return p.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), p


def _hidden(name: str) -> bool:
    return name.startswith("_") or name.startswith(".")  # as Spark's file index: _SUCCESS, .crc, _staging...


def data_files(spark: SparkSession, path: str) -> list[str]:
    """The data files under a file, folder or glob (recursively; hidden names skipped), sorted."""
    fs, p = _hadoop(spark, path)
    matches = fs.globStatus(p)
    out = []
    for st in (matches or []):
        if st.isFile():
            out.append(st.getPath().toString())
            continue
        root = st.getPath().toUri().getPath().rstrip("/")
        it = fs.listFiles(st.getPath(), True)
        while it.hasNext():
            f = it.next().getPath()
            rel = f.toUri().getPath()[len(root):].strip("/").split("/")
            if not any(_hidden(part) for part in rel):
                out.append(f.toString())
    return sorted(out)


def partition_of(path: str) -> str:
    """The `dt=`/`hour=` part of a file's path ('-' if none), to report where a bad file is."""
    parts = [c for c in path.split("/") if "=" in c and not _hidden(c)]
    return "/".join(parts) or "-"


def _arrow_type_name(t) -> str:
    """An Arrow type under the name of the Spark type it reads as (units and large variants do not matter)."""
    import pyarrow as pa

    if pa.types.is_timestamp(t):
        return "timestamp" if t.tz else "timestamp_ntz"
    if pa.types.is_large_string(t) or pa.types.is_string(t):
        return "string"
    if pa.types.is_large_binary(t) or pa.types.is_binary(t):
        return "binary"
    if pa.types.is_dictionary(t):
        return _arrow_type_name(t.value_type)
    return str(t)


def file_column_types(spark: SparkSession, path: str) -> dict[str, str]:
    """A Parquet file's column types, from its footer only: with pyarrow for a local file (no Spark job), else
    through Spark's own schema inference on that one file."""
    from .fs import is_local, local_path

    if is_local(path):
        import pyarrow.parquet as pq

        schema = pq.read_schema(local_path(path))
        return {f.name: _arrow_type_name(f.type) for f in schema}
    return {f.name: f.dataType.simpleString() for f in spark.read.parquet(path).schema.fields}


def check_schema_drift(spark: SparkSession, files: list[str], fmt: str, reference: str | None = None) -> None:
    """Refuse a source whose files disagree on a column's type (schema drift), naming the file and partition.

    Spark reads a folder with the schema of one of its files and then either fails deep inside a task or
    converts silently; every file's footer is compared instead with the reference file (by default the first),
    one small read each. Columns present in some files only are not drift (Spark fills them with nulls). CSV
    columns are all strings as read: no drift."""
    if fmt != "parquet" or not files:
        return
    reference = reference or files[0]
    ref_types = file_column_types(spark, reference)
    for f in files:
        if f == reference:
            continue
        for name, got in file_column_types(spark, f).items():
            want = ref_types.get(name)
            if want is not None and got != want:
                raise SchemaDriftError(
                    f"schema drift: column {name!r} is {got} in {f} (partition {partition_of(f)}) but {want} in "
                    f"{reference} (partition {partition_of(reference)}); rewrite the file with one type "
                    "(nothing was replayed)")


class MissingPartitionError(ConfigError):
    """A partition with no folder in the source (not the same as an empty one)."""

    def __init__(self, why: str):
        super().__init__("--partition", why)


def _sibling_partitions(spark: SparkSession, root: str, subpath: str) -> list[str]:
    """The other partition folders of the source (same granularity as subpath), nearest first: earlier ones
    from the nearest back, then later ones."""
    fs, rp = _hadoop(spark, root)
    if not fs.exists(rp):
        return []
    days = sorted(st.getPath().getName() for st in fs.listStatus(rp)
                  if st.isDirectory() and st.getPath().getName().startswith("dt="))
    names = days
    if "/" in subpath:  # hourly: dt=D/hour=HH
        names = []
        for d in days:
            day_p = spark.sparkContext._jvm.org.apache.hadoop.fs.Path(f"{root}/{d}")
            names += sorted(f"{d}/{st.getPath().getName()}" for st in fs.listStatus(day_p)
                            if st.isDirectory() and st.getPath().getName().startswith("hour="))
    before = [n for n in names if n < subpath][::-1]
    after = [n for n in names if n > subpath]
    return before + after


def _neighbour_file(spark: SparkSession, cfg: JobConfig, subpath: str, earlier_only: bool = False,
                    limit: int = 48) -> str | None:
    """The first data file of the nearest partition that has one (earlier first), within `limit` partitions."""
    root = cfg.source.path.rstrip("/")
    names = _sibling_partitions(spark, root, subpath)
    if earlier_only:
        names = [n for n in names if n < subpath]
    for name in names[:limit]:
        files = data_files(spark, f"{root}/{name}")
        if files:
            return files[0]
    return None


def _csv_reader(spark: SparkSession):
    # No schema inference: every column stays a string as written (see read_raw).
    return spark.read.option("header", True).option("mode", "PERMISSIVE")


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
    fs, hp = _hadoop(spark, path)
    exists = fs.exists(hp)
    if not exists and not allow_missing:
        raise MissingPartitionError(f"partition {subpath} has no folder in the source ({path}): it is missing, "
                                    "not empty; replay it as empty with --allow-missing if no data will come")
    files = data_files(spark, path) if exists else []
    if not files:
        neighbour = _neighbour_file(spark, cfg, subpath)
        if neighbour is not None:
            if cfg.source.format == "csv":
                schema = _csv_reader(spark).csv(neighbour).schema
            else:
                schema = spark.read.parquet(neighbour).schema
        else:  # nothing anywhere to borrow from: the role columns as strings (converted as any string column)
            schema = T.StructType([T.StructField(c, T.StringType())
                                   for c in dict.fromkeys(cfg.source.columns.values())])
        raw = spark.createDataFrame([], schema)
        return prepare_source(raw, pcfg, carried_offsets)
    # Drift is judged against the past (the nearest earlier partition): a later partition's drift is its own.
    check_schema_drift(spark, files, pcfg.source.format, _neighbour_file(spark, cfg, subpath, earlier_only=True))
    reader = spark.read.option("recursiveFileLookup", "true")
    if pcfg.source.format == "csv":
        raw = reader.option("header", True).option("mode", "PERMISSIVE").csv(path)
    else:
        raw = reader.parquet(path)
    return prepare_source(raw, pcfg, carried_offsets)


def _carried_offset(s: Column, carried: Mapping[str, int] | None) -> Column:
    """The last offset of the row's split in the partitions before this one (null: none, or a whole range)."""
    if not carried:
        return F.lit(None).cast("long")
    pairs = [x for name, off in sorted(carried.items()) for x in (F.lit(name), F.lit(int(off)).cast("long"))]
    return F.try_element_at(F.create_map(*pairs), s)


def _exact_offset_checks(parsed: DataFrame, raw: DataFrame, s: Column, o: Column, a: Column,
                         carried: Mapping[str, int] | None = None) -> DataFrame:
    """Duplicates and out-of-order offsets, decided row by row (docs/semantics.md, "Quarantine").

    Offsets rise strictly in a split (SEMANTICS §1; Flink reads a split in offset order). In the order (arrival,
    offset, then the row's content, so that nothing depends on files) each row is compared with the largest offset
    before it in its split, `M` (with the split's last offset carried from the partitions before, if any):
    above M it is clean; equal to M it is a second row at that offset: `duplicate_row` when it is an exact copy of
    the first row at that offset in the range (a redelivery), `duplicate_offset` otherwise (an exact copy always
    has the same arrival time, so one whose first copy is in an earlier partition cannot occur); below M it is
    `offset_out_of_order`. Only M is needed, so a partitioned replay carrying each split's last offset quarantines
    the same rows for the same reasons as one replay of the range."""
    order = [a, o, F.col(f"{_P}event_time")] + [F.col(f"`{c}`") for c in orderable_columns(raw)]
    before = Window.partitionBy(F.col(_STATUS), s).orderBy(*order).rowsBetween(Window.unboundedPreceding, -1)
    at_offset = Window.partitionBy(F.col(_STATUS), s, o).orderBy(*order)
    cand = F.col(_STATUS) == "candidate"
    m = F.greatest(F.max(o).over(before), _carried_offset(s, carried))  # greatest skips nulls
    content = _content(raw)
    copy = (F.row_number().over(at_offset) > 1) & F.first(content).over(at_offset).eqNullSafe(content)
    reason = (F.when(cand & (o == m) & copy, F.lit(DUPLICATE_ROW)).when(cand & (o == m), F.lit(DUPLICATE_OFFSET))
              .when(cand & (o < m), F.lit(OFFSET_OUT_OF_ORDER)))
    parsed = parsed.withColumn("__offset_reason", reason)
    return (parsed.withColumn(_REASON, F.coalesce(F.col("__offset_reason"), F.col(_REASON)))
            .withColumn(_STATUS, F.when(F.col("__offset_reason").isNotNull(), F.lit("quarantined"))
                        .when(cand, F.lit("clean")).otherwise(F.col(_STATUS)))
            .drop("__offset_reason"))


_PRECHECK = True  # False: every split goes through the exact checks (tests prove the pre-check changes nothing)
_split_hash = F.xxhash64  # the pre-check's key for a split (tests force collisions through it)


def _check_offsets(parsed: DataFrame, raw: DataFrame, s: Column, o: Column, a: Column,
                   carried: Mapping[str, int] | None = None) -> tuple[DataFrame, list[DataFrame], dict[str, dict]]:
    """The candidates become clean, or quarantined as duplicates or out-of-order offsets (_exact_offset_checks);
    returns the checked rows, the frames cached for them, and per status: n, lo/hi (arrival range), splits.

    The exact checks sort whole rows twice; they run only on the splits that can hold such a row. A split is
    clean when, in (arrival, offset) order, every offset is above all the offsets before it: one sort of four
    narrow columns, in the same pass as the counts. That finds every bad row's split: a second row at
    (split, offset) either arrives at the same instant as the first (the pair is adjacent: equal offsets) or
    later (an offset not above an earlier one); an out-of-order offset is not above one that arrived before it.
    Since both exact windows partition by split, whole splits go through them unchanged. `carried`: each split's
    last offset in the partitions before (a row not above it is bad too)."""
    cand = F.col(_STATUS) == "candidate"
    # Sorted by longs only (a status code, a 64-bit hash of the split): comparing the split strings was most of the
    # sort's cost. Two splits with one hash would share a running max: such a hash group is sent to the exact
    # checks whole (it holds more than one split name), so a collision costs time, never exactness.
    code = F.when(cand, 0).when(F.col(_STATUS) == "skipped", 1).otherwise(2)
    narrow = parsed.select(code.alias("c"), F.when(cand, _split_hash(s)).alias("h"), s.alias("s"), o.alias("o"),
                           a.alias("a"), _carried_offset(s, carried).alias("carried"))
    before = Window.partitionBy("c", "h").orderBy("a", "o").rowsBetween(Window.unboundedPreceding, -1)
    # Grouped by split for the candidates only (their split names are the log's splits: few); the other rows
    # by status alone, whatever they hold in their split column.
    not_above = (F.col("o") <= F.max("o").over(before)) | (F.col("o") <= F.col("carried"))
    per_hash = (narrow.withColumn("_bad", (F.col("c") == 0) & F.coalesce(not_above, F.lit(False)))
                .groupBy("c", "h")
                .agg(F.count(F.lit(1)).alias("n"), F.min("a").alias("lo"), F.max("a").alias("hi"),
                     F.max(F.col("_bad").cast("int")).alias("bad"),
                     F.collect_set(F.when(F.col("c") == 0, F.col("s"))).alias("names"))
                .collect())
    # Per status (a candidate that passes is clean): counts, arrival range, split names; and the splits to check.
    status_of = {0: "clean", 1: "skipped", 2: "quarantined"}
    stats: dict[str, dict] = {}
    dirty: set[str] = set()
    for r in per_hash:
        st = status_of[r["c"]]
        # A group of two splits (a hash collision) shared one running max: its splits are checked exactly.
        if st == "clean" and (r["bad"] or len(r["names"]) > 1 or not _PRECHECK):
            dirty.update(r["names"])
        d = stats.setdefault(st, {"n": 0, "lo": None, "hi": None, "splits": set()})
        d["n"] += r["n"]
        d["lo"] = min((v for v in (d["lo"], r["lo"]) if v is not None), default=None)
        d["hi"] = max((v for v in (d["hi"], r["hi"]) if v is not None), default=None)
        d["splits"].update(r["names"])
    if not dirty:
        return parsed.withColumn(_STATUS, F.when(cand, F.lit("clean")).otherwise(F.col(_STATUS))), [], stats
    exact = cand & s.isin(sorted(dirty))
    # The dirty splits' rows are kept once checked (their windows are not re-run by every later read).
    checked = _exact_offset_checks(parsed.filter(exact), raw, s, o, a, carried).persist(StorageLevel.MEMORY_AND_DISK)
    rest = parsed.filter(~exact).withColumn(_STATUS, F.when(cand, F.lit("clean")).otherwise(F.col(_STATUS)))
    out = rest.unionByName(checked)
    # Counted again after the exact checks (only the clean rows' split names are brought back).
    rows = (out.groupBy(_STATUS).agg(F.count(F.lit(1)).alias("n"), F.min(a).alias("lo"), F.max(a).alias("hi"),
                                     F.collect_set(F.when(F.col(_STATUS) == "clean", s)).alias("splits"))
            .collect())
    return out, [checked], {r[_STATUS]: {"n": r["n"], "lo": r["lo"], "hi": r["hi"], "splits": set(r["splits"])}
                            for r in rows}


def prepare_source(raw: DataFrame, cfg: JobConfig, carried_offsets: Mapping[str, int] | None = None) -> SourceData:
    """Parse, quarantine and cut a raw source DataFrame (as read) per cfg. `carried_offsets`: each split's last
    offset in the partitions replayed before this one (engine/state.py), so that a redelivery or an offset going
    back across a cut is quarantined as in one replay of the whole range."""
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
              .when(a.isNull(), F.lit(BAD_ARRIVAL_TIME))
              .when(a < F.lit(MIN_TIME_MS), F.lit(ARRIVAL_TIME_BEFORE_1970))
              .when(a > F.lit(MAX_TIME_MS), F.lit(ARRIVAL_TIME_AFTER_9999)))
    if event_time_from_source:
        reason = (reason.when(q(cols["event_time"]).isNull(), F.lit(MISSING_EVENT_TIME))
                  .when(e.isNull(), F.lit(BAD_EVENT_TIME))
                  .when(e < F.lit(MIN_TIME_MS), F.lit(EVENT_TIME_BEFORE_1970))
                  .when(e > F.lit(MAX_TIME_MS), F.lit(EVENT_TIME_AFTER_9999)))
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
    # A row whose arrival is valid and outside the range belongs to another partition's replay: skipped, not bad.
    # An arrival outside the time bounds belongs to no partition's replay: quarantined wherever it is read.
    # (Null-safe: a null arrival must give False here, not null, or the row's reason would be lost.)
    skipped = a.isNotNull() & a.between(F.lit(MIN_TIME_MS), F.lit(MAX_TIME_MS)) & out_of_range
    parsed = parsed.withColumn(_REASON, F.when(~skipped, reason)).withColumn(
        _STATUS, F.when(skipped, F.lit("skipped")).when(F.col(_REASON).isNotNull(), F.lit("quarantined"))
        .otherwise(F.lit("candidate")))

    # The rows are read by the offset check, the counts and the engine (twice). Parquet is read again each time,
    # with only the columns each read needs (building an in-memory copy of whole rows costs more than that); CSV
    # is parsed once and kept.
    cached = []
    if cfg.source.format == "csv":
        parsed = parsed.persist(StorageLevel.MEMORY_AND_DISK)
        cached.append(parsed)
    parsed, more, by_status = _check_offsets(parsed, raw, s, o, a, carried_offsets)
    cached += more

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

    carried_source_time = ([q(cols["event_time"]).alias(SOURCE_EVENT_TIME)]
                           if not event_time_from_source and cols["event_time"] in types else [])
    clean = parsed.filter(F.col(_STATUS) == "clean").select(
        F.col(f"{_P}split").alias("split"), F.col(f"{_P}offset").alias("offset"),
        F.col(f"{_P}arrival_time").alias("arrival_time"), F.col(f"{_P}event_time").alias("event_time"),
        F.col(f"{_P}key").alias("key"), *[q(c) for c in payload], *carried_source_time)
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
                      timestamp_roles=timestamp_roles, event_time_is_role=event_time_from_source, _cached=cached)
