"""The replay task's walk (orchestration/backfill.py) without Airflow's operator around it: one Spark job per chunk
in order, the job that is on told for a cancel, the run record naming the master the hook submitted to, and the
asset events' extra once every planned partition is committed. The operator's retries: test_chunks.py."""
from __future__ import annotations

import datetime as dt
import json
import logging
from pathlib import Path

from event_replay.orchestration.assets import outlet_extras
from event_replay.orchestration.backfill import Backfill
from event_replay.orchestration.chunks import job_plans
from event_replay.orchestration.plan import plan_range

D = dt.date.fromisoformat


def test_the_walk_submits_each_chunk_in_order_and_records_it(tmp_path, monkeypatch):
    monkeypatch.setattr("event_replay.orchestration.backfill.partition_rows_read", lambda out, day: 10)
    days = [f"2024-01-0{i}" for i in range(1, 6)]
    plan = plan_range(days, days[0], days[-1], end_of_input="flush", allow_missing=False)
    out = tmp_path / "out"
    planned = {"plan": plan.to_dict(), "run_dir": str(out / "_airflow" / "r1"), "output_path": str(out),
               "config_path": "/c.yaml", "partitions_per_job": 2, "jobs": job_plans(plan.runs, 2)}
    submitted, on = [], []

    def submit(args, input_bytes):
        span = json.loads(args[args.index("--plan") + 1])["partitions"]
        submitted.append(span)
        for day in span.split(".."):
            (out / "_state" / day).mkdir(parents=True, exist_ok=True)
            (out / "_state" / day / "manifest.json").touch()

    extras = Backfill(planned, log=logging.getLogger("test"), submit=submit,
                      spark=lambda: {"master": "local[1]", "deploy_mode": None}, on_job=on.append,
                      run_id="r1", dag_id="d").run()
    assert submitted == ["2024-01-01..2024-01-02", "2024-01-03..2024-01-04", "2024-01-05..2024-01-05"]
    assert [o and o[1:3] for o in on] == [(1, 3), None, (2, 3), None, (3, 3), None]
    record = json.loads((Path(planned["run_dir"]) / "run.json").read_text())
    assert record["spark"]["master"] == "local[1]" and [j["rows_read"] for j in record["jobs"]] == [20, 20, 10]
    assert extras == outlet_extras(planned)  # every planned partition committed: each output gets its event


def test_a_full_disk_under_the_run_folder_fails_the_task_in_one_line(tmp_path, caplog):
    import pytest

    from event_replay.layout import RECORD_FILE
    from event_replay.orchestration.failures import Failed

    days = ["2024-01-01", "2024-01-02"]
    plan = plan_range(days, days[0], days[-1], end_of_input="flush", allow_missing=False)
    run_dir = tmp_path / "out" / "_airflow" / "r1"
    run_dir.mkdir(parents=True)
    # The record's temporary file is the kernel's always-full device: its write fails with a real ENOSPC.
    (run_dir / f".{RECORD_FILE}.tmp").symlink_to("/dev/full")
    planned = {"plan": plan.to_dict(), "run_dir": str(run_dir), "output_path": str(tmp_path / "out"),
               "config_path": "/c.yaml", "partitions_per_job": 2, "jobs": job_plans(plan.runs, 2)}
    submitted = []
    with caplog.at_level(logging.ERROR), pytest.raises(Failed) as failed:
        Backfill(planned, log=logging.getLogger("test"), submit=lambda args, input_bytes: submitted.append(args),
                 spark=lambda: {"master": "local[1]", "deploy_mode": None}, on_job=lambda running: None,
                 run_id="r1", dag_id="d").run()
    assert str(failed.value).startswith(f"no space left on the device of the run folder {run_dir}: ")
    assert "\n" not in str(failed.value) and submitted == []  # nothing submitted on a disk that cannot hold it
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == [str(failed.value)]
