"""Replay the `dt=` partitions of a day range, in order, with Flink's event-time rules (manual trigger).

validate (config + overrides + range, before anything runs) -> plan (partitions, missing days, carried state)
-> replay_partitions (one spark-submit of jobs/replay_job.py per partition, in order, connection and pool
`replay_spark`) -> data_quality (GX suites, optional warn-only) -> report (per-partition counts, JSON + Markdown).
The logic lives in event_replay.orchestration; this file only wires it.
"""
from __future__ import annotations

from pathlib import Path

import pendulum
from airflow.sdk import DAG, task

from event_replay.orchestration import tasks as t
from event_replay.orchestration.operators import ReplayPartitionsOperator
from event_replay.orchestration.params import airflow_params

PROJECT_DIR = str(Path(__file__).resolve().parents[1])

with DAG(
    dag_id="event_time_backfill",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    params=airflow_params(PROJECT_DIR),
    tags=["event-replay"],
    doc_md=__doc__,
) as dag:

    @task
    def validate(params=None, run_id=None) -> dict:
        return t.validate_backfill(params, PROJECT_DIR, run_id)

    @task
    def plan(validated: dict) -> dict:
        return t.plan_partitions(validated)

    @task
    def data_quality(planned: dict, params=None) -> dict:
        if not params["run_data_quality"]:
            return {"status": "not run (run_data_quality off)"}
        return t.data_quality(planned, warn_only=planned["dq_warn_only"])

    @task
    def report(planned: dict, dq: dict, dag_run=None, run_id=None) -> dict:
        return t.make_report(planned, dq, dag_run.dag_id, run_id)

    planned = plan(validate())
    replay = ReplayPartitionsOperator(task_id="replay_partitions", plan_task_id="plan", project_dir=PROJECT_DIR)
    dq = data_quality(planned)
    planned >> replay >> dq
    report(planned, dq)
