"""The tail both backfill DAGs share (orchestration/wiring.py), wired inside a DAG of the test's own: plan ->
replay -> compare_live -> data_quality -> report, plan also straight to data_quality and report; each operator
told the plan task and the project; the replay task's id as the caller names it. (The DAG files themselves:
test_dags.py.)"""
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
    assert set(dag.task_ids) == {"plan", "replay_partitions", "compare_live", "data_quality", "report"}
    down = {t: dag.get_task(t).downstream_task_ids for t in dag.task_ids}
    assert down == {"plan": {"replay_partitions", "data_quality", "report"}, "replay_partitions": {"compare_live"},
                    "compare_live": {"data_quality"}, "data_quality": {"report"}, "report": set()}
    for task_id in ("replay_partitions", "compare_live", "data_quality"):
        op = dag.get_task(task_id)
        assert op.plan_task_id == "plan" and op.pool == "replay_spark", task_id
        assert op.application == str(ROOT / "jobs" / "replay_job.py")  # the project's job
    # The comparison and the check are separate Spark jobs: data_quality submits its own, after compare_live.
    assert not hasattr(dag.get_task("data_quality"), "compare_task_id")


def test_the_replay_task_takes_the_caller_s_id(airflow_home):
    dag = _dag(replay_task_id="replay_partition")
    assert "replay_partitions" not in dag.task_ids
    assert dag.get_task("replay_partition").downstream_task_ids == {"compare_live"}
    assert dag.get_task("plan").downstream_task_ids == {"replay_partition", "data_quality", "report"}
