"""Nightly: replay the `dt=` partition of the logical date's day, continuing the state of the day before.

@daily with data intervals: the run for 2024-01-01 starts after that day ends and replays dt=2024-01-01. It starts
paused (`airflow dags unpause nightly_event_time_backfill`); unpaused, it first catches up the day before.
validate -> wait_for_partition (the day's folder: waits up to `wait_hours` after the day ended, then the run is
skipped, not failed) -> plan -> replay_partition -> data_quality -> report. One run at a time and depends_on_past,
because each day continues the state the previous one carried (hold), so (on Airflow 3.3, where a DAG with
depends_on_past needs a reprocess behavior)

    airflow backfill create --dag-id nightly_event_time_backfill --from-date 2024-01-01 --to-date 2024-01-03 \
        --max-active-runs 1 --reprocess-behavior failed

replays a historical range day by day, in order. The logic lives in event_replay.orchestration.
"""
from __future__ import annotations

from pathlib import Path

import pendulum
from airflow.sdk import DAG, CronDataIntervalTimetable, PokeReturnValue, task

from event_replay.orchestration import tasks as t
from event_replay.orchestration.form import airflow_params
from event_replay.orchestration.wiring import replay_check_report

PROJECT_DIR = str(Path(__file__).resolve().parents[1])

with DAG(
    dag_id="nightly_event_time_backfill",
    schedule=CronDataIntervalTimetable("@daily", timezone="UTC"),
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    # A day's plan checks the previous day's state: it must wait for that day's replay, not only its plan.
    default_args={"depends_on_past": True, "wait_for_downstream": True},
    params=airflow_params(PROJECT_DIR, nightly=True),
    tags=["event-replay"],
    doc_md=__doc__,
) as dag:

    @task(retries=0)
    def validate(params=None, logical_date=None, run_id=None) -> dict:
        return t.validate_nightly(params, logical_date.date(), PROJECT_DIR, run_id)

    @task.sensor(poke_interval=300, timeout=3 * 86_400, mode="reschedule")
    def wait_for_partition(validated: dict, params=None, data_interval_end=None) -> PokeReturnValue:
        return PokeReturnValue(is_done=t.partition_arrived(validated, params["wait_hours"], data_interval_end))

    @task(retries=0)
    def plan(validated: dict) -> dict:
        return t.plan_partitions(validated)

    validated = validate()
    planned = plan(validated)
    wait_for_partition(validated) >> planned
    # One partition per night: the task id says so (it is the same operator).
    replay_check_report(planned, PROJECT_DIR, replay_task_id="replay_partition")
