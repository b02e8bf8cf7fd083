"""The timeline tests' shared harness: a config, rows by (split, arrival, event time), and one run of the engine's
timeline (engine/timeline) beside the reference model's answer for the same log, as plain Python values."""
from __future__ import annotations

from typing import Any, Sequence

from pyspark.sql import functions as F

from event_replay.engine.timeline import compute_timeline
from event_replay.io.read_order import TickPartials, read_order_records
from event_replay.semantics.config import JobConfig, parse_config
from event_replay.semantics.durations import NEG_INF
from event_replay.semantics.model import LogRow
from event_replay.semantics.reference import declared_splits_of, replay, replay_range_of

SCHEMA = "split string, offset long, arrival_time long, event_time long, key string, value long"


def timeline_config(watermark: dict[str, Any], replay_range: dict[str, Any] | None = None,
                    source: dict[str, Any] | None = None) -> JobConfig:
    return parse_config({
        "source": {"path": "unused", **(source or {})},
        "watermark": watermark,
        "window": {"type": "tumbling", "size": 4000},
        "aggregations": {"cnt": "count(*)"},
        "replay": replay_range or {},
        "output": {"path": "unused"},
    })


def log_rows(triples: Sequence[tuple[str, int, int]]) -> list[LogRow]:
    """(split, arrival, event time) with offsets counted per split."""
    offsets: dict[str, int] = {}
    out = []
    for split, arrival, event in triples:
        offsets[split] = offsets.get(split, -1) + 1
        out.append(LogRow(split, offsets[split], arrival, event, key="a", payload={"value": 1}))
    return out


def read_partials(rows, interval: int, partitions: int = 5) -> TickPartials | None:
    """What the read-order pass (io/read_order.py) gives the timeline for `rows`, every row a clean candidate. The
    rows are spread over `partitions` by offset, so that a (split, tick) gets an entry from each of several, as
    where a real read's files meet."""
    spread = rows.repartition(partitions, F.col("offset"))
    return read_order_records(F.lit(0), F.col("split"), F.lit(0).cast("long"), F.col("offset"),
                              F.col("arrival_time"), spread, F.col("event_time"), interval).ticks


def run_timeline(spark, rows: Sequence[LogRow], cfg: JobConfig, declared: Sequence[str] | None = None,
                 with_read_partials: bool = False):
    """The engine's timeline and the reference's answer for the same log, as plain Python values;
    `with_read_partials`: the timeline takes the read-order pass's tick records, as after a read."""
    start, end, in_range = replay_range_of(list(rows), cfg)
    splits = declared_splits_of(in_range, cfg, declared)
    if cfg.window.time != "event":  # the IO layer's job: event time is the arrival time
        in_range = [LogRow(r.split, r.offset, r.arrival_time, r.arrival_time, r.key, r.payload) for r in in_range]
    df = spark.createDataFrame([(r.split, r.offset, r.arrival_time, r.event_time, str(r.key),
                                 r.payload.get("value")) for r in in_range], SCHEMA)
    partials = read_partials(df, cfg.watermark.interval_ms) if with_read_partials and cfg.watermark.periodic else None
    tl = compute_timeline(df, cfg, splits, start, end, partials)
    # One action for the three outputs (tagged union), so their shared plan runs once.
    out = (tl.rows.select(F.lit("r").alias("o"), F.lit(None).cast("long").alias("replay_time"),
                          F.lit(None).cast("string").alias("scope"), "split", "offset",
                          F.col("wm_before").alias("watermark"), F.lit(None).cast("boolean").alias("idle"))
           .unionByName(tl.watermarks.select(F.lit("w").alias("o"), "replay_time", "scope", "split",
                                             F.lit(None).cast("long").alias("offset"), "watermark", "idle"))
           .unionByName(tl.stream_values.select(F.lit("v").alias("o"), F.lit(None).cast("long").alias("replay_time"),
                                                F.lit(None).cast("string").alias("scope"),
                                                F.lit(None).cast("string").alias("split"),
                                                F.lit(None).cast("long").alias("offset"), "watermark",
                                                F.lit(None).cast("boolean").alias("idle")))
           .collect())
    row_list = [(r["split"], r["offset"], r["watermark"]) for r in out if r["o"] == "r"]
    got_wm_before = {(s, o): w for s, o, w in row_list}
    assert len(row_list) == len(got_wm_before) == len(in_range)
    got_changes = sorted(((r["replay_time"], r["scope"], r["split"], r["watermark"], r["idle"])
                          for r in out if r["o"] == "w"), key=change_key)
    got_values = [r["watermark"] for r in out if r["o"] == "v"]
    ref = replay(rows, cfg, declared_splits=declared)
    want_changes = sorted(((c.replay_time, c.scope, c.split, c.watermark, c.idle) for c in ref.watermarks),
                          key=change_key)
    return (got_wm_before, got_changes, sorted(got_values)), (ref.wm_before, want_changes, ref.stream_values)


def change_key(c: tuple) -> tuple:
    t, scope, split, wm, idle = c
    return (t, scope, split or "", NEG_INF if wm is None else wm, idle)


def stream_changes(changes) -> list[tuple[int, int | None, bool]]:
    return [(t, wm, idle) for t, scope, _, wm, idle in changes if scope == "stream"]
