"""A multi-day sample log in the partitioned layout `<out>/dt=YYYY-MM-DD/part-00000.parquet`.

Each day has a burst of traffic (samples/log.py's generator: several splits, out-of-order events, stragglers);
on top of that, the last split falls silent half-way through the log and stays silent (it must go idle, or it
would hold the watermark back for ever), and each day after the first has a few rows whose event time is a day
earlier (late across the partition boundary: only carried state knows they are late).

    python -m event_replay.samples.days --out data/partitioned --days 3 --rows-per-day 5000
"""
from __future__ import annotations

import argparse
import datetime as dt
import shutil
import sys
import uuid
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .log import SampleSpec, generate

DAY_MS = 86_400_000


def generate_days(first_day: str = "2024-01-01", days: int = 3, rows_per_day: int = 5_000, splits: int = 4,
                  seed: int = 7, keys: int = 8, rate: float = 50.0, day_start: str = "06:00:00",
                  cross_day_stragglers: int = 3) -> pa.Table:
    if days < 1 or rows_per_day < 1 or splits < 2:
        raise ValueError("need days >= 1, rows_per_day >= 1, splits >= 2 (one of them falls silent)")
    if rows_per_day / rate > 17 * 3600:
        raise ValueError("a day's burst must fit in the day: lower rows_per_day or raise rate")
    day0 = dt.date.fromisoformat(first_day)
    chunks = []
    for d in range(days):
        day = day0 + dt.timedelta(days=d)
        spec = SampleSpec(rows=rows_per_day, splits=splits, seed=seed + d, keys=keys, rate=rate,
                          start=f"{day.isoformat()}T{day_start}Z", epoch_ms=True, silent_split=False)
        chunks.append(generate(spec))
    table = pa.concat_tables(chunks)
    rng = np.random.default_rng(seed)
    split = np.array(table["split"].to_pylist(), dtype=object)
    arrival = table["arrival_time"].to_numpy().copy()
    event = table["event_time"].to_numpy().copy()

    # The last split falls silent at the middle of the log: its later rows move to the other splits.
    silent = f"p{splits - 1}"
    cut = arrival[len(arrival) // 2]
    moved = (split == silent) & (arrival >= cut)
    split[moved] = np.array([f"p{i}" for i in rng.integers(0, splits - 1, size=int(moved.sum()))], dtype=object)

    # A few rows per later day whose event happened a day earlier.
    for d in range(1, days):
        idx = np.flatnonzero((arrival >= (arrival.min() // DAY_MS + d) * DAY_MS))
        if len(idx) and cross_day_stragglers:
            pick = rng.choice(idx[: rows_per_day], size=min(cross_day_stragglers, len(idx)), replace=False)
            event[pick] -= DAY_MS

    # Offsets 0, 1, 2, ... per split in arrival order (rows are in arrival order: days are consecutive).
    offset = np.empty(len(split), dtype=np.int64)
    counters: dict[str, int] = {}
    for i, s in enumerate(split):  # a few thousand rows: a plain loop is clearer than a grouped rank
        offset[i] = counters.get(s, 0)
        counters[s] = offset[i] + 1
    ts = pa.timestamp("ms", tz="UTC")
    return table.set_column(table.schema.get_field_index("split"), "split", pa.array(split.tolist(), pa.string())) \
        .set_column(table.schema.get_field_index("offset"), "offset", pa.array(offset, pa.int64())) \
        .set_column(table.schema.get_field_index("arrival_time"), "arrival_time", pa.array(arrival).cast(ts)) \
        .set_column(table.schema.get_field_index("event_time"), "event_time", pa.array(event).cast(ts))


def write_days(out: str | Path, table: pa.Table) -> list[str]:
    """One `dt=` folder per arrival day (UTC), replacing `out` as a whole; returns the partitions written."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = out.with_name(f"{out.name}.staging-{uuid.uuid4().hex[:8]}")
    staging.mkdir()
    try:
        day = pc.strftime(table["arrival_time"], format="%Y-%m-%d")
        parts = sorted(set(day.to_pylist()))
        for p in parts:
            (staging / f"dt={p}").mkdir()
            pq.write_table(table.filter(pc.equal(day, p)), staging / f"dt={p}" / "part-00000.parquet")
        if out.exists():
            shutil.rmtree(out)
        staging.rename(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return parts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m event_replay.samples.days", description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--first-day", default="2024-01-01")
    ap.add_argument("--days", type=int, default=3)
    ap.add_argument("--rows-per-day", type=int, default=5_000)
    ap.add_argument("--splits", type=int, default=4)
    ap.add_argument("--rate", type=float, default=50.0, help="rows per second during a day's burst")
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args(argv)
    table = generate_days(a.first_day, a.days, a.rows_per_day, a.splits, a.seed, rate=a.rate)
    parts = write_days(a.out, table)
    listed = ", ".join(parts) if len(parts) <= 7 else f"{parts[0]}..{parts[-1]}"  # a year of days: first..last
    print(f"sample: {table.num_rows} rows, {a.splits} splits, {len(parts)} partitions {listed} -> {a.out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
