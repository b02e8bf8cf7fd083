"""The live parity suite's batch: compare/partitions.parquet, one row per partition (agreement_pct against
min_agreement_pct, the threshold `replay compare --min-agreement` set), for the GX suite `replay_live_parity`
(quality/suites.py) beside the suites of the replay's outputs.

The comparison validated is the one next to the Data Docs: `<docs_dir>/../compare/` (by default
`<output.path>/compare/`, where `replay compare` writes; in a DAG run, the run folder's, where its compare task
wrote). Without one, the suite does not run.
"""
from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from ..layout import COMPARE_PARTITIONS_FILE, compare_folder_near


def live_parity_batch(spark, docs_dir: str | Path):
    """The batch (a Spark DataFrame of the file's rows, held by the driver: a few per partition), or None when no
    comparison is there. Not `spark.read.parquet(path)`: GX persists its batches, and Spark serves a later read of
    the same path from that cache (its plan is the same), so a new comparison would be validated as the old one."""
    f = compare_folder_near(docs_dir) / COMPARE_PARTITIONS_FILE
    if "://" in str(docs_dir) or not f.is_file():
        return None
    return spark.createDataFrame(pq.read_table(f).to_pandas())
