"""Source files (io/files.py): schema drift is refused naming the file and partition; an empty partition folder
and a missing one (allowed) replay as time passing."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from event_replay.semantics.config import parse_config


def _write(path: Path, table: dict, name="part-0.parquet"):
    path.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(table), path / name)


def _rows(n0, n, value):
    return {"split": ["a"] * n, "offset": list(range(n0, n0 + n)),
            "arrival_time": [1_704_067_200_000 + 1000 * i for i in range(n0, n0 + n)],
            "event_time": [1_704_067_200_000 + 1000 * i for i in range(n0, n0 + n)], "key": ["k"] * n,
            "value": value(n)}


def _part_cfg(src, out):
    return parse_config({"source": {"path": str(src), "splits": ["a"]}, "watermark": {"max_out_of_orderness": "1s"},
                         "window": {"type": "tumbling", "size": "10s"}, "aggregations": {"cnt": "count(*)"},
                         "output": {"path": str(out)}})


@pytest.mark.spark
def test_schema_drift_is_refused_naming_the_file_and_partition(spark, tmp_path):
    from event_replay.job import run_partition, run_replay
    from event_replay.io.files import SchemaDriftError

    # Inside one dataset: two files disagree on `value`.
    flat = tmp_path / "flat"
    _write(flat, _rows(0, 3, lambda n: list(range(n))), "part-0.parquet")
    _write(flat, _rows(3, 3, lambda n: [str(i) for i in range(n)]), "part-1.parquet")
    out = tmp_path / "out"
    with pytest.raises(SchemaDriftError) as exc:
        run_replay(spark, _part_cfg(flat, out))
    assert exc.value.key == "source.path"
    assert "'value' is string in" in str(exc.value) and "part-1.parquet" in str(exc.value)
    assert not out.exists() or sorted(os.listdir(out)) == []  # nothing written, lock released

    # Between partitions: day 2 alone reads fine, but its `value` is not day 1's type.
    src = tmp_path / "parts"
    _write(src / "dt=2024-01-01", _rows(0, 3, lambda n: list(range(n))))
    _write(src / "dt=2024-01-02", _rows(86_400, 3, lambda n: [f"v{i}" for i in range(n)]))
    cfg = _part_cfg(src, out)
    run_partition(spark, cfg, "2024-01-01", first=True)
    with pytest.raises(SchemaDriftError) as exc:
        run_partition(spark, cfg, "2024-01-02")
    msg = str(exc.value)
    assert "partition dt=2024-01-02" in msg and "partition dt=2024-01-01" in msg and "'value'" in msg
    assert not (out / "windows" / "dt=2024-01-02").exists()


@pytest.mark.spark
def test_empty_and_missing_partitions(spark, tmp_path):
    from event_replay.job import run_partition
    from event_replay.io.source import MissingPartitionError

    src = tmp_path / "parts"
    _write(src / "dt=2024-01-01", _rows(0, 3, lambda n: list(range(n))))
    (src / "dt=2024-01-02").mkdir()  # empty: the export ran and found nothing
    _write(src / "dt=2024-01-04", _rows(3 * 86_400, 2, lambda n: list(range(n))))
    out = tmp_path / "out"
    cfg = _part_cfg(src, out)
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

