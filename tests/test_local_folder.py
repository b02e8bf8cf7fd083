"""Report folders swapped in whole (local_folder.py): a reader sees the old folder or the new one, a failed fill
leaves the old one and no staging folder; a Spark frame written as one CSV or Parquet file."""
from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from event_replay.local_folder import replace_folder, write_one_file


def test_the_new_content_replaces_the_old_and_nothing_else_is_left(tmp_path):
    out = tmp_path / "reports" / "grid"  # parents made
    assert replace_folder(out, lambda d: (d / "a.txt").write_text("one")) == 3
    assert (out / "a.txt").read_text() == "one"

    def fill(staging):
        assert not staging.name.startswith("grid") and staging.name.startswith(".")  # hidden while filled
        assert (out / "a.txt").read_text() == "one"  # the old one stays readable meanwhile
        (staging / "b.txt").write_text("two")
        return "filled"

    assert replace_folder(out, fill) == "filled"
    assert sorted(p.name for p in out.iterdir()) == ["b.txt"]  # the old content is gone, not merged
    assert sorted(p.name for p in out.parent.iterdir()) == ["grid"]  # no staging, no previous folder


def test_a_failed_fill_leaves_the_old_folder_and_no_staging(tmp_path):
    out = tmp_path / "grid"
    replace_folder(out, lambda d: (d / "a.txt").write_text("one"))

    def fail(staging):
        (staging / "half.txt").write_text("x")
        raise KeyboardInterrupt  # an interrupt too, not only an Exception

    with pytest.raises(KeyboardInterrupt):
        replace_folder(out, fail)
    assert [p.name for p in tmp_path.iterdir()] == ["grid"] and (out / "a.txt").read_text() == "one"


@pytest.mark.spark
@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_a_frame_as_one_file(spark, tmp_path, fmt):
    df = spark.range(0, 50, numPartitions=4).withColumnRenamed("id", "n")
    target = tmp_path / f"rows.{fmt}"
    write_one_file(df, target, fmt)
    assert [p.name for p in tmp_path.iterdir()] == [target.name]  # Spark's folder removed
    if fmt == "csv":
        lines = target.read_text().splitlines()
        assert lines[0] == "n" and sorted(int(x) for x in lines[1:]) == list(range(50))
    else:
        assert sorted(pq.read_table(target).column("n").to_pylist()) == list(range(50))
