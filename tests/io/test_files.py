"""Source files (io/files.py): schema drift is refused naming the file and partition."""
from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from event_replay.semantics.config import parse_config
from source_logs import second_rows


def _write(path: Path, table: dict, name="part-0.parquet"):
    path.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(table), path / name)


def _part_cfg(src, out):
    return parse_config({"source": {"path": str(src), "splits": ["a"]}, "watermark": {"max_out_of_orderness": "1s"},
                         "window": {"type": "tumbling", "size": "10s"}, "aggregations": {"cnt": "count(*)"},
                         "output": {"path": str(out)}})


@pytest.mark.spark
def test_schema_drift_is_refused_naming_the_file_and_partition(spark, tmp_path):
    from event_replay.job import run_replay
    from partition_cases import run_partition
    from event_replay.io.files import SchemaDriftError

    # Inside one dataset: two files disagree on `value`.
    flat = tmp_path / "flat"
    _write(flat, second_rows(0, 3, lambda n: list(range(n))), "part-0.parquet")
    _write(flat, second_rows(3, 3, lambda n: [str(i) for i in range(n)]), "part-1.parquet")
    out = tmp_path / "out"
    with pytest.raises(SchemaDriftError) as exc:
        run_replay(spark, _part_cfg(flat, out))
    assert exc.value.key == "source.path"
    assert "'value' is string in" in str(exc.value) and "part-1.parquet" in str(exc.value)
    assert not out.exists() or sorted(os.listdir(out)) == []  # nothing written, lock released

    # Between partitions: day 2 alone reads fine, but its `value` is not day 1's type.
    src = tmp_path / "parts"
    _write(src / "dt=2024-01-01", second_rows(0, 3, lambda n: list(range(n))))
    _write(src / "dt=2024-01-02", second_rows(86_400, 3, lambda n: [f"v{i}" for i in range(n)]))
    cfg = _part_cfg(src, out)
    run_partition(spark, cfg, "2024-01-01", first=True)
    with pytest.raises(SchemaDriftError) as exc:
        run_partition(spark, cfg, "2024-01-02")
    msg = str(exc.value)
    assert "partition dt=2024-01-02" in msg and "partition dt=2024-01-01" in msg and "'value'" in msg
    assert not (out / "windows" / "dt=2024-01-02").exists()


@pytest.mark.parametrize("writer", ["spark", "arrow"])
def test_the_schema_read_from_one_footer_is_the_one_spark_infers(spark, tmp_path, writer):
    """Spark's inference (a Spark job) and files.inferred_schema (the driver) agree, with Spark's metadata in the
    footer (non-null columns, timestamps, a NTZ) and without it (Arrow's own types: strings, a timestamp without zone, int8, float)."""
    import datetime as dt

    from event_replay.io.files import data_files, inferred_schema
    from event_replay.spark import local_frame

    folder = str(tmp_path / "f")
    if writer == "spark":
        local_frame(spark, [("a", 1, dt.datetime(2024, 1, 1), dt.datetime(2024, 1, 1), 0.5)],
                    "s string not null, n bigint not null, t timestamp, u timestamp_ntz, x double") \
            .coalesce(1).write.parquet(folder)
    else:
        os.makedirs(folder)
        pq.write_table(pa.table({"s": ["a"], "t": pa.array([1], pa.timestamp("us")),
                                 "b": pa.array([1], pa.int8()), "d": pa.array([1.5], pa.float32())}),
                       f"{folder}/part-0.parquet")
    (file,) = data_files(spark, folder)
    assert inferred_schema(spark, file) == spark.read.parquet(folder).schema
    assert spark.read.schema(inferred_schema(spark, file)).parquet(folder).collect() == \
        spark.read.parquet(folder).collect()


def test_input_bytes_counts_the_data_files_a_job_reads(tmp_path):
    from event_replay.io.files import input_bytes

    for day, size in (("2024-01-01", 100), ("2024-01-02", 250)):
        (tmp_path / f"dt={day}").mkdir()
        (tmp_path / f"dt={day}" / "part-0.parquet").write_bytes(b"x" * size)
        (tmp_path / f"dt={day}" / "_SUCCESS").write_bytes(b"x" * 7)  # hidden, as Spark's file index skips it
    assert input_bytes(str(tmp_path), ["dt=2024-01-02"]) == 250
    assert input_bytes(str(tmp_path), ["dt=2024-01-01", "dt=2024-01-02", "dt=2024-01-03"]) == 350  # one missing
    assert input_bytes(str(tmp_path)) == 350
    assert input_bytes(str(tmp_path / "dt=2024-01-01" / "part-0.parquet")) == 100
    assert input_bytes("s3a://bucket/log") is None  # not listed without Spark
