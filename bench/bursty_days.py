"""The bursty log (bench/bursty.py) over whole days, written as dt=YYYY-MM-DD partition folders.

    python bench/bursty_days.py --out bench/data/bursty-31-days --days 31 [--splits 8 --keys 1000 --seed 0]

The rows of bench/bursty.py's profile sized to span `--days` days of arrival time from 2024-01-01T00:00Z, each
chunk cut by the UTC day of its arrival times into `dt=<day>/part-<chunk>.parquet`: what `replay run --partitions
2024-01-01..2024-01-<days>` reads (a partitioned config declares source.splits, as bench/configs/bursty.yaml does).
31 days over 8 splits is about 83M rows. Deterministic per (arguments, seed); one chunk in memory at a time.
"""
from __future__ import annotations

import sys
from datetime import datetime, timezone

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bursty import BurstyProfile, chunks
from generate import write_chunks

DAY_MS = 86_400_000


def days_profile(days: int, **kw) -> BurstyProfile:
    """The bursty profile whose arrival span is `days` whole days (as close as whole rows allow)."""
    probe = BurstyProfile(rows=1, **kw)
    return BurstyProfile(rows=int(days * DAY_MS * probe.splits / probe.mean_gap_ms), **kw)


def day_of(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%d")


def by_day(table: pa.Table) -> list[tuple[str, pa.Table]]:
    """(dt=<day> folder, the table's rows arriving that UTC day) per day, in order; the rows are in arrival order."""
    day = pc.divide(table.column("arrival_time").cast(pa.int64()), DAY_MS).to_numpy()
    if not len(day):
        return []
    cuts = np.flatnonzero(np.diff(day)) + 1
    starts, ends = np.concatenate(([0], cuts)), np.concatenate((cuts, [len(day)]))
    return [(f"dt={day_of(int(day[a]) * DAY_MS)}", table.slice(a, b - a)) for a, b in zip(starts, ends)]


def write_days(out, p: BurstyProfile, *, quiet: bool = False) -> dict:
    """Writes `p`'s log into `out` (replaced) as dt= folders; returns the manifest (also out/_bench.json)."""
    return write_chunks(out, chunks(p), {"shape": "bursty", "layout": "dt", "profile": p.__dict__}, quiet=quiet,
                        place=by_day)


def main(argv=None) -> int:
    import argparse
    d = BurstyProfile(rows=0)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--days", type=int, required=True)
    ap.add_argument("--splits", type=int, default=d.splits)
    ap.add_argument("--keys", type=int, default=d.keys)
    ap.add_argument("--seed", type=int, default=d.seed)
    a = ap.parse_args(argv)
    if a.days < 1 or a.splits < 1 or a.keys < 1:
        ap.error("need days, splits, keys > 0")
    m = write_days(a.out, days_profile(a.days, splits=a.splits, keys=a.keys, seed=a.seed))
    print(f"bursty_days: {m['rows']} rows over {a.days} days -> {a.out} ({m['seconds']} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
