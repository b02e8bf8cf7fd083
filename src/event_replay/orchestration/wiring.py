"""The tail both backfill DAGs share, wired inside the caller's `with DAG(...)` block:
plan -> replay_partitions (one spark-submit per chunk of partitions, in order; outlets: the output datasets'
Assets, assets.py) -> compare_live (optional: with a live path in the form, compare_task.py) -> data_quality (one
spark-submit of the checks, which read the comparison) -> report. The comparison and the checks are tasks of their
own, each with its own Spark job: Airflow and the runs page show which one failed and how long each took.
Imported by DAG files only: it builds tasks, it does no work at parse time."""
from __future__ import annotations

from typing import Any

from airflow.sdk import task

from . import tasks as t
from .compare_task import CompareLiveOperator
from .operators import DataQualityOperator, ReplayPartitionsOperator


def replay_check_report(planned: Any, project_dir: str, replay_task_id: str = "replay_partitions") -> None:
    """`planned` is the plan task's output (an XComArg)."""

    @task
    def report(planned: dict, dq: dict, dag_run=None, run_id=None) -> dict:
        return t.make_report(planned, dq, dag_run.dag_id, run_id)

    replay = ReplayPartitionsOperator(task_id=replay_task_id, plan_task_id="plan", project_dir=project_dir)
    dq = DataQualityOperator(task_id="data_quality", plan_task_id="plan", project_dir=project_dir)

    compare = CompareLiveOperator(task_id="compare_live", plan_task_id="plan", project_dir=project_dir)
    planned >> replay >> compare >> dq
    planned >> dq
    report(planned, dq.output)
