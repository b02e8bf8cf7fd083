"""One partition's read (io/partition_source.py): an empty partition folder and a missing one (allowed) replay as
time passing, with the column types of their neighbours; a missing one not allowed is refused naming it."""
from __future__ import annotations

import json

import pytest

from event_replay.io.partition_source import MissingPartitionError
from source_logs import make_cfg, second_rows, write_parquet


@pytest.mark.spark
def test_empty_and_missing_partitions(spark, tmp_path):
    from partition_cases import run_partition

    src = tmp_path / "parts"
    write_parquet(src / "dt=2024-01-01", second_rows(0, 3, lambda n: list(range(n))))
    (src / "dt=2024-01-02").mkdir()  # empty: the export ran and found nothing
    write_parquet(src / "dt=2024-01-04", second_rows(3 * 86_400, 2, lambda n: list(range(n))))
    out = tmp_path / "out"
    cfg = make_cfg(src, out=out, source={"splits": ["a"]})
    run_partition(spark, cfg, "2024-01-01", first=True)
    s2 = run_partition(spark, cfg, "2024-01-02")  # empty: a valid replay of no rows
    assert (s2.rows_read, s2.firings) == (0, 0)
    # Its outputs exist, with the columns of its neighbours (borrowed from day 1's files).
    late2 = spark.read.parquet(str(out / "late_events" / "dt=2024-01-02"))
    late1 = spark.read.parquet(str(out / "late_events" / "dt=2024-01-01"))
    assert late2.schema == late1.schema and late2.count() == 0
    assert (out / "_state" / "2024-01-02" / "manifest.json").exists()
    # Missing (no folder): refused, naming the partition; nothing written.
    with pytest.raises(MissingPartitionError) as exc:
        run_partition(spark, cfg, "2024-01-03")
    assert exc.value.key == "--partition" and "dt=2024-01-03" in str(exc.value) and "--allow-missing" in str(exc.value)
    assert not (out / "_state" / "2024-01-03").exists()
    # Allowed: it replays as empty, time passes and the state carries to day 4, whose windows then fire.
    s3 = run_partition(spark, cfg, "2024-01-03", allow_missing=True)
    assert s3.rows_read == 0
    s4 = run_partition(spark, cfg, "2024-01-04", end_of_input="flush")
    assert s4.rows_read == 2 and s4.rows_in_windows == 2
    m = json.loads((out / "_state" / "2024-01-04" / "manifest.json").read_text())
    assert m["previous"] == "2024-01-03"
