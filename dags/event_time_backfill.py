"""Replay the `dt=` partitions of a day range, in order, with Flink's event-time rules (manual trigger).

validate (config + overrides + range, before anything runs) -> plan (partitions, missing days, carried state)
-> replay_partitions (one spark-submit of jobs/replay_job.py per chunk of `partitions_per_job` partitions, in order,
connection and pool `replay_spark`; with the form's dry run: what it would read, nothing written) -> data_quality
(GX suites and the why-report, optional warn-only) -> report (per-partition counts, JSON + Markdown).
Unpaused from the start (it runs only when triggered). The logic lives in event_replay.orchestration; this file only
wires it.
"""
from __future__ import annotations

from pathlib import Path

import pendulum
from airflow.sdk import DAG, task

from event_replay.orchestration import tasks as t
from event_replay.orchestration.form import airflow_params
from event_replay.orchestration.wiring import replay_check_report

PROJECT_DIR = str(Path(__file__).resolve().parents[1])

with DAG(
    dag_id="event_time_backfill",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    is_paused_upon_creation=False,  # manual only: a triggered run must not wait for an unpause
    params=airflow_params(PROJECT_DIR),
    tags=["event-replay"],
    doc_md=__doc__,
) as dag:

    @task(retries=0)  # a refused request never gets better by retrying
    def validate(params=None, run_id=None) -> dict:
        return t.validate_backfill(params, PROJECT_DIR, run_id)

    @task(retries=0)
    def plan(validated: dict) -> dict:
        return t.plan_partitions(validated)

    replay_check_report(plan(validate()), PROJECT_DIR)
