"""bench/bursty_days.py: the bursty log over whole days, every row in the dt= folder of its arrival's UTC day."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow.dataset as ds
import pyarrow.parquet as pq

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

from bursty import chunks  # noqa: E402
from bursty_days import DAY_MS, day_of, days_profile, write_days  # noqa: E402
from generate import DEFAULT_START_MS  # noqa: E402


def test_profile_spans_the_days():
    p = days_profile(31)
    assert abs(p.span_ms - 31 * DAY_MS) < 1_000  # whole rows: within a second of 31 days
    assert 80_000_000 < p.rows < 86_000_000  # 8 splits at ~3.9 rows/s each, pauses included


def test_rows_land_in_the_folder_of_their_arrival_day(tmp_path):
    # Sparse traffic (~130k rows) in chunks that straddle midnight: a chunk is cut in two folders.
    p = days_profile(3, splits=2, gap_ms=4_000.0, chunk_rows=30_000, keys=50)
    manifest = write_days(tmp_path / "log", p, quiet=True)
    folders = sorted(f.name for f in (tmp_path / "log").iterdir() if f.is_dir())
    assert folders == ["dt=2024-01-01", "dt=2024-01-02", "dt=2024-01-03"]
    total = 0
    for folder in folders:
        t = pq.read_table(tmp_path / "log" / folder)
        days = {day_of(ms) for ms in t.column("arrival_time").cast("int64").to_pylist()}
        assert days == {folder.removeprefix("dt=")}
        total += t.num_rows
    # The same rows as bench/bursty.py's log of that profile, nothing lost or doubled at the cuts.
    assert total == manifest["rows"] == sum(c.num_rows for c in chunks(p))
    assert json.loads((tmp_path / "log" / "_bench.json").read_text())["profile"] == p.__dict__
    whole = ds.dataset(tmp_path / "log", format="parquet", partitioning="hive").to_table()
    assert whole.column("arrival_time").cast("int64").to_pylist()[0] >= DEFAULT_START_MS
    assert len(set(zip(whole.column("split").to_pylist(), whole.column("offset").to_pylist()))) == total
