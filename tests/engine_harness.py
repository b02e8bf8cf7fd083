"""Run the whole Spark engine (timeline + windows) on LogRows and normalise every output for comparison."""
from __future__ import annotations

import math
from typing import Any, Sequence

from pyspark.sql import functions as F
from pyspark.sql import types as T

from event_replay import engine
from event_replay.history.partitions import Clock
from event_replay.io.row_filter import WINDOWED, windowed_flag
from event_replay.semantics.config import JobConfig
from event_replay.semantics.model import ReplayResult
from event_replay.semantics.reference import declared_splits_of, replay_range_of

ROW_SCHEMA = T.StructType([
    T.StructField("split", T.StringType(), False), T.StructField("offset", T.LongType(), False),
    T.StructField("arrival_time", T.LongType(), False), T.StructField("event_time", T.LongType(), False),
    T.StructField("key", T.StringType(), True), T.StructField("value", T.LongType(), True),
])


def _num(v: Any) -> Any:
    if isinstance(v, float):
        return round(v, 9) if math.isfinite(v) else v
    return v


def normalise(firings, late, watermarks, aggs: Sequence[str]) -> dict[str, list[tuple]]:
    return {
        "firings": sorted((f[0], f[1], f[2], f[3], f[4], f[5], *(_num(x) for x in f[6:])) for f in firings),
        "late": sorted(late),
        "watermarks": sorted(watermarks, key=repr),
    }


def reference_outputs(result: ReplayResult, cfg: JobConfig) -> dict[str, list[tuple]]:
    names = list(cfg.aggregations)
    return normalise(
        [(f.key, f.window_start, f.window_end, f.fire_index, f.fire_watermark, f.fire_reason,
          *(f.aggregates[n] for n in names)) for f in result.firings],
        [(lr.row.split, lr.row.offset, lr.late_watermark) for lr in result.late_rows],
        [(c.replay_time, c.scope, c.split, c.watermark, c.idle) for c in result.watermarks], names)


def engine_outputs(spark, rows, cfg: JobConfig, declared: Sequence[str] | None = None) -> dict[str, list[tuple]]:
    """The engine on the same rows, range and declared splits the reference model would use."""
    start, end, in_range = replay_range_of(list(rows), cfg)
    splits = declared_splits_of(in_range, cfg, declared)
    df = spark.createDataFrame(
        [(r.split, r.offset, r.arrival_time, r.event_time, r.key, r.payload.get("value")) for r in in_range],
        ROW_SCHEMA)
    # As the IO layer does: the filter's verdict on the rows as read (the source's own event time included), then
    # under ingestion/processing time the event time is the arrival time.
    flag = windowed_flag(cfg, df, df.columns)
    if flag is not None:
        df = df.withColumn(WINDOWED, flag)
    if cfg.window.time != "event":
        df = df.withColumn("event_time", F.col("arrival_time"))
    result, _ = engine.replay(spark, df, cfg, splits, Clock(start, end))
    try:
        names = list(cfg.aggregations)
        firings = [tuple(r) for r in result.windows.select(
            "key", "window_start", "window_end", "fire_index", "fire_watermark", "fire_reason", *names).collect()]
        late = [tuple(r) for r in result.late_events.select("split", "offset", "late_watermark").collect()]
        wms = [tuple(r) for r in result.watermarks.select("replay_time", "scope", "split", "watermark", "idle").collect()]
        return normalise(firings, late, wms, names)
    finally:
        engine.release(spark)


def first_difference(a: dict[str, list[tuple]], b: dict[str, list[tuple]]) -> str:
    for name in a:
        if a[name] != b[name]:
            only_a = [x for x in a[name] if x not in b[name]][:5]
            only_b = [x for x in b[name] if x not in a[name]][:5]
            return f"{name}: only in first {only_a}; only in second {only_b}"
    return "no difference"
