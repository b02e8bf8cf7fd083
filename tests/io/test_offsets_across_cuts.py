"""Offsets across a partition cut (io/source.py, history/state.py; docs/semantics.md "Quarantine").

A row redelivered just after a cut (the split's last offset again), an offset going back across the cut and an
older offset delivered again must be quarantined by the partition replay exactly as by one replay of the range,
for the same reasons; and a session that spans the cut must not count the redelivered row (the carried row and a
new row at one (split, offset) would fan out in the session pass's join)."""
from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from event_replay.job import run_replay
from partition_cases import run_partition
from event_replay.semantics.config import parse_config

pytestmark = pytest.mark.spark

H = 3_600_000
DAY0 = 1_704_067_200_000  # 2024-01-01T00:00Z
# (split, offset, arrival - DAY0, event - DAY0); hour 0 ends 10 s after the last rows of hour 0.
HOUR0 = [("p0", i, H - 10_000 + i * 1000, H - 10_000 + i * 1000) for i in range(5)] + \
        [("p1", o, H - 9_500 + o * 500, H - 9_500 + o * 500) for o in (0, 2, 4)]
HOUR1 = [("p0", 4, H + 500, H - 6_000),  # p0's last offset again, just after the cut
         ("p1", 3, H + 600, H + 600),  # p1 goes back below its last offset (4)
         ("p1", 2, H + 700, H - 8_500),  # an older offset of p1 again
         ("p0", 5, H + 800, H + 800), ("p1", 5, H + 900, H + 900)]
EXPECTED = [("p0", 4, H + 500, "duplicate_offset"), ("p1", 2, H + 700, "offset_out_of_order"),
            ("p1", 3, H + 600, "offset_out_of_order")]


def _write_hour(root, hour, rows):
    folder = root / "dt=2024-01-01" / f"hour={hour:02d}"
    folder.mkdir(parents=True)
    pq.write_table(pa.table({"split": [r[0] for r in rows], "offset": [r[1] for r in rows],
                             "arrival_time": [DAY0 + r[2] for r in rows], "event_time": [DAY0 + r[3] for r in rows],
                             "key": ["k"] * len(rows)}), folder / "part-0.parquet")


def _cfg(src, out, **replay):
    return parse_config({
        "source": {"path": str(src), "splits": ["p0", "p1"]},
        "watermark": {"max_out_of_orderness": "1s", "interval": 1000},
        "window": {"type": "session", "gap": "60s"}, "aggregations": {"cnt": "count(*)"},
        "replay": {"end_of_input": "flush", **replay}, "output": {"path": str(out)}})


def _read(spark, path):
    return spark.read.option("recursiveFileLookup", "true").parquet(str(path)).collect()


def test_partition_replay_quarantines_across_a_cut_as_the_whole_range(spark, tmp_path):
    src = tmp_path / "log"
    _write_hour(src, 0, HOUR0)
    _write_hour(src, 1, HOUR1)
    parts = _cfg(src, tmp_path / "parts")
    run_partition(spark, parts, "2024-01-01T00", first=True)
    run_partition(spark, parts, "2024-01-01T01", end_of_input="flush")
    whole = _cfg(src, tmp_path / "whole", start=DAY0, end=DAY0 + 2 * H)
    run_replay(spark, whole)

    def quarantined(out):
        return sorted((r["split"], r["offset"], r["arrival_time"] - DAY0, r["reason"])
                      for r in _read(spark, out / "quarantine"))

    def firings(out):
        return sorted((r["key"], r["window_start"], r["window_end"], r["fire_index"], r["fire_reason"], r["cnt"])
                      for r in _read(spark, out / "windows"))

    assert quarantined(tmp_path / "whole") == EXPECTED
    assert quarantined(tmp_path / "parts") == EXPECTED
    # One session spans the cut: 8 rows of hour 0 and the 2 new offsets of hour 1, the redelivery not counted.
    assert firings(tmp_path / "parts") == firings(tmp_path / "whole")
    assert [f[-1] for f in firings(tmp_path / "parts")] == [10]
