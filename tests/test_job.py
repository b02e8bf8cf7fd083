"""job.py: the whole source on a real session, next to a partitioned history (a first partition, then one continuing
its state: `replay run --partition`'s plan, tests/partition_cases.run_partition), each accounting for every row it
read."""
from __future__ import annotations

import pyarrow as pa
import pytest

from event_replay.history.partitions import Partition
from event_replay.job import run_replay
from partition_cases import run_partition
from event_replay.semantics.config_keys import ConfigError
from source_logs import make_cfg, write_parquet

pytestmark = pytest.mark.spark
DAYS = ["2024-01-01", "2024-01-02"]


def _source(root):
    for n, day in enumerate(DAYS):
        t = Partition.parse(day).start_ms
        arrivals = [t + 1_000, t + 5_000, t + 30_000, t + 31_000]
        events = [t + 1_000, t + 5_000, t + 30_000, t + 2_000]  # the last one is late
        write_parquet(str(root / f"dt={day}"), {
            "split": ["p0"] * 4, "offset": pa.array([4 * n + i for i in range(4)], pa.int64()),
            "arrival_time": pa.array(arrivals, pa.int64()), "event_time": pa.array(events, pa.int64()),
            "key": ["k"] * 4})


def _accounted(s) -> bool:
    return s.rows_read == s.rows_in_windows + s.late_rows + s.quarantined_rows + s.skipped_rows


def test_a_whole_source_and_a_partitioned_history(spark, tmp_path):
    _source(tmp_path / "src")
    whole = run_replay(spark, make_cfg(tmp_path / "src", out=tmp_path / "whole"))
    assert (whole.rows_read, whole.late_rows) == (8, 2) and _accounted(whole)
    assert whole.firings == 4  # [0,10s) and [30s,40s) each day, once each (the late rows are dropped)

    cfg = make_cfg(tmp_path / "src", out=tmp_path / "parts", source={"splits": ["p0"]})
    first = run_partition(spark, cfg, DAYS[0], first=True)
    second = run_partition(spark, cfg, DAYS[1], end_of_input="flush")
    for s in (first, second):
        assert (s.rows_read, s.late_rows) == (4, 1) and _accounted(s)
    assert (tmp_path / "parts" / "_state" / DAYS[0] / "manifest.json").exists()


def test_a_partition_needs_declared_splits(spark, tmp_path):
    with pytest.raises(ConfigError, match="source.splits"):
        run_partition(spark, make_cfg(tmp_path / "src", out=tmp_path / "out"), DAYS[0], first=True)
