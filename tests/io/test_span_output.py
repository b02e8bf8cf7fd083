"""Staging a span's outputs cut by partition (io/span_output.py), seen after the span's commit: each partition's
folder of each dataset holds its own rows; a partition without rows in a dataset (here an hour missing from the
source) gets an empty file of the dataset's schema, as its own run writes; counts/ has one row per partition, from
that partition's rows. (Equal to one-by-one runs, file for file decoded: test_range_replay.py.)"""
from __future__ import annotations

import shutil

import pyarrow.parquet as pq
import pytest

from event_replay.history.partitions import Partition
from event_replay.history.span import Span
from event_replay.layout import DATASETS
from event_replay.pipeline import PartitionSpan, run
from partition_cases import DAY0, H, hourly_cfg, hourly_log

pytestmark = pytest.mark.spark

HOURS = ("2024-01-01T00", "2024-01-01T01", "2024-01-01T02")


def test_each_partition_gets_its_rows_and_an_empty_one_a_file_of_the_schema(spark, tmp_path):
    log = tmp_path / "log"
    rows = hourly_log(log)
    shutil.rmtree(log / "dt=2024-01-01" / "hour=01")  # an hour missing from the source: replayed as empty
    out = tmp_path / "out"
    span = Span(tuple(Partition.parse(h) for h in HOURS))
    run(spark, hourly_cfg(log, out), PartitionSpan(span, first=True, end_of_input="flush", allow_missing=True))

    def folder(ds: str, hour: int):
        return out / ds / "dt=2024-01-01" / f"hour={hour:02d}"

    for ds in DATASETS:
        files = sorted(folder(ds, 1).glob("*.parquet"))
        assert files, ds
        if ds in ("windows", "late_events", "quarantine"):  # watermarks: time passes in the empty hour
            (empty,) = files
            full = next(folder(ds, 0).glob("*.parquet"))
            assert pq.ParquetFile(empty).metadata.num_rows == 0, ds
            assert pq.read_schema(empty).remove_metadata() == pq.read_schema(full).remove_metadata(), ds
    counts = {h: pq.read_table(folder("counts", h)).to_pylist() for h in range(3)}
    in_hour = {h: sum(DAY0 + h * H <= r.arrival_time < DAY0 + (h + 1) * H for r in rows) for h in range(3)}
    assert {h: [c["rows_read"] for c in counts[h]] for h in range(3)} == {0: [in_hour[0]], 1: [0], 2: [in_hour[2]]}
    windows_rows = {h: pq.read_table(folder("windows", h)).num_rows for h in range(3)}
    assert windows_rows[0] > 0 and windows_rows[2] > 0
    assert sum(c["rows_read"] for h in range(3) for c in counts[h]) == in_hour[0] + in_hour[2]
