"""Reading a Spark-written Parquet dataset with the schema from a footer: the same frame as Spark's inference,
without its Spark job."""
from __future__ import annotations

import pytest

from event_replay.io.parquet_footer import footer_schema, read_parquet
from event_replay.spark_jobs import counted

pytestmark = pytest.mark.spark


def _written(spark, tmp_path):
    df = spark.createDataFrame([(1, "a", 2.5, "2024-01-01"), (2, None, None, "2024-01-02")],
                               "id long, name string, x double, dt string")
    path = str(tmp_path / "ds")
    df.write.partitionBy("dt").parquet(path)
    return path


def test_same_frame_as_spark_inference_without_a_job(spark, tmp_path):
    path = _written(spark, tmp_path)
    with counted(spark, "footer-read") as jobs:
        ours = read_parquet(spark, path)
    assert jobs.jobs == 0
    theirs = spark.read.parquet(path)
    assert ours.schema == theirs.schema
    assert sorted(ours.collect()) == sorted(theirs.collect())


def test_one_partition_keeps_its_partition_column_with_a_base_path(spark, tmp_path):
    path = _written(spark, tmp_path)
    one = read_parquet(spark, f"{path}/dt=2024-01-02", base_path=path)
    assert [r.asDict() for r in one.collect()] == [{"id": 2, "name": None, "x": None, "dt": one.first()["dt"]}]
    assert "dt" in one.columns


def test_not_local_or_not_parquet_is_left_to_spark(spark, tmp_path):
    assert footer_schema(spark, "s3a://bucket/ds") is None
    assert footer_schema(spark, str(tmp_path / "missing")) is None
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "part-0.csv").write_text("a,b\n")
    assert footer_schema(spark, str(tmp_path / "plain")) is None


def test_a_read_of_one_known_file_takes_its_schema_without_a_job(spark, tmp_path):
    """A source partition of one file (io/partition_source.py): its footer's schema, files looked up recursively."""
    path = _written(spark, tmp_path)
    folder = f"{path}/dt=2024-01-01"
    one = next(p for p in (tmp_path / "ds" / "dt=2024-01-01").iterdir() if p.name.endswith(".parquet"))
    with counted(spark, "one-file-read") as jobs:
        ours = read_parquet(spark, [folder], recursive=True, one_file=str(one))
    assert jobs.jobs == 0
    theirs = spark.read.option("recursiveFileLookup", "true").parquet(folder)
    assert ours.schema == theirs.schema and ours.collect() == theirs.collect()
