"""The backfill's report (orchestration/report.py): rows per output from the Parquet footers, missing outputs
named, a partition's rows read from its counts/ row."""
from __future__ import annotations

import pyarrow.parquet as pq

from event_replay.orchestration.report import build_report, render_markdown
from event_replay.samples.days import generate_days


def test_report_counts_from_footers(tmp_path):
    t = generate_days("2024-03-01", days=1, rows_per_day=50, splits=2)
    (tmp_path / "windows" / "dt=2024-03-01").mkdir(parents=True)
    pq.write_table(t, tmp_path / "windows" / "dt=2024-03-01" / "part-0.parquet")
    r = build_report(str(tmp_path), ["2024-03-01", "2024-03-02"], run_id="x")
    assert r["partitions"][0]["rows"]["windows"] == 50 and r["totals"]["windows"] == 50
    assert "late_events" in r["partitions"][0]["missing_outputs"] and not r["complete"]
    assert "| 2024-03-02 | missing |" in render_markdown(r)


def test_rows_read_of_a_partition(tmp_path):
    """The replay task's log and run record: the rows a partition read, from its counts/ row."""
    import pyarrow as pa

    from event_replay.orchestration.report import partition_rows_read

    (tmp_path / "counts" / "dt=2024-03-01").mkdir(parents=True)
    pq.write_table(pa.table({"rows_read": [120], "quarantined_rows": [2]}),
                   tmp_path / "counts" / "dt=2024-03-01" / "part-0.parquet")
    assert partition_rows_read(tmp_path, "2024-03-01") == 120
    assert partition_rows_read(tmp_path, "2024-03-02") == 0
