"""End to end: `airflow dags test event_time_backfill` on a small partitioned log, with real task execution
(one spark-submit of jobs/replay_job.py per partition), in a throwaway AIRFLOW_HOME with a SQLite metadata DB."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from airflow_env import airflow, airflow_env, prepare, write_config
from event_replay.history.partitions import has_state
from event_replay.layout import DATASETS
from event_replay.samples.days import generate_days, write_days

pytestmark = [pytest.mark.spark, pytest.mark.timeout(900), pytest.mark.integration]
DAYS = ["2024-01-01", "2024-01-02", "2024-01-03"]


def test_backfill_dag_replays_every_planned_partition_in_order(tmp_path):
    source, output = tmp_path / "data", tmp_path / "out"
    table = generate_days(DAYS[0], days=len(DAYS), rows_per_day=300, splits=3, seed=3, rate=20.0)
    assert write_days(source, table) == DAYS
    config = write_config(tmp_path / "job.yaml", source, output)
    env = airflow_env(tmp_path / "airflow")
    prepare(env)

    # Data quality on (failing the run on a failed expectation): the suites read the dt= partitioned outputs.
    conf = {"config": str(config), "start_date": DAYS[0], "end_date": DAYS[-1], "idle_timeout": "3s",
            "run_data_quality": True, "dq_warn_only": False}
    airflow(env, "dags", "test", "event_time_backfill", "2024-02-01", "-c", json.dumps(conf), timeout=840)

    for day in DAYS:
        for ds in DATASETS:
            assert (output / ds / f"dt={day}").is_dir(), f"{ds} output missing for partition {day}"
    # One job (a chunk of up to partitions_per_job days) replays its days as one span and writes the state of its
    # last day, which the next chunk or night continues.
    assert [day for day in DAYS if has_state(None, str(output), day)] == [DAYS[-1]]
    reports = list((output / "_airflow").glob("*/report.json"))
    assert len(reports) == 1
    report = json.loads(reports[0].read_text())
    assert [p["partition"] for p in report["partitions"]] == DAYS and report["complete"]
    assert report["dq"].startswith("passed"), report["dq"]
    # The run's reports are in its own folder: a later run of the same outputs does not overwrite them.
    run_folder = reports[0].parent
    assert report["why_report"] == str(run_folder / "why_report" / "index.html")
    assert (run_folder / "why_report" / "summary.json").is_file() and (run_folder / "_data_docs" / "index.html").is_file()
    assert not (output / "why_report").exists() and not (output / "_data_docs").exists()
    # Data quality ran as a Spark job (spark-submit ... replay_job.py quality) and left its outcome for the task.
    dq = json.loads((run_folder / "data_quality.json").read_text())
    assert dq["success"] and dq["expectations"] > 0 and dq["failed_names"] == [], dq
    # The replay task's outlets: one asset event per output dataset, with the output path and the range replayed.
    events = _asset_events(tmp_path / "airflow" / "airflow.db")
    assert sorted(events) == sorted(f"event_replay.{ds}" for ds in DATASETS)
    for name, (task_id, extra) in events.items():
        ds = name.split(".", 1)[1]
        assert task_id == "replay_partitions"
        assert extra["output_path"] == str(output) and extra["path"] == f"{output}/{ds}"
        assert extra["partitions"] == {"first": DAYS[0], "last": DAYS[-1], "count": len(DAYS)}
    # Every row read is accounted for exactly once per partition (counts, from the written outputs).
    assert report["totals"]["windows"] > 0
    effective = (reports[0].parent / "job.yaml").read_text()
    assert "idle_timeout: 3000" in effective  # the override reached the jobs
    # The partitions ran in order: each one's done marker was written after the previous one's.
    done = [(reports[0].parent / "done" / d).stat().st_mtime_ns for d in DAYS]
    assert done == sorted(done)


def _asset_events(db: Path) -> dict[str, tuple[str, dict]]:
    """The asset events of the metadata DB: asset name -> (the task that emitted it, its extra)."""
    import sqlite3

    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT a.name, e.source_task_id, e.extra FROM asset_event e "
                           "JOIN asset a ON a.id = e.asset_id").fetchall()
    events = {name: (task_id, json.loads(extra) if isinstance(extra, str) else extra) for name, task_id, extra in rows}
    assert len(events) == len(rows), rows  # one event per asset
    return events


def test_missing_partition_fails_the_run_before_any_spark_job(tmp_path):
    source, output = tmp_path / "data", tmp_path / "out"
    write_days(source, generate_days(DAYS[0], days=3, rows_per_day=50, splits=2))
    (source / f"dt={DAYS[1]}").rename(source / "moved-away")
    config = write_config(tmp_path / "job.yaml", source, output, splits=2)
    env = airflow_env(tmp_path / "airflow")
    prepare(env)
    conf = {"config": str(config), "start_date": DAYS[0], "end_date": DAYS[-1], "run_data_quality": False}
    proc = airflow(env, "dags", "test", "event_time_backfill", "2024-02-01", "-c", json.dumps(conf), check=False,
                   timeout=600)
    assert proc.returncode != 0
    assert "missing partitions" in proc.stdout + proc.stderr and f"dt={DAYS[1]}" in proc.stdout + proc.stderr
    assert not (output / "windows").exists()  # nothing was replayed
    assert _asset_events(tmp_path / "airflow" / "airflow.db") == {}  # a failed run updates no asset
