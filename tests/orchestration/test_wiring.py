"""The tail both backfill DAGs share (orchestration/wiring.py), wired inside a DAG of the test's own: plan ->
replay -> calibrate -> compare_live -> data_quality -> report, the replay also straight to compare_live and
data_quality; each step after the calibration runs whatever the steps before it did (all_done: a failed calibration
fails only its task); each operator told the plan task and the project; the replay task's id as the caller names
it. (The DAG files themselves: test_dags.py.)"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pendulum
import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def airflow_home():
    os.environ.setdefault("AIRFLOW_HOME", tempfile.mkdtemp(prefix="airflow-dagbag-"))  # no DB needed to build a DAG
    os.environ["AIRFLOW__CORE__LOAD_EXAMPLES"] = "False"


def _dag(replay_task_id: str | None = None):
    from airflow.sdk import DAG, task

    from event_replay.orchestration.wiring import replay_check_report

    with DAG(dag_id="wired", schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC")) as dag:
        @task
        def plan() -> dict:
            return {}

        kw = {"replay_task_id": replay_task_id} if replay_task_id else {}
        replay_check_report(plan(), str(ROOT), **kw)
    return dag


def test_the_tail_in_order(airflow_home):
    dag = _dag()
    assert set(dag.task_ids) == {"plan", "replay_partitions", "calibrate", "compare_live", "data_quality", "report"}
    down = {t: dag.get_task(t).downstream_task_ids for t in dag.task_ids}
    assert down == {"plan": {"replay_partitions"}, "replay_partitions": {"calibrate", "compare_live", "data_quality"},
                    "calibrate": {"compare_live"}, "compare_live": {"data_quality"}, "data_quality": {"report"},
                    "report": set()}
    for task_id in ("replay_partitions", "calibrate", "compare_live", "data_quality"):
        op = dag.get_task(task_id)
        assert op.plan_task_id == "plan" and op.pool == "replay_spark", task_id
        assert op.application == str(ROOT / "jobs" / "replay_job.py")  # the project's job
    # Calibration, comparison and checks are separate Spark jobs; the calibration only after a replay that
    # succeeded, the others (and the report) whatever the steps before them did: each checks the replay's state.
    rules = {t: dag.get_task(t).trigger_rule for t in dag.task_ids}
    assert rules == {"plan": "all_success", "replay_partitions": "all_success", "calibrate": "all_success",
                     "compare_live": "all_done", "data_quality": "all_done", "report": "all_done"}
    assert dag.get_task("compare_live").replay_task_id == dag.get_task("data_quality").replay_task_id == \
        "replay_partitions"
    assert dag.get_task("compare_live").calibrate_task_id == "calibrate"


def test_the_replay_task_takes_the_caller_s_id(airflow_home):
    dag = _dag(replay_task_id="replay_partition")
    assert "replay_partitions" not in dag.task_ids
    assert dag.get_task("replay_partition").downstream_task_ids == {"calibrate", "compare_live", "data_quality"}
    assert dag.get_task("plan").downstream_task_ids == {"replay_partition"}
    assert dag.get_task("compare_live").replay_task_id == dag.get_task("data_quality").replay_task_id == \
        "replay_partition"
