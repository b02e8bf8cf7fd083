"""The replay's side of a comparison, normalised like the live side: from the outputs `replay run` wrote, or from an
engine result (one variant of `replay tune --against-live`), and the partitions a comparison covers.

Firings: key (string; live.KEYLESS_KEY for a job without a key), window_start_ms, window_end_ms, fire_index, fire_watermark_ms, fire_reason, agg__<name>,
replay_partition. Late rows: split, offset, key (string), time_ms (the time the windows read), arrival_ms,
late_watermark_ms, replay_partition. Watermarks: replay_time_ms, scope, split, watermark_ms, idle.

The partition of a window is the `dt=` (and `hour=`) partition whose replay fired it when the outputs are
partitioned, else the UTC day (or hour) of its max timestamp; of a late row, its `dt=` partition or the day of its
arrival. A comparison scoped to partitions A..B (`--partition`, `--partitions`) reads one partition more on each
side of the replay's outputs, so that a window the live job fired on the other side of midnight is still matched.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..history.partitions import Partition, parse_range, partition_ids
from ..quality.prepare import OutputsMissing, partition_columns, read_outputs, to_ms, watermarks_batch
from ..semantics.config import JobConfig
from ..semantics.config_keys import ConfigError
from .live import AGG_PREFIX, KEYLESS_KEY
from .live_values import replay_aggregate_type
from .live_spec import CompareInputError


@dataclass(frozen=True)
class Scope:
    """The partitions compared: [first, last] inclusive, ids YYYY-MM-DD or YYYY-MM-DDTHH; None = everything."""
    first: str | None = None
    last: str | None = None

    @property
    def hourly(self) -> bool:
        return bool(self.first and "T" in self.first)

    @property
    def label(self) -> str:
        if self.first is None:
            return "all partitions"
        return self.first if self.first == self.last else f"{self.first}..{self.last}"

    @staticmethod
    def parse(partition: str | None, partitions: str | None) -> "Scope":
        if partition and partitions:
            raise CompareInputError("--partition", "--partition and --partitions exclude each other")
        try:
            if partition:
                p = Partition.parse(partition)
                return Scope(p.id, p.id)
            if partitions:
                lo, hi = parse_range(partitions)
                return Scope(lo.id, hi.id)
        except ConfigError as exc:
            raise CompareInputError(exc.key, exc.why) from None
        return Scope()

    @property
    def subpaths(self) -> tuple[str, ...] | None:
        """The source's folders of the partitions in scope (None: the whole source)."""
        if self.first is None:
            return None
        return tuple(Partition.parse(i).subpath for i in partition_ids(*parse_range(f"{self.first}..{self.last}")))

    def widened(self) -> tuple[str, str] | None:
        """One partition more on each side (the ids the replay's outputs are read for)."""
        if self.first is None:
            return None
        step = dt.timedelta(hours=1) if self.hourly else dt.timedelta(days=1)
        fmt = "%Y-%m-%dT%H" if self.hourly else "%Y-%m-%d"
        parse = (lambda s: dt.datetime.strptime(s, fmt))
        return (parse(self.first) - step).strftime(fmt), (parse(self.last) + step).strftime(fmt)

    def contains(self, label: Column) -> Column:
        if self.first is None:
            return F.lit(True)
        return label.between(F.lit(self.first), F.lit(self.last))


def time_label(ms: Column, hourly: bool) -> Column:
    """The UTC day (YYYY-MM-DD) or hour (YYYY-MM-DDTHH) of an epoch-ms time."""
    return F.date_format(F.timestamp_millis(ms), "yyyy-MM-dd'T'HH" if hourly else "yyyy-MM-dd")


@dataclass
class ReplaySide:
    firings: DataFrame
    late: DataFrame
    watermarks: DataFrame
    types: dict[str, T.DataType]  # the replay's aggregate columns' types
    partitioned: bool
    output_path: str | None = None


def _partition_label(df: DataFrame) -> Column | None:
    parts = partition_columns(df)
    if not parts:
        return None
    label = F.col("dt").cast("string")
    if "hour" in parts:
        label = F.concat(label, F.lit("T"), F.lpad(F.col("hour").cast("string"), 2, "0"))
    return label


def read_replay(spark: SparkSession, cfg: JobConfig, scope: Scope) -> ReplaySide:
    """The outputs under cfg.output.path (a missing output is bad input: run `replay run` first)."""
    try:
        out = read_outputs(spark, cfg.output.path)
    except OutputsMissing as exc:
        raise CompareInputError("--config", f"{exc} (replay first: replay run --config ...)") from None
    windows, late, wm = out["windows"], out["late_events"], out["watermarks"]
    missing = [a for a in cfg.aggregations if a not in windows.columns]
    if missing:
        raise CompareInputError("--config", f"the replay's windows/ under {cfg.output.path} has no column "
                                            f"{', '.join(missing)} of the config's aggregations (another config?)")
    types = {a: windows.schema[a].dataType for a in cfg.aggregations}
    wlabel, llabel, mlabel = _partition_label(windows), _partition_label(late), _partition_label(wm)
    wide = scope.widened()
    if wide is not None:  # partition pruning: dt= folders outside the widened scope are not read
        lo, hi = wide
        if wlabel is not None:
            windows = windows.where(wlabel.between(lo, hi))
        if llabel is not None:
            late = late.where(llabel.between(lo, hi))
        if mlabel is not None:
            wm = wm.where(mlabel.between(lo, hi))

    start = to_ms(F.col("window_start"), windows.schema["window_start"].dataType)
    end = to_ms(F.col("window_end"), windows.schema["window_end"].dataType)
    fw = (F.col("fire_watermark_ms").cast("long") if "fire_watermark_ms" in windows.columns
          else to_ms(F.col("fire_watermark"), windows.schema["fire_watermark"].dataType))
    firings = windows.select(
        _key(cfg, "key").alias("key"), start.alias("window_start_ms"), end.alias("window_end_ms"),
        F.col("fire_index").cast("long").alias("fire_index"), fw.alias("fire_watermark_ms"), "fire_reason",
        *[_agg(F.col(f"`{a}`"), types[a]).alias(AGG_PREFIX + a) for a in cfg.aggregations],
        (wlabel if wlabel is not None else time_label(end - 1, scope.hourly)).alias("replay_partition"))
    late_n = _late_rows(late, cfg, llabel, scope)
    return ReplaySide(firings=firings, late=late_n, watermarks=watermarks_batch(wm).drop("replay_time", "watermark"),
                      types=types, partitioned=wlabel is not None, output_path=cfg.output.path)


def _late_rows(late: DataFrame, cfg: JobConfig, label: Column | None, scope: Scope) -> DataFrame:
    """late_events/ normalised (quality.prepare.late_events_batch's columns, with the partition label)."""
    cols = cfg.source.columns
    time_col = cols["event_time"] if cfg.window.time == "event" else cols["arrival_time"]

    def ms(name: str) -> Column:
        return to_ms(F.col(f"`{name}`"), late.schema[name].dataType)

    wm = (F.col("late_watermark_ms").cast("long") if "late_watermark_ms" in late.columns else ms("late_watermark"))
    arrival = ms(cols["arrival_time"])
    return late.select(F.col(f"`{cols['split']}`").cast("string").alias("split"),
                       F.col(f"`{cols['offset']}`").cast("long").alias("offset"),
                       _key(cfg, cols["key"]).alias("key"), ms(time_col).alias("time_ms"),
                       arrival.alias("arrival_ms"), wm.alias("late_watermark_ms"),
                       (label if label is not None else time_label(arrival, scope.hourly)).alias("replay_partition"))


def _key(cfg: JobConfig, name: str | None) -> Column:
    # A job without a key: the comparison's key for it (live.py); its late rows have no key column at all.
    return F.lit(KEYLESS_KEY) if cfg.source.keyless else F.col(f"`{name}`").cast("string")


def _agg(c: Column, dtype: T.DataType) -> Column:
    return c.cast(replay_aggregate_type(dtype))


def from_engine(result, cfg: JobConfig, hourly: bool = False) -> ReplaySide:
    """An engine result (engine.contract.EngineResult: long-ms times) as the replay side."""
    w = result.windows
    types = {a: w.schema[a].dataType for a in cfg.aggregations}
    firings = w.select(
        _key(cfg, "key").alias("key"), F.col("window_start").alias("window_start_ms"),
        F.col("window_end").alias("window_end_ms"), F.col("fire_index").cast("long").alias("fire_index"),
        F.col("fire_watermark").alias("fire_watermark_ms"), "fire_reason",
        *[_agg(F.col(f"`{a}`"), types[a]).alias(AGG_PREFIX + a) for a in cfg.aggregations],
        time_label(F.col("window_end") - 1, hourly).alias("replay_partition"))
    time_col = "event_time" if cfg.window.time == "event" else "arrival_time"
    late = result.late_events.select(
        F.col("split").cast("string").alias("split"), F.col("offset").cast("long").alias("offset"),
        _key(cfg, "key").alias("key"), F.col(time_col).alias("time_ms"),
        F.col("arrival_time").alias("arrival_ms"), F.col("late_watermark").alias("late_watermark_ms"),
        time_label(F.col("arrival_time"), hourly).alias("replay_partition"))
    wm = result.watermarks.select(F.col("replay_time").alias("replay_time_ms"), "scope", "split",
                                  F.col("watermark").alias("watermark_ms"), "idle")
    return ReplaySide(firings=firings, late=late, watermarks=wm, types=types, partitioned=False)
