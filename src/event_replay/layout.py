"""Where everything of a job's output lives: the datasets, the carried state, the DAG run folders and the reports
in them. Every module that writes or looks for one of these takes its path from here. Standard library only: the
Airflow plugin imports it in the webserver.

    <output.path>/windows|late_events|watermarks|quarantine|counts/   the datasets
    <output.path>/compare/                                          replay compare's result (the default --out)
    <report folder>/../compare/                                      the comparison belonging to a report folder
"""
from __future__ import annotations

from pathlib import Path

DATA_QUALITY_FILE = "data_quality.json"  # replay quality's outcome in a DAG run folder
COMPARE_FOLDER = "compare"  # replay compare's result: summary.json, partitions.parquet, index.html
COMPARE_PARTITIONS_FILE = "partitions.parquet"  # its per-partition summary (the live parity suite's batch)
COMPARE_SUMMARY_FILE = "summary.json"


def compare_folder_near(folder: str | Path) -> Path:
    """The comparison belonging to a report folder (Data Docs, why-report): its sibling `compare/`."""
    return Path(folder).parent / COMPARE_FOLDER
