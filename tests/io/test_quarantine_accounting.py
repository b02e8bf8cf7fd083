"""Every kind of bad row in one log (tests/fixtures/bad_rows.csv): each row ends in a window, the late output or
the quarantine with its reason, counted exactly, in one replay and partition by partition."""
from __future__ import annotations

import os
import shutil
from collections import Counter

import pytest
from pyspark.sql import functions as F

from bad_rows import DATA, DAY, bad_rows_cfg, expected_rows, held_by_windows
from event_replay.semantics.config import parse_config


@pytest.mark.spark
def test_every_kind_of_bad_row_replays_with_exact_accounting(spark, tmp_path):
    from event_replay.job import run_replay

    src = tmp_path / "log"
    src.mkdir()
    shutil.copy(DATA / "bad_rows.csv", src / "bad_rows.csv")
    out = tmp_path / "out"
    summary = run_replay(spark, parse_config(bad_rows_cfg(src, out)))
    rows = expected_rows()
    expect = Counter(r["expect"] for r in rows)

    # Quarantine: the reason of every bad row, its original values (strings as read), one reason per row.
    q = spark.read.parquet(str(out / "quarantine"))
    assert q.columns == ["split", "offset", "arrival_time", "event_time", "key", "value", "expect", "reason"]
    got = [(r["value"], r["expect"], r["reason"]) for r in q.collect()]
    # The two exact copies at (p0, 2): one is kept, the other is a `duplicate_row`.
    assert sorted((v, e) for v, e, reason in got if e != reason) == []
    want = {r["value"]: r["expect"] for r in rows
            if r["expect"] not in ("ok", "late", "skipped", "duplicate_row")}
    assert {v: reason for v, _, reason in got if reason != "duplicate_row"} == want
    assert [reason for _, _, reason in got].count("duplicate_row") == 1
    row = q.filter(F.col("reason") == "bad_event_time").filter(F.col("value") == "17").first()
    assert (row["event_time"], row["arrival_time"]) == ("2024-13-45T00:00:00Z", "2024-01-01T00:00:10Z")

    # Late rows, windows, skipped: from the outputs, each counted independently.
    late = spark.read.parquet(str(out / "late_events"))
    assert sorted(r["value"] for r in late.collect()) == [r["value"] for r in rows if r["expect"] == "late"]
    in_windows = held_by_windows(spark, out / "windows")
    assert in_windows == expect["ok"] + 1  # + the kept copy of the exact duplicate

    counts = spark.read.parquet(str(out / "counts")).first().asDict()
    assert counts == {"rows_read": len(rows), "rows_in_windows": in_windows, "late_rows": expect["late"],
                      "quarantined_rows": q.count(), "skipped_rows": expect["skipped"], "filtered_rows": 0}
    # The accounting holds to the row: every row read is in exactly one place.
    assert counts["rows_read"] == in_windows + late.count() + q.count() + counts["skipped_rows"]
    assert (summary.rows_read, summary.quarantined_rows, summary.skipped_rows) == (len(rows), q.count(), 3)
    assert sorted(os.listdir(out)) == ["counts", "late_events", "quarantine", "watermarks", "windows"]


@pytest.mark.spark
def test_bad_rows_per_partition_counts(spark, tmp_path):
    """The same log as two day partitions (a second day in its own folder): per-partition counts add up, and
    the rows of dt=D whose arrival is not on D are skipped there (they belong to another day's replay)."""
    from partition_cases import run_partition

    src = tmp_path / "log"
    (src / f"dt={DAY}").mkdir(parents=True)
    shutil.copy(DATA / "bad_rows.csv", src / f"dt={DAY}" / "part.csv")
    (src / "dt=2024-01-02").mkdir()
    (src / "dt=2024-01-02" / "part.csv").write_text(
        "split,offset,arrival_time,event_time,key,value,expect\n"
        "p0,40,2024-01-02T00:00:01Z,2024-01-02T00:00:01Z,k1,40,ok\n"
        "p1,40,2024-01-02T00:00:02Z,2024-01-02T00:00:02Z,k1,41,ok\n"
        "p1,41,2024-01-02T00:00:03Z,,k1,42,missing_event_time\n")
    out = tmp_path / "out"
    raw = bad_rows_cfg(src, out)
    raw["replay"] = {"end_of_input": "flush"}
    cfg = parse_config(raw)
    s1 = run_partition(spark, cfg, DAY, first=True)
    s2 = run_partition(spark, cfg, "2024-01-02", end_of_input="flush")
    c1 = spark.read.parquet(str(out / "counts" / f"dt={DAY}")).first().asDict()
    c2 = spark.read.parquet(str(out / "counts" / "dt=2024-01-02")).first().asDict()
    rows = expected_rows()
    # Day 1 is the range [00:00 Jan 1, 00:00 Jan 2): only the row arriving on Dec 31 is skipped. The two rows
    # that the one-hour replay above skipped (02:00, 02:00:01) are judged here: offset 28 arrives after offset
    # 30 of p0 (offset_out_of_order), the other has no event time. The pre-1970 arrivals are quarantined in
    # any range: no partition could ever replay them.
    assert c1 == {"rows_read": len(rows), "rows_in_windows": 10, "late_rows": 1, "quarantined_rows": 22,
                  "skipped_rows": 1, "filtered_rows": 0}
    q1 = {r["value"]: r["reason"] for r in spark.read.parquet(str(out / "quarantine" / f"dt={DAY}")).collect()}
    assert (q1["28"], q1["29"]) == ("offset_out_of_order", "missing_event_time")
    assert c2 == {"rows_read": 3, "rows_in_windows": 2, "late_rows": 0, "quarantined_rows": 1, "skipped_rows": 0,
                  "filtered_rows": 0}
    for c in (c1, c2):
        assert c["rows_read"] == c["rows_in_windows"] + c["late_rows"] + c["quarantined_rows"] + c["skipped_rows"]
    assert (s1.rows_read, s2.rows_read) == (len(rows), 3)
    # Everything committed: no journal, staging or lock left.
    assert sorted(n for n in os.listdir(out) if n.startswith("_")) == ["_state"]

