"""Replay outputs for the quality tests: the reference model's result written with pyarrow in the writer's schema
(windows/, late_events/, watermarks/, quarantine/, counts/), plus a few quarantined and skipped rows so that every
count is exercised. Tests read them back with pandas, break one thing and write them again."""
from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from event_replay.semantics.config import JobConfig, parse_config, to_raw
from event_replay.semantics.durations import NEG_INF, POS_INF
from event_replay.semantics.reference import replay, replay_range_of
from strategies import Case

TS = pa.timestamp("ms", tz="UTC")
DATASETS = ("windows", "late_events", "watermarks", "quarantine", "counts")


def _ts(v: int | None) -> int | None:
    return None if v is None or v in (NEG_INF, POS_INF) else v


def case_config(case: Case, out: Path) -> JobConfig:
    raw = to_raw(case.cfg)
    raw["output"]["path"] = str(out)
    return parse_config(raw)


def write_case(case: Case, out: Path) -> tuple[JobConfig, dict[str, pd.DataFrame]]:
    cfg = case_config(case, out)
    result = replay(case.rows, cfg, declared_splits=case.declared_splits)
    _, _, in_range = replay_range_of(list(case.rows), cfg)
    aggs = list(cfg.aggregations)
    tables = {"windows": pa.table({
        "key": pa.array([f.key for f in result.firings], pa.string()),
        "window_start": pa.array([f.window_start for f in result.firings], pa.int64()).cast(TS),
        "window_end": pa.array([f.window_end for f in result.firings], pa.int64()).cast(TS),
        "fire_index": pa.array([f.fire_index for f in result.firings], pa.int32()),
        "fire_watermark": pa.array([_ts(f.fire_watermark) for f in result.firings], pa.int64()).cast(TS),
        "fire_reason": pa.array([f.fire_reason for f in result.firings], pa.string()),
        **{a: pa.array([f.aggregates[a] for f in result.firings], pa.int64()) for a in aggs},
    })}
    late = result.late_rows
    tables["late_events"] = pa.table({
        "split": pa.array([l.row.split for l in late], pa.string()),
        "offset": pa.array([l.row.offset for l in late], pa.int64()),
        "arrival_time": pa.array([l.row.arrival_time for l in late], pa.int64()).cast(TS),
        "event_time": pa.array([l.row.event_time for l in late], pa.int64()).cast(TS),
        "key": pa.array([l.row.key for l in late], pa.string()),
        "value": pa.array([l.row.payload.get("value") for l in late], pa.int64()),
        "late_watermark": pa.array([_ts(l.late_watermark) for l in late], pa.int64()).cast(TS),
    })
    wms = result.watermarks
    tables["watermarks"] = pa.table({
        "replay_time": pa.array([w.replay_time for w in wms], pa.int64()).cast(TS),
        "scope": pa.array([w.scope for w in wms], pa.string()),
        "split": pa.array([w.split for w in wms], pa.string()),
        "watermark": pa.array([_ts(w.watermark) for w in wms], pa.int64()).cast(TS),
        "idle": pa.array([w.idle for w in wms], pa.bool_()),
        "watermark_ms": pa.array([w.watermark for w in wms], pa.int64()),
        "replay_time_ms": pa.array([w.replay_time for w in wms], pa.int64()),
    })
    # Two bad rows as a reader would quarantine them (no event time).
    tables["quarantine"] = pa.table({
        "split": pa.array(["p0", "p0"], pa.string()), "offset": pa.array([10_000, 10_001], pa.int64()),
        "arrival_time": pa.array([None, None], pa.int64()).cast(TS),
        "event_time": pa.array([None, None], pa.int64()).cast(TS),
        "key": pa.array(["k0", "k0"], pa.string()), "value": pa.array([1, 2], pa.int64()),
        "reason": pa.array(["event_time is null", "event_time is null"], pa.string())})
    skipped = len(case.rows) - len(in_range)
    rows_read = len(case.rows) + 2
    tables["counts"] = pa.table({
        "rows_read": pa.array([rows_read], pa.int64()),
        "rows_in_windows": pa.array([len(in_range) - len(late)], pa.int64()),
        "late_rows": pa.array([len(late)], pa.int64()),
        "quarantined_rows": pa.array([2], pa.int64()),
        "skipped_rows": pa.array([skipped], pa.int64())})
    write_tables(out, tables)
    return cfg, {k: t.to_pandas() for k, t in tables.items()}


def write_tables(out: Path, tables: dict[str, pa.Table]) -> None:
    for name, table in tables.items():
        d = out / name
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        pq.write_table(table, d / "part-00000.parquet")


def read_frames(out: Path) -> dict[str, pd.DataFrame]:
    return {name: pq.read_table(out / name).to_pandas(integer_object_nulls=True) for name in DATASETS}


def write_frames(out: Path, frames: dict[str, pd.DataFrame], like: Path) -> None:
    """Write (possibly broken) frames with the schemas of the outputs under `like`."""
    tables = {}
    for name, df in frames.items():
        schema = pq.read_schema(next((like / name).glob("*.parquet")))
        tables[name] = pa.Table.from_pandas(df.reset_index(drop=True), schema=schema, preserve_index=False)
    write_tables(out, tables)
