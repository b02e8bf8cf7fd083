"""io/partition_folders.py: a partition's folder name, and the one listing of the partitions present (real days and
hours only, ascending)."""
from __future__ import annotations

import re

from event_replay.io.fs import LocalFs
from event_replay.io.partition_folders import FOLDER_IN_PATH, folder_of, partitions_present


def test_folder_of_a_day_and_an_hour():
    assert folder_of("2024-03-01") == "dt=2024-03-01"
    assert folder_of("2024-03-01T07") == "dt=2024-03-01/hour=07"


def test_only_real_days_and_hours_are_partitions(tmp_path):
    for sub in ["dt=2024-03-02/hour=00", "dt=2024-03-01/hour=23", "dt=2024-03-01/hour=24", "dt=2024-02-30/hour=01",
                "dt=2024-03-01/other", "dt=24-03-01", "_staging/dt=2024-01-01", "dt=2024-03-03"]:
        (tmp_path / sub).mkdir(parents=True)
    (tmp_path / "dt=2024-03-04").write_text("a file is not a folder")
    assert partitions_present(LocalFs(), f"{tmp_path}/", False) == ["2024-03-01", "2024-03-02", "2024-03-03"]
    assert partitions_present(LocalFs(), str(tmp_path), True) == ["2024-03-01T23", "2024-03-02T00"]


def test_the_folder_in_a_files_path():
    m = re.match(FOLDER_IN_PATH, "s3a://b/src/dt=2024-03-01/hour=05/part-0.parquet")
    assert (m.group(1), m.group(3)) == ("2024-03-01", "05")
    m = re.match(FOLDER_IN_PATH, "/data/dt=2024-03-01/part-0.parquet")
    assert (m.group(1), m.group(3)) == ("2024-03-01", None)
