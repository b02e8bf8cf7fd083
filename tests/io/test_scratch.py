"""Driver tables reach Spark without a local relation of millions of rows (src/event_replay/io/scratch.py).

The regression guard of issue 34: a bursty log whose replay has over a million watermark changes, replayed by
`replay run` in a driver JVM of 512 MB. Before the scratch folder, the watermark changes were a local relation in
the driver's heap and this run died with java.lang.OutOfMemoryError. It is slow at 512 MB (GC): no timing is
asserted, only that it completes with every row accounted for.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from event_replay.io.scratch import LOCAL_ROWS_MAX, SCRATCH_CONF, driver_frame, scratch_space

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from bursty import BurstyProfile, chunks  # noqa: E402  (bench/bursty.py: the benchmark's bursty shape)


def test_small_table_is_a_local_relation_large_one_a_scratch_file(spark, tmp_path):
    small = pa.table({"x": pa.array(range(10), pa.int64())})
    large = pa.table({"x": pa.array(range(LOCAL_ROWS_MAX + 1), pa.int64())})
    with scratch_space(spark, str(tmp_path)) as folder:
        assert spark.conf.get(SCRATCH_CONF) == folder
        assert "LocalTableScan" in driver_frame(spark, small)._jdf.queryExecution().executedPlan().toString()
        df = driver_frame(spark, large)
        assert "FileScan parquet" in df._jdf.queryExecution().executedPlan().toString()
        assert df.agg({"x": "sum"}).collect()[0][0] == sum(range(LOCAL_ROWS_MAX + 1))
        assert len(list(Path(folder).glob("*.parquet"))) == 1
    assert not Path(folder).exists()  # removed with the block
    assert spark.conf.get(SCRATCH_CONF, None) is None


def test_a_scratch_file_has_dictionaries_for_its_string_columns_only(spark, tmp_path):
    import pyarrow.parquet as pq
    n = LOCAL_ROWS_MAX + 1
    table = pa.table({"replay_time": pa.array(range(n), pa.int64()),
                      "split": pa.array(["p0", "p1"] * (n // 2) + ["p0"] * (n % 2), pa.string()),
                      "watermark": pa.array([v * 7 for v in range(n)], pa.int64())})
    with scratch_space(spark, str(tmp_path)) as folder:
        df = driver_frame(spark, table)
        (path,) = Path(folder).glob("*.parquet")
        meta = pq.ParquetFile(path).metadata.row_group(0)
        encodings = {meta.column(i).path_in_schema: meta.column(i).encodings for i in range(meta.num_columns)}
        assert any("DICTIONARY" in e for e in encodings["split"])
        assert not any("DICTIONARY" in e for e in encodings["replay_time"] + encodings["watermark"])
        assert df.orderBy("replay_time").toArrow().equals(table)


def test_scratch_is_removed_when_the_block_fails(spark, tmp_path):
    with pytest.raises(RuntimeError):
        with scratch_space(spark, str(tmp_path)) as folder:
            driver_frame(spark, pa.table({"x": pa.array(range(LOCAL_ROWS_MAX + 1), pa.int64())}))
            raise RuntimeError("boom")
    assert not Path(folder).exists()


def _bursty_log(folder: Path, rows: int) -> int:
    folder.mkdir(parents=True)
    written = 0
    for i, table in enumerate(chunks(BurstyProfile(rows=rows, chunk_rows=rows // 2))):
        pq.write_table(table, folder / f"part-{i:05d}.parquet")
        written += table.num_rows
    return written


def test_a_million_watermark_changes_replay_in_512_mb(tmp_path):
    rows = _bursty_log(tmp_path / "log", 1_400_000)
    cfg = yaml.safe_load((ROOT / "bench" / "configs" / "bursty.yaml").read_text())
    cfg["source"]["path"] = str(tmp_path / "log")
    cfg["output"]["path"] = str(tmp_path / "out")
    cfg["watermark"]["interval"] = "50ms"  # about a tick per row: each row moves its split's watermark
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(cfg))
    proc = subprocess.run([str(Path(sys.executable).parent / "replay"), "run", "--config", str(tmp_path / "job.yaml"),
                           "--master", "local[2]", "--conf", "spark.driver.memory=512m"],
                          cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "driver heap" in proc.stdout
    watermarks = pq.read_table(tmp_path / "out" / "watermarks").num_rows
    assert watermarks >= 1_000_000, watermarks
    counts = pq.read_table(tmp_path / "out" / "counts").to_pylist()[0]
    assert counts["rows_read"] == rows
    assert counts["rows_in_windows"] + counts["late_rows"] + counts["quarantined_rows"] + counts["skipped_rows"] \
        == counts["rows_read"]
