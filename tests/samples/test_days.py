"""The partitioned sample (samples/days.py): rows per day, offsets per split, a split that falls silent, a
few rows a day late, one dt= folder per day."""
from __future__ import annotations

import datetime as dt

import pyarrow.parquet as pq

from event_replay.io.fs import LocalFs
from event_replay.io.partition_folders import partitions_present
from event_replay.samples.days import generate_days, write_days


def test_partitioned_sample(tmp_path):
    t = generate_days("2024-03-01", days=3, rows_per_day=400, splits=3, seed=1)
    assert t.num_rows == 1200
    parts = write_days(tmp_path / "s", t)
    assert parts == ["2024-03-01", "2024-03-02", "2024-03-03"]
    assert partitions_present(LocalFs(), str(tmp_path / "s"), hourly=False) == parts
    df = t.to_pandas()
    for _, g in df.groupby("split"):  # offsets 0.. strictly increasing per split in arrival order
        assert list(g.sort_values(["arrival_time", "offset"])["offset"]) == list(range(len(g)))
    last_p2 = df[df.split == "p2"].arrival_time.max()
    assert last_p2 < df.arrival_time.max() - dt.timedelta(days=1)  # the last split falls silent
    late = df[(df.arrival_time - df.event_time) > dt.timedelta(hours=12)]
    assert len(late) == 6  # 3 rows a day, days 2 and 3, an event a day earlier
    assert sum(pq.read_table(tmp_path / "s" / f"dt={p}").num_rows for p in parts) == 1200
