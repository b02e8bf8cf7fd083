"""The output layout: the names every writer and reader of a job's output share."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from event_replay import layout


def test_datasets_in_the_order_the_writer_writes_them():
    assert layout.DATASETS == ("windows", "late_events", "watermarks", "quarantine", "counts")
    assert layout.COUNTS in layout.DATASETS


def test_folders_and_files_that_outputs_on_disk_already_have():
    # Existing outputs, the Airflow plugin and users' scripts find these names: renaming one is a breaking change.
    assert (layout.STATE_FOLDER, layout.RANGE_PROGRESS_FILE) == ("_state", "_range.json")
    assert (layout.DOCS_FOLDER, layout.WHY_FOLDER, layout.COMPARE_FOLDER, layout.TUNING_FOLDER) == \
        ("_data_docs", "why_report", "compare", "_tuning")
    assert (layout.AIRFLOW_FOLDER, layout.RECORD_FILE, layout.PLAN_FILE, layout.CHUNK_FILE, layout.DONE_FOLDER,
            layout.CANCEL_FILE, layout.DATA_QUALITY_FILE) == \
        ("_airflow", "run.json", "plan.json", "replaying.json", "done", "cancelled.json", "data_quality.json")
    assert (layout.TUNING_JSON_FILE, layout.TUNING_PLOT_FILE) == ("tuning.json", "late_share_vs_lag.png")


def test_no_two_names_collide():
    folders = [*layout.DATASETS, layout.STATE_FOLDER, layout.DOCS_FOLDER, layout.WHY_FOLDER, layout.COMPARE_FOLDER,
               layout.TUNING_FOLDER, layout.AIRFLOW_FOLDER, layout.RANGE_PROGRESS_FILE]
    assert len(set(folders)) == len(folders)
    run_files = [layout.RECORD_FILE, layout.PLAN_FILE, layout.CHUNK_FILE, layout.DONE_FOLDER, layout.CANCEL_FILE,
                 layout.REPORT_FILE, layout.REPORT_MD_FILE, layout.DATA_QUALITY_FILE, layout.DOCS_FOLDER,
                 layout.WHY_FOLDER, layout.COMPARE_FOLDER]
    assert len(set(run_files)) == len(run_files)


@pytest.mark.parametrize("output", ["/data/out", "/data/out/", "s3a://bucket/out/"])
def test_state_dir(output):
    assert layout.state_dir(output, "2024-01-02") == f"{output.rstrip('/')}/_state/2024-01-02"


@pytest.mark.parametrize("run_id, folder", [
    ("manual__2024-01-02T03:04:05+00:00", "manual__2024-01-02T03_04_05_00_00"),
    ("scheduled__2024-01-02", "scheduled__2024-01-02"),
    ("../../etc", ".._.._etc"),
    ("///", "run"),
    ("", "run"),
])
def test_run_folder_name_is_safe_for_a_path(run_id, folder):
    assert layout.run_folder_name(run_id) == folder
    assert "/" not in layout.run_folder_name(run_id)


def test_the_comparison_belonging_to_a_report_folder_is_its_sibling():
    run = Path("/data/out/_airflow/manual__1")
    assert layout.compare_folder_near(run / layout.DOCS_FOLDER) == run / "compare"
    assert layout.compare_folder_near(str(run / layout.WHY_FOLDER)) == run / "compare"


def test_imports_nothing_heavy():
    # The Airflow plugin imports it in the webserver, where Spark, GX and matplotlib must not load.
    code = ("import sys, event_replay.layout, event_replay.html_page; "
            "print(sorted(m for m in ('pyspark', 'great_expectations', 'matplotlib', 'pandas') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
