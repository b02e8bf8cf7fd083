"""The live parity suite's batch (quality/parity.py): compare/partitions.parquet next to the Data Docs folder, read
fresh each time (a new comparison is never validated as the old one), and no batch without a local comparison."""
from __future__ import annotations

import pandas as pd
import pytest

from event_replay.layout import COMPARE_FOLDER, COMPARE_PARTITIONS_FILE, DOCS_FOLDER
from event_replay.quality.parity import live_parity_batch


class NoSpark:
    def __getattr__(self, name):
        raise AssertionError(f"spark.{name} used with no comparison to read")


def test_no_comparison_no_batch(tmp_path, monkeypatch):
    assert live_parity_batch(NoSpark(), tmp_path / DOCS_FOLDER) is None
    (tmp_path / COMPARE_FOLDER).mkdir()  # a comparison folder without its partitions table
    assert live_parity_batch(NoSpark(), tmp_path / DOCS_FOLDER) is None
    (tmp_path / COMPARE_FOLDER / COMPARE_PARTITIONS_FILE).mkdir()  # a folder of that name is not the file
    assert live_parity_batch(NoSpark(), tmp_path / DOCS_FOLDER) is None
    # A remote output: not read as a local path that happens to exist.
    monkeypatch.chdir(tmp_path)
    local = tmp_path / "s3a:" / "bucket" / "out" / COMPARE_FOLDER
    local.mkdir(parents=True)
    _write(local, [100.0])
    assert live_parity_batch(NoSpark(), "s3a://bucket/out/_data_docs") is None


def _write(folder, pcts):
    pd.DataFrame({"partition": [f"2024-01-0{i + 1}" for i in range(len(pcts))], "agreement_pct": pcts,
                  "min_agreement_pct": [99.0] * len(pcts)}).to_parquet(folder / COMPARE_PARTITIONS_FILE, index=False)


@pytest.mark.spark
def test_the_sibling_comparison_s_partitions_read_fresh(spark, tmp_path):
    run = tmp_path / "_airflow" / "manual__1"
    (run / COMPARE_FOLDER).mkdir(parents=True)
    _write(run / COMPARE_FOLDER, [100.0, 98.5])
    batch = live_parity_batch(spark, run / DOCS_FOLDER)
    assert sorted((r.partition, r.agreement_pct) for r in batch.collect()) == \
        [("2024-01-01", 100.0), ("2024-01-02", 98.5)]
    batch.cache().count()  # as GX persists its batches
    _write(run / COMPARE_FOLDER, [97.0])  # a new comparison in the same place
    assert [(r.partition, r.agreement_pct) for r in live_parity_batch(spark, str(run / DOCS_FOLDER)).collect()] == \
        [("2024-01-01", 97.0)]
