"""The Airflow operator that replays the planned partitions: one spark-submit of jobs/replay_job.py each.

The partitions of a run carry state from one to the next, so they must run strictly in order and stop at the
first failure. Mapped task instances give neither guarantee (they run in any order, and one failing does not stop
the next), so one task walks the plan and submits one Spark job per partition through SparkSubmitOperator,
with the `replay_spark` connection (master: local[*], spark://, yarn, k8s://...) and the `replay_spark` pool.
A retry resumes after the last partition this run already replayed (done markers in the run folder).
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import BaseOperator
from airflow.sdk.exceptions import AirflowSkipException

from .links import RUN_LINKS
from .plan import Plan, check_state
from .report import partition_figures, progress_line, progress_table

CONN_ID = "replay_spark"
POOL = "replay_spark"


def spark_conf() -> dict[str, str]:
    """The Python the Spark driver and workers run: this worker's (it has the project), unless configured;
    REPLAY_SPARK_CONF (a JSON object) adds or overrides any Spark conf for the cluster at hand.
    Spark logs at WARN: its INFO lines would bury the per-partition progress in the task log
    (REPLAY_SPARK_LOG_LEVEL=INFO or DEBUG brings the full log back)."""
    conf = {"spark.pyspark.python": os.environ.get("REPLAY_PYSPARK_PYTHON", sys.executable),
            "spark.pyspark.driver.python": os.environ.get("REPLAY_PYSPARK_PYTHON", sys.executable),
            "spark.log.level": os.environ.get("REPLAY_SPARK_LOG_LEVEL", "WARN")}
    conf.update(json.loads(os.environ.get("REPLAY_SPARK_CONF") or "{}"))
    return conf


class ReplayPartitionsOperator(SparkSubmitOperator):
    operator_extra_links = RUN_LINKS

    def __init__(self, *, plan_task_id: str, project_dir: str, **kwargs: Any):
        kwargs.setdefault("conn_id", CONN_ID)
        kwargs.setdefault("pool", POOL)
        kwargs.setdefault("name", "event-replay")
        kwargs.setdefault("durable", False)  # one task submits several jobs: never reattach to a stale one
        super().__init__(application=str(Path(project_dir) / "jobs" / "replay_job.py"), **kwargs)
        self.plan_task_id = plan_task_id

    def execute(self, context: Any) -> None:
        p = context["ti"].xcom_pull(task_ids=self.plan_task_id)
        plan = Plan.from_dict(p["plan"])
        if not plan.runs:
            raise AirflowSkipException("no partition to replay")
        if shutil.which("spark-submit") is None:
            # pyspark installs spark-submit next to the worker's python; the worker's PATH may not have it.
            os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
        self.conf = {**spark_conf(), **(self.conf or {})}  # the worker's python, not the DAG parser's
        done_dir = Path(p["run_dir"]) / "done"
        replayed = []
        for i, run in enumerate(plan.runs, 1):
            if (done_dir / run.partition).exists():
                self.log.info("partition %s already replayed by this run (retry): skipped", run.partition)
                continue
            check_state(p["output_path"], run)
            self.application_args = run.job_args(p["config_path"])
            self._hook = None  # a fresh hook (and spark-submit) per partition
            self.log.info("partition %d/%d: %s (%s%s) starts", i, len(plan.runs), run.partition, run.end_of_input,
                          ", first" if run.first else f", after {run.previous}")
            started = time.monotonic()
            super().execute(context)
            done_dir.mkdir(parents=True, exist_ok=True)
            (done_dir / run.partition).touch()
            figures = partition_figures(p["output_path"], run.partition, time.monotonic() - started)
            replayed.append(figures)
            self.log.info("partition %d/%d: %s", i, len(plan.runs), progress_line(figures))
        self.log.info("replayed partitions:\n%s", progress_table(replayed))


class DataQualityOperator(BaseOperator):
    """The GX suites and the why-report on the run's outputs (tasks.data_quality), with the links to both."""

    operator_extra_links = RUN_LINKS

    def __init__(self, *, plan_task_id: str, **kwargs: Any):
        super().__init__(**kwargs)
        self.plan_task_id = plan_task_id

    def execute(self, context: Any) -> dict[str, Any]:
        from .tasks import data_quality

        if not context["params"]["run_data_quality"]:
            return {"status": "not run (run_data_quality off)"}
        p = context["ti"].xcom_pull(task_ids=self.plan_task_id)
        return data_quality(p, warn_only=p["dq_warn_only"], run_id=context["run_id"])
