"""A sample event log: several splits, one that falls silent, out-of-order events, stragglers, payload `value`.

Vectorised with numpy and written with pyarrow (no Python loop per row), so millions of rows take seconds.
Columns: split (string), offset (long), arrival_time, event_time (timestamp[ms] UTC, or epoch-ms longs),
key (string), value (long). Deterministic for a given spec and seed.
"""
from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from ..local_folder import replace_folder
from ..semantics.durations import parse_instant_ms


@dataclass(frozen=True)
class SampleSpec:
    rows: int = 100_000
    splits: int = 4
    seed: int = 0
    keys: int = 8
    rate: float = 100.0  # rows per second of arrival time, all splits together
    start: str | int = "2024-01-01T00:00:00Z"
    files: int = 4
    format: str = "parquet"
    epoch_ms: bool = False
    straggler_fraction: float = 0.005  # events delayed by 5..60 s: late for most windows
    silent_split: bool = True  # the last split stops at 60% of the log (holds the watermark until idle)
    mean_delay_ms: float = 300.0  # typical event-time-to-arrival delay (out of order within a split)


def generate(spec: SampleSpec) -> pa.Table:
    if spec.rows < 0 or spec.splits < 1 or spec.keys < 1 or spec.rate <= 0 or spec.files < 1:
        raise ValueError("need rows >= 0, splits >= 1, keys >= 1, rate > 0, files >= 1")
    rng = np.random.default_rng(spec.seed)
    n = spec.rows
    start_ms = parse_instant_ms(spec.start)
    span_ms = max(1, int(n / spec.rate * 1000))
    # Arrival times: sorted uniform over the span (a Poisson-like stream), integer ms, ties possible.
    arrival = start_ms + np.sort(rng.integers(0, span_ms, size=n, dtype=np.int64))

    split_idx = rng.integers(0, spec.splits, size=n, dtype=np.int64)
    if spec.silent_split and spec.splits >= 2:
        # The last split falls silent after 60% of the span: its later rows go to the other splits.
        cut = start_ms + int(span_ms * 0.6)
        moved = (split_idx == spec.splits - 1) & (arrival >= cut)
        split_idx[moved] = rng.integers(0, spec.splits - 1, size=int(moved.sum()), dtype=np.int64)

    # Event time = arrival - delay: exponential delays (out of order) and a few stragglers far behind.
    delay = rng.exponential(spec.mean_delay_ms, size=n).astype(np.int64)
    stragglers = rng.random(n) < spec.straggler_fraction
    delay[stragglers] = rng.integers(5_000, 60_000, size=int(stragglers.sum()), dtype=np.int64)
    event = arrival - delay

    # Offsets: 0, 1, 2, ... per split in arrival order (the rows are already in arrival order).
    order = np.argsort(split_idx, kind="stable")
    sorted_split = split_idx[order]
    first = np.searchsorted(sorted_split, np.arange(spec.splits))
    offset = np.empty(n, dtype=np.int64)
    offset[order] = np.arange(n, dtype=np.int64) - first[sorted_split]

    # Keys: skewed (a few hot keys), like real traffic.
    weights = 1.0 / np.arange(1, spec.keys + 1)
    key_idx = rng.choice(spec.keys, size=n, p=weights / weights.sum())
    value = rng.integers(1, 101, size=n, dtype=np.int64)

    split_names = np.array([f"p{i}" for i in range(spec.splits)], dtype=object)
    key_names = np.array([f"k{i:02d}" for i in range(spec.keys)], dtype=object)
    if spec.epoch_ms:
        arrival_col, event_col = pa.array(arrival, pa.int64()), pa.array(event, pa.int64())
    else:
        ts = pa.timestamp("ms", tz="UTC")
        arrival_col, event_col = pa.array(arrival, pa.int64()).cast(ts), pa.array(event, pa.int64()).cast(ts)
    return pa.table({
        "split": pa.array(split_names[split_idx], pa.string()),
        "offset": pa.array(offset, pa.int64()),
        "arrival_time": arrival_col,
        "event_time": event_col,
        "key": pa.array(key_names[key_idx], pa.string()),
        "value": pa.array(value, pa.int64()),
    })


def write_sample(out: str | os.PathLike, spec: SampleSpec) -> int:
    """Write the sample log as spec.files files into out (replacing it); returns the number of rows."""
    table = generate(spec)

    def fill(staging: Path) -> None:
        bounds = np.linspace(0, table.num_rows, spec.files + 1).astype(np.int64)
        for i in range(spec.files):
            part = table.slice(int(bounds[i]), int(bounds[i + 1] - bounds[i]))
            if spec.format == "csv":
                pacsv.write_csv(part, staging / f"part-{i:05d}.csv")
            else:
                pq.write_table(part, staging / f"part-{i:05d}.parquet")

    replace_folder(Path(out), fill)
    return table.num_rows


def write_partitioned_sample(out: str | os.PathLike, spec: SampleSpec, granularity: str) -> int:
    """The sample log in the partitioned layout `dt=YYYY-MM-DD[/hour=HH]/part-00000.parquet`, by arrival (UTC),
    replacing `out` as a whole. Use --rate/--rows (and --start) to span several days or hours."""
    if spec.format != "parquet":
        raise ValueError("the partitioned layout is written as Parquet only")
    table = generate(spec)
    arrival = table.column("arrival_time")
    ms = arrival.cast(pa.int64()) if pa.types.is_integer(arrival.type) else \
        pc.cast(arrival, pa.timestamp("ms", tz="UTC")).cast(pa.int64())
    unit = 86_400_000 if granularity == "day" else 3_600_000
    bucket = pc.divide(ms, unit)  # integer division: arrival times are after the epoch

    def fill(staging: Path) -> None:
        for b in sorted(set(bucket.to_pylist())):
            start = dt.datetime.fromtimestamp(b * unit / 1000, tz=dt.timezone.utc)
            sub = f"dt={start:%Y-%m-%d}" + (f"/hour={start:%H}" if granularity == "hour" else "")
            (staging / sub).mkdir(parents=True)
            pq.write_table(table.filter(pc.equal(bucket, b)), staging / sub / "part-00000.parquet")

    replace_folder(Path(out), fill)
    return table.num_rows
