"""Partition-by-partition replay with carried state (SEMANTICS §6 `hold`): the invariant, tested.

Replaying P1..Pn one by one, each continuing from the state its predecessor wrote to disk, must give exactly the
outputs of one replay of P1..Pn: here checked against the reference model (a `Replayer` fed the same ranges, which
tests/flink checks against Flink, and which must equal one replay of the whole range). Then the CLI path on an
hourly `dt=/hour=` layout: outputs per partition, byte-identical reruns, clear failures on missing or mismatched
predecessor state.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import math
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import types as T

from event_replay import engine
from event_replay.engine.state import StateError, read_state, write_state
from event_replay.io.partitions import Partition
from event_replay.semantics.config import parse_config
from event_replay.semantics.model import LogRow
from event_replay.semantics.reference import Replayer
from strategies import random_case

pytestmark = [pytest.mark.spark, pytest.mark.integration]

ROW_SCHEMA = T.StructType([
    T.StructField("split", T.StringType(), False), T.StructField("offset", T.LongType(), False),
    T.StructField("arrival_time", T.LongType(), False), T.StructField("event_time", T.LongType(), False),
    T.StructField("key", T.StringType(), False), T.StructField("value", T.LongType(), True),
])


def _num(v: Any) -> Any:
    return round(v, 9) if isinstance(v, float) and math.isfinite(v) else v


def _norm(firings, late, wms) -> dict[str, list]:
    return {"firings": sorted(tuple(_num(x) for x in f) for f in firings), "late": sorted(late),
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
        out.append(_norm(
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
        result, end = engine.replay_partition(spark, df, cfg, splits, part, carried, end_of_input=eoi)
        try:
            firings += [tuple(r) for r in result.windows.select(
                "key", "window_start", "window_end", "fire_index", "fire_watermark", "fire_reason", *names).collect()]
            late += [tuple(r) for r in result.late_events.select("split", "offset", "late_watermark").collect()]
            wms += [tuple(r) for r in result.watermarks.select(
                "replay_time", "scope", "split", "watermark", "idle").collect()]
            if i < n - 1:
                write_state(spark, cfg, end.manifest, end.splits, end.rows)
        finally:
            engine.release(spark)
    return _norm(firings, late, wms)


def _diff(a: dict, b: dict) -> str:
    for name in a:
        if a[name] != b[name]:
            return (f"{name}: only engine {[x for x in a[name] if x not in b[name]][:6]}; "
                    f"only reference {[x for x in b[name] if x not in a[name]][:6]}")
    return "same"


# Configs that make windows, late rows and idle splits straddle the cuts; the log comes from strategies.py.
CONFIGS = {
    "periodic_tumbling_idle": {"watermark": {"emit": "periodic", "interval": 200, "idle_timeout": 400,
                                             "max_out_of_orderness": 200},
                               "window": {"type": "tumbling", "size": 2000, "allowed_lateness": 2000}},
    "periodic_sliding_silence": {"watermark": {"emit": "periodic", "interval": 100, "idle_timeout": 1000,
                                               "advance_after_silence": 300, "max_out_of_orderness": 1000},
                                 "window": {"type": "sliding", "size": 2000, "slide": 500, "allowed_lateness": 500}},
    "periodic_session": {"watermark": {"emit": "periodic", "interval": 200, "idle_timeout": 1000,
                                       "max_out_of_orderness": 200},
                         "window": {"type": "session", "gap": 1000, "allowed_lateness": 2000}},
    "per_event_tumbling": {"watermark": {"emit": "per_event", "strategy": "sql", "max_out_of_orderness": 200},
                           "window": {"type": "tumbling", "size": 1000, "allowed_lateness": 500}},
}


def make_case(name: str, seed: int):
    case = random_case(seed, max_rows=60, max_splits=3, max_keys=3)
    raw = {"source": {"path": "unused", "splits": list(case.declared_splits)},
           "watermark": CONFIGS[name]["watermark"], "window": CONFIGS[name]["window"],
           "aggregations": {"cnt": "count(*)", "total": "sum(value)"},
           "replay": {"end_of_input": "flush" if seed % 2 else "hold"}, "output": {"path": "unused"}}
    rows = [r for r in case.rows]
    if not rows:
        rows = [LogRow("p0", 1, 1000, 900, "k0", {"value": 1})]
    cfg = parse_config(raw)
    start = min(r.arrival_time for r in rows)
    end = max(r.arrival_time for r in rows) + 1
    rng = random.Random(seed)
    interval = cfg.watermark.interval_ms or 1
    # Two cuts, each partition longer than one interval: at a row's arrival (ties both sides), on a tick, anywhere.
    cuts: set[int] = set()
    for _ in range(2):
        c = rng.choice([rng.choice(rows).arrival_time, (rng.randint(start, end) // interval) * interval,
                        rng.randint(start, end)])
        cuts.add(c)
    bounds = [start]
    for c in sorted(cuts):
        if c - bounds[-1] > interval and end - c > interval:
            bounds.append(c)
    bounds.append(max(end, bounds[-1] + interval + 1))
    splits = sorted(set(case.declared_splits) | {r.split for r in rows})
    return rows, cfg, splits, bounds


@pytest.mark.parametrize("name,seed", [("periodic_tumbling_idle", 3), ("periodic_sliding_silence", 8),
                                       ("periodic_session", 5), ("per_event_tumbling", 12)])
def test_partition_by_partition_equals_one_replay(spark, tmp_path, name, seed):
    rows, cfg, splits, bounds = make_case(name, seed)
    cfg = dataclasses.replace(cfg, output=dataclasses.replace(cfg.output, path=str(tmp_path / "out")))
    partitioned_ref, whole_ref = reference_outputs(rows, cfg, splits, bounds)
    assert partitioned_ref == whole_ref, "the reference itself must not depend on the cuts"
    got = engine_partitioned(spark, rows, cfg, splits, bounds)
    assert got == whole_ref, f"bounds {bounds}: {_diff(got, whole_ref)}"


# --- the CLI path: hourly dt=/hour= partitions on disk --------------------------------------------------------

H = 3_600_000
DAY0 = 1_704_067_200_000  # 2024-01-01T00:00:00Z


def _hourly_log(root: Path) -> list[LogRow]:
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


def _hourly_cfg(log: Path, out: Path, **watermark):
    return parse_config({
        "source": {"path": str(log), "splits": ["p0", "p1"]},
        "watermark": {"emit": "periodic", "interval": 1000, "idle_timeout": 10_000, "max_out_of_orderness": 1000,
                      **watermark},
        "window": {"type": "tumbling", "size": 60_000, "allowed_lateness": 20_000},
        "aggregations": {"cnt": "count(*)", "total": "sum(value)"},
        "replay": {"end_of_input": "flush"}, "output": {"path": str(out)}})


def _partition_digests(out: Path, sub: str) -> dict[str, list[str]]:
    d = {}
    for ds in ("windows", "late_events", "watermarks", "quarantine", "counts"):
        files = sorted((out / ds / sub).glob("*.parquet"))
        d[ds] = [hashlib.sha256(f.read_bytes()).hexdigest() for f in files]
    return d


def test_hourly_partitions_cli_path(spark, tmp_path):
    from event_replay.job import run_partition

    log, out = tmp_path / "log", tmp_path / "out"
    rows = _hourly_log(log)
    cfg = _hourly_cfg(log, out)
    ids = ["2024-01-01T00", "2024-01-01T01", "2024-01-01T02"]

    with pytest.raises(StateError, match="no predecessor"):
        run_partition(spark, cfg, ids[0])
    run_partition(spark, cfg, ids[0], first=True)
    with pytest.raises(StateError, match="no carried state"):
        run_partition(spark, cfg, ids[2])  # its predecessor T01 has not run
    run_partition(spark, cfg, ids[1])
    run_partition(spark, cfg, ids[2], end_of_input="flush")
    subs = [Partition.parse(i).subpath for i in ids]
    assert (out / "_state" / ids[1] / "manifest.json").is_file()

    # Byte-identical rerun of the middle partition (same predecessor state), nothing duplicated.
    before = _partition_digests(out, subs[1])
    assert all(before.values())
    run_partition(spark, cfg, ids[1])
    assert _partition_digests(out, subs[1]) == before

    # The outputs, read back per partition, equal the reference fed the same hours.
    names = ["cnt", "total"]
    fr = spark.read.option("recursiveFileLookup", "true").parquet(str(out / "windows")).collect()
    firings = [(r.key, _ms(r.window_start), _ms(r.window_end), r.fire_index, _ms(r.fire_watermark), r.fire_reason,
                *(r[n] for n in names)) for r in fr]
    lr = spark.read.option("recursiveFileLookup", "true").parquet(str(out / "late_events")).collect()
    late = [(r.split, r.offset, _ms(r.late_watermark)) for r in lr]
    wr = spark.read.option("recursiveFileLookup", "true").parquet(str(out / "watermarks")).collect()
    wms = [(r.replay_time_ms, r.scope, r.split, None if r.idle else r.watermark_ms, r.idle) for r in wr]
    bounds = [DAY0, DAY0 + H, DAY0 + 2 * H, DAY0 + 3 * H]
    _, whole = reference_outputs(rows, cfg, ["p0", "p1"], bounds)
    got = _norm(firings, late, wms)
    assert got == whole, _diff(got, whole)

    # A changed config (window size) refuses the carried state instead of continuing from it.
    other = dataclasses.replace(cfg, window=dataclasses.replace(cfg.window, size_ms=30_000))
    with pytest.raises(StateError, match="another config"):
        run_partition(spark, other, ids[2])
    # A flushed partition ends its history.
    with pytest.raises(StateError, match="flush"):
        read_state(spark, cfg, Partition.parse("2024-01-01T03"))


def _ms(v):
    """A timestamp read back (naive, UTC session) as epoch ms; null (a +-inf watermark) stays None."""
    if v is None:
        return None
    epoch = dt.datetime(1970, 1, 1, tzinfo=v.tzinfo)
    return (v - epoch) // dt.timedelta(milliseconds=1)


def _write_folder(path: Path, table: dict) -> None:
    path.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(table), path / "part-0.parquet")


@pytest.mark.spark
def test_an_allowed_missing_hour_replays_exactly_as_one_replay_of_the_range(spark, tmp_path):
    """The missing hour is replayed as time passing: the splits go idle inside it (30 min after their last rows),
    so its watermarks output is not empty, and the three partitions together equal the reference model fed the
    whole range at once (tests/flink checks the reference against Flink). Continuing hour 2 straight from hour 0,
    or replaying hour 1 without its ticks, would put those idle changes elsewhere or nowhere."""
    from event_replay.job import run_partition
    from event_replay.semantics.model import LogRow

    log, out = tmp_path / "log", tmp_path / "out"
    rows = []
    for h in (0, 2):  # hour 1 has no folder at all
        for i, split in enumerate(["p0", "p1"] * 4):
            a = DAY0 + h * H + H - 40_000 + i * 5_000
            rows.append(LogRow(split, h * 10 + i, a, a - (i % 3) * 700, "k" + str(i % 2), {"value": i}))
        part = [r for r in rows if DAY0 + h * H <= r.arrival_time < DAY0 + (h + 1) * H]
        _write_folder(log / "dt=2024-01-01" / f"hour={h:02d}", {
            "split": [r.split for r in part], "offset": [r.offset for r in part],
            "arrival_time": [r.arrival_time for r in part], "event_time": [r.event_time for r in part],
            "key": [r.key for r in part], "value": [r.payload["value"] for r in part]})
    cfg = _hourly_cfg(log, out, idle_timeout=1_800_000)
    run_partition(spark, cfg, "2024-01-01T00", first=True)
    run_partition(spark, cfg, "2024-01-01T01", allow_missing=True)
    run_partition(spark, cfg, "2024-01-01T02", end_of_input="flush")

    def read(ds):
        return spark.read.option("recursiveFileLookup", "true").parquet(str(out / ds)).collect()

    firings = [(r.key, _ms(r.window_start), _ms(r.window_end), r.fire_index, _ms(r.fire_watermark), r.fire_reason,
                r.cnt, r.total) for r in read("windows")]
    late = [(r.split, r.offset, _ms(r.late_watermark)) for r in read("late_events")]
    wms = [(r.replay_time_ms, r.scope, r.split, None if r.idle else r.watermark_ms, r.idle) for r in read("watermarks")]
    _, whole = reference_outputs(rows, cfg, ["p0", "p1"], [DAY0, DAY0 + H, DAY0 + 2 * H, DAY0 + 3 * H])
    got = _norm(firings, late, wms)
    assert got == whole, _diff(got, whole)
    in_missing_hour = [w for w in wms if DAY0 + H <= w[0] < DAY0 + 2 * H]
    # Both splits, then the stream, went idle in hour 1.
    assert {(w[1], w[2]) for w in in_missing_hour if w[4]} == {("split", "p0"), ("split", "p1"), ("stream", None)}
