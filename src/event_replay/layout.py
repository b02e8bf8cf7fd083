"""Where a job's output lives: its datasets, its carried state, the DAG runs' folders and the reports in them.
Every module that writes or looks for one of these takes the name from here. Standard library only: the Airflow
plugin imports it in the webserver.

    <output.path>/
        windows/ late_events/ watermarks/ quarantine/ counts/   DATASETS (dt=YYYY-MM-DD[/hour=HH] folders)
        _state/<partition>/                                     the state a partition carries to the next
        _range.json                                             a range replay's progress
        _data_docs/  why_report/                                `replay validate`, `replay why` (CLI runs)
        compare/                                                `replay compare` (its default --out)
        _tuning/<grid>/                                         `replay tune`: tuning.json, the plot, the tables
        _airflow/<run_id>/                                      a DAG run: run.json, plan.json, replaying.json,
                                                                done/<partition>, cancelled.json, report.json,
                                                                report.md, report.html,
                                                                data_quality.json, _data_docs/, why_report/,
                                                                compare/
"""
from __future__ import annotations

import re
from pathlib import Path

DATASETS = ("windows", "late_events", "watermarks", "quarantine", "counts")  # in the order the writer writes them
COUNTS = "counts"
STATE_FOLDER = "_state"
RANGE_PROGRESS_FILE = "_range.json"

DOCS_FOLDER = "_data_docs"
WHY_FOLDER = "why_report"
WHY_SUMMARY_FILE = "summary.json"  # every figure of the why-report; its page is rendered from it
COMPARE_FOLDER = "compare"
COMPARE_SUMMARY_FILE = "summary.json"  # every figure; the page is rendered from it
COMPARE_PARTITIONS_FILE = "partitions.parquet"  # one row per partition: the live parity suite's batch
COMPARE_JOBS_FILE = "spark_jobs.json"  # the Spark jobs of the comparison and its calibration (the run report's)
TUNING_FOLDER = "_tuning"
TUNING_JSON_FILE = "tuning.json"
TUNING_PLOT_FILE = "late_share_vs_lag.png"

AIRFLOW_FOLDER = "_airflow"
RECORD_FILE = "run.json"  # orchestration/record.py
PLAN_FILE = "plan.json"  # orchestration/report.py: the partitions the run plans
CHUNK_FILE = "replaying.json"  # the chunk whose Spark job runs now
DONE_FOLDER = "done"  # done/<partition>: one marker per partition replayed
CANCEL_FILE = "cancelled.json"  # orchestration/cancel.py
REPORT_FILE = "report.json"
REPORT_MD_FILE = "report.md"
REPORT_HTML_FILE = "report.html"  # the same report as a page, for a browser
DATA_QUALITY_FILE = "data_quality.json"  # `replay quality`'s outcome

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def state_dir(output_path: str, partition_id: str) -> str:
    """Where a partition's carried state lives (committed with its outputs)."""
    return f"{output_path.rstrip('/')}/{STATE_FOLDER}/{partition_id}"


def run_folder_name(run_id: str) -> str:
    """A DAG run's folder name: its run id made safe for a path."""
    return _UNSAFE.sub("_", run_id).strip("_") or "run"


def compare_folder_near(folder: str | Path) -> Path:
    """The comparison belonging to a report folder (Data Docs, why-report): its sibling `compare/`."""
    return Path(folder).parent / COMPARE_FOLDER
