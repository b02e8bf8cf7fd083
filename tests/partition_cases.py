"""What the partition tests share: the reference and the engine fed a log partition by partition (the engine's
state going through disk), outputs normalised for comparison, a three-hour `dt=/hour=` log on disk, and one
partition's run as `replay run --partition` makes it (`run_partition`)."""
from __future__ import annotations

import datetime as dt
import math
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import types as T

from event_replay import engine
from event_replay.history.state import Manifest
from event_replay.history.state_files import read_state, write_state
from event_replay.history.partitions import Partition
from event_replay.io.output import WriteSummary
from event_replay.pipeline import OnePartition, run
from event_replay.semantics.config import parse_config
from event_replay.semantics.model import LogRow
from event_replay.semantics.reference import Replayer

ROW_SCHEMA = T.StructType([
    T.StructField("split", T.StringType(), False), T.StructField("offset", T.LongType(), False),
    T.StructField("arrival_time", T.LongType(), False), T.StructField("event_time", T.LongType(), False),
    T.StructField("key", T.StringType(), False), T.StructField("value", T.LongType(), True),
])


def num(v: Any) -> Any:
    return round(v, 9) if isinstance(v, float) and math.isfinite(v) else v


def norm(firings, late, wms) -> dict[str, list]:
    return {"firings": sorted(tuple(num(x) for x in f) for f in firings), "late": sorted(late),
            "watermarks": sorted(wms, key=repr)}


def reference_outputs(rows, cfg, splits, bounds) -> tuple[dict, dict]:
    """(partitioned, whole): the reference fed the partitions one by one, and fed the whole range at once."""
    names = list(cfg.aggregations)
    out = []
    for cuts in (bounds, [bounds[0], bounds[-1]]):
        rep = Replayer(cfg, splits)
        for lo, hi in zip(cuts, cuts[1:]):
            rep.replay_range([r for r in rows if lo <= r.arrival_time < hi], lo, hi)
        res = rep.finish(cfg.replay.end_of_input)
        out.append(norm(
            [(f.key, f.window_start, f.window_end, f.fire_index, f.fire_watermark, f.fire_reason,
              *(f.aggregates[n] for n in names)) for f in res.firings],
            [(lr.row.split, lr.row.offset, lr.late_watermark) for lr in res.late_rows],
            [(c.replay_time, c.scope, c.split, c.watermark, c.idle) for c in res.watermarks]))
    return out[0], out[1]


def engine_partitioned(spark, rows, cfg, splits, bounds) -> dict:
    """The engine, one partition at a time, the state going through disk (write_state / read_state)."""
    names = list(cfg.aggregations)
    firings, late, wms = [], [], []
    n = len(bounds) - 1
    for i, (lo, hi) in enumerate(zip(bounds, bounds[1:])):
        part = Partition(f"p{i}", lo, hi)
        carried = read_state(spark, cfg, part, f"p{i - 1}") if i else None
        df = spark.createDataFrame(
            [(r.split, r.offset, r.arrival_time, r.event_time, r.key, r.payload.get("value"))
             for r in rows if lo <= r.arrival_time < hi], ROW_SCHEMA)
        eoi = cfg.replay.end_of_input if i == n - 1 else "hold"
        result, carry = engine.replay(spark, df, cfg.with_end_of_input(eoi), splits, part,
                                      carried.carry if carried else None)
        try:
            firings += [tuple(r) for r in result.windows.select(
                "key", "window_start", "window_end", "fire_index", "fire_watermark", "fire_reason", *names).collect()]
            late += [tuple(r) for r in result.late_events.select("split", "offset", "late_watermark").collect()]
            wms += [tuple(r) for r in result.watermarks.select(
                "replay_time", "scope", "split", "watermark", "idle").collect()]
            if i < n - 1:
                manifest = Manifest.after(cfg.with_end_of_input(eoi), part.id, f"p{i - 1}" if i else None, carry)
                write_state(spark, cfg, manifest, carry)
        finally:
            engine.release(spark)
    return norm(firings, late, wms)


def diff(a: dict, b: dict) -> str:
    for name in a:
        if a[name] != b[name]:
            return (f"{name}: only engine {[x for x in a[name] if x not in b[name]][:6]}; "
                    f"only reference {[x for x in b[name] if x not in a[name]][:6]}")
    return "same"


H = 3_600_000
DAY0 = 1_704_067_200_000  # 2024-01-01T00:00:00Z


def hourly_log(root: Path) -> list[LogRow]:
    """Three hours; p1 goes silent (idle) across the first boundary, a window and a straggler straddle each."""
    rng = random.Random(7)
    rows = []
    for split in ("p0", "p1"):
        off = 0
        for h in range(3):
            for j in range(25):
                if split == "p1" and h == 0 and j > 10:
                    continue  # silent from mid-hour 0 to hour 1
                a = DAY0 + h * H + (H - 60_000 if j >= 20 else 0) + j * 2_000 + rng.randint(0, 999)
                if j >= 20:  # the last minutes of the hour: windows still open at the boundary
                    a = DAY0 + h * H + H - 30_000 + (j - 20) * 5_000
                e = a - rng.choice([0, 100, 800, 45_000])  # 45 s: late for most windows
                off += 1
                rows.append(LogRow(split, off, a, e, rng.choice(["a", "b"]), {"value": rng.randint(0, 9)}))
    table = pa.table({"split": [r.split for r in rows], "offset": [r.offset for r in rows],
                      "arrival_time": [r.arrival_time for r in rows], "event_time": [r.event_time for r in rows],
                      "key": [r.key for r in rows], "value": [r.payload["value"] for r in rows]})
    for h in range(3):
        lo, hi = DAY0 + h * H, DAY0 + (h + 1) * H
        folder = root / "dt=2024-01-01" / f"hour={h:02d}"
        folder.mkdir(parents=True)
        mask = [lo <= a < hi for a in table.column("arrival_time").to_pylist()]
        pq.write_table(table.filter(pa.array(mask)), folder / "part-00000.parquet")
    return rows


def hourly_cfg(log: Path, out: Path, **watermark):
    return parse_config({
        "source": {"path": str(log), "splits": ["p0", "p1"]},
        "watermark": {"emit": "periodic", "interval": 1000, "idle_timeout": 10_000, "max_out_of_orderness": 1000,
                      **watermark},
        "window": {"type": "tumbling", "size": 60_000, "allowed_lateness": 20_000},
        "aggregations": {"cnt": "count(*)", "total": "sum(value)"},
        "replay": {"end_of_input": "flush"}, "output": {"path": str(out)}})


def ms(v):
    """A timestamp read back (naive, UTC session) as epoch ms; null (a +-inf watermark) stays None."""
    if v is None:
        return None
    epoch = dt.datetime(1970, 1, 1, tzinfo=v.tzinfo)
    return (v - epoch) // dt.timedelta(milliseconds=1)


def run_partition(spark, cfg, partition: str, **plan) -> WriteSummary:
    """`replay run --partition` on this session: its plan (OnePartition.checked: first, previous, end_of_input,
    allow_missing) through pipeline.run."""
    return run(spark, cfg, OnePartition.checked(cfg, partition, **plan))
