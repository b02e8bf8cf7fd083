"""The tail both backfill DAGs share, wired inside the caller's `with DAG(...)` block:
plan -> replay_partitions (one spark-submit per chunk of partitions, in order; outlets: the output datasets'
Assets, assets.py) -> calibrate (optional: a live path and a grid in the form, calibrate_task.py) -> compare_live
(optional: a live path, compare_task.py; its settings search reads the calibration's ranking) -> data_quality (one
spark-submit of the checks, which read the comparison and the calibration) -> report. Each step after the replay is
a task with its own Spark job, so Airflow and the runs page show which one failed and how long each took; each
runs once the replay succeeded whatever the steps before it did, and the report lists every step's outcome and
duration (steps.py). Imported by DAG files only: it builds tasks, it does no work at parse time."""
from __future__ import annotations

from typing import Any

from airflow.sdk import task

from . import tasks as t
from .calibrate_task import CalibrateOperator
from .compare_task import CompareLiveOperator
from .operators import DataQualityOperator, ReplayPartitionsOperator
from .steps import AFTER_STEPS


def replay_check_report(planned: Any, project_dir: str, replay_task_id: str = "replay_partitions") -> None:
    """`planned` is the plan task's output (an XComArg)."""
    plan_id = planned.operator.task_id

    @task(trigger_rule=AFTER_STEPS)
    def report(ti=None) -> dict:
        return t.run_report(ti, plan_id, replay_task_id)

    replay = ReplayPartitionsOperator(task_id=replay_task_id, plan_task_id=plan_id, project_dir=project_dir)
    calibrate = CalibrateOperator(task_id="calibrate", plan_task_id=plan_id, project_dir=project_dir)
    compare = CompareLiveOperator(task_id="compare_live", plan_task_id=plan_id, project_dir=project_dir,
                                  replay_task_id=replay_task_id, calibrate_task_id="calibrate")
    dq = DataQualityOperator(task_id="data_quality", plan_task_id=plan_id, project_dir=project_dir,
                             replay_task_id=replay_task_id)
    planned >> replay >> calibrate >> compare >> dq >> report()
    replay >> [compare, dq]  # each step after the replay checks the replay's own state (steps.after_replay)
