"""What-if tuning (manual trigger): replay one history under a grid of watermark settings and compare them.

validate (the config and the three grids, every variant's config checked, before anything runs) -> tune (one
spark-submit of `python -m event_replay.tune_job`: every variant in one Spark application, the source read once;
connection and pool `replay_spark`) -> report (the table: late rows and share, windows re-fired late, watermark
lag mean/p99, delay from window end to first firing, late rows by cause; and the plot, under
`<output.path>/_tuning/<grid>/`). The logic lives in event_replay.orchestration.tuning; this file only wires it.
"""
from __future__ import annotations

from pathlib import Path

import pendulum
from airflow.sdk import DAG, task

from event_replay.orchestration import tuning as t

PROJECT_DIR = str(Path(__file__).resolve().parents[1])

with DAG(
    dag_id="watermark_tuning",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    is_paused_upon_creation=False,  # manual only: a triggered run must not wait for an unpause
    params=t.airflow_params(PROJECT_DIR),
    tags=["event-replay"],
    doc_md=__doc__,
) as dag:

    @task
    def validate(params=None, run_id=None) -> dict:
        return t.validate_tuning(params, PROJECT_DIR, run_id)

    @task
    def report(validated: dict) -> dict:
        return t.tuning_report(validated)

    validated = validate()
    tune = t.TuningSubmitOperator(task_id="tune", validate_task_id="validate")
    validated >> tune >> report(validated)
