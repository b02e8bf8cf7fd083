"""The Airflow operators that submit the run's Spark jobs; they only wire. ReplaySparkSubmitOperator is the one way
to spark-submit: the `replay_spark` connection and pool, through the project's hook (submit_hook.py: the conf, the
extension jar, the job's cause of failure, the stop). On it, ReplayPartitionsOperator walks the plan (backfill.py:
one job per chunk, strictly in order, the run record, retries) and DataQualityOperator checks the outputs.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from airflow.sdk import BaseOperator

from .assets import OUTPUT_ASSETS
from .backfill import Backfill
from .chunks import run_bytes
from .cancel import write_cancel_record
from .failures import fail, tail_buffer
from .links import RUN_LINKS
from .submit_hook import CONN_ID, JobFailed, ReplaySubmitHook, master_of
from .steps import AFTER_STEPS, after_replay
from .tasks import data_quality_result, quality_args

DQ_OFF = "not run (run_data_quality off: no GX suites, no Data Docs, no why-report)"
POOL = "replay_spark"


def replay_job(project_dir: str | Path) -> str:
    """The spark-submit application of every replay and data-quality job: jobs/replay_job.py."""
    return str(Path(project_dir) / "jobs" / "replay_job.py")


class ReplaySparkSubmitOperator(BaseOperator):
    """spark-submit through the `replay_spark` connection and pool; `submit` runs one job with the given arguments
    (a task may submit several) through the project's hook (submit_hook.py: the conf, the extension jar, the job's
    last lines). A job that fails ends the task with its cause in one line (failures.py), led by the step's name
    when it has one (`step`: "calibration: the Spark job failed: ..."), so the runs page says which step it was;
    on_kill (a person marked the run failed, a timeout) stops the job through the hook, its driver first."""

    def __init__(self, *, application: str, conn_id: str = CONN_ID, name: str = "event-replay",
                 conf: dict[str, Any] | None = None, jars: str | None = None, step: str | None = None,
                 **kwargs: Any):
        kwargs.setdefault("pool", POOL)
        super().__init__(**kwargs)
        self.application, self.conn_id, self.spark_name, self.conf, self.jars = application, conn_id, name, conf, jars
        self.step = step
        self._tail = tail_buffer()
        self._hook: ReplaySubmitHook | None = None
        self.master: str | None = None  # the master and deploy mode of the last job (the connection's): run record
        self.deploy_mode: str | None = None

    def submit(self, context: Any, args: list[str], input_bytes: int | None = None) -> None:
        """One job; `input_bytes`: about what it reads (chunks.job_bytes, run_bytes), which sizes its driver's JVM."""
        self._hook = ReplaySubmitHook(self.application, args, conn_id=self.conn_id, name=self.spark_name,
                                      conf=self.conf, jars=self.jars, tail=self._tail,
                                      input_bytes=input_bytes)  # a fresh one per job
        self.master, self.deploy_mode = master_of(self.conn_id)
        try:
            self._hook.submit()
        except JobFailed as exc:
            lead = f"{self.step}: " if self.step else ""
            raise fail(f"{lead}the Spark job failed: {exc}", context.get("ti")) from None

    def on_kill(self) -> None:
        if self._hook is not None:
            self._hook.on_kill()


class ReplayPartitionsOperator(ReplaySparkSubmitOperator):
    """The run's replay (backfill.py). Outlets: the output datasets' Assets (assets.py); on success each gets an
    event whose extra has the output path and the replayed partition range. on_kill leaves the cancel record
    (cancel.py) naming the chunk that was on."""

    operator_extra_links = RUN_LINKS

    def __init__(self, *, plan_task_id: str, project_dir: str, **kwargs: Any):
        kwargs.setdefault("name", "event-replay")
        kwargs.setdefault("outlets", list(OUTPUT_ASSETS))
        super().__init__(application=replay_job(project_dir), **kwargs)
        self.plan_task_id = plan_task_id
        self._running: tuple[str, int, int, list[str]] | None = None  # (run folder, job, jobs, partitions): on_kill

    def execute(self, context: Any) -> None:
        backfill = Backfill(context["ti"].xcom_pull(task_ids=self.plan_task_id), log=self.log,
                            submit=lambda args, input_bytes: self.submit(context, args, input_bytes),
                            spark=lambda: {"master": self.master, "deploy_mode": self.deploy_mode},
                            on_job=self._job_on, ti=context.get("ti"), run_id=context.get("run_id"),
                            dag_id=getattr(context.get("dag_run"), "dag_id", None),
                            force=bool((context.get("params") or {}).get("force")))
        for asset, extra in backfill.run().items():  # every planned partition is committed: say where, which
            context["outlet_events"][asset].extra = extra

    def _job_on(self, running: tuple[str, int, int, list[str]] | None) -> None:
        self._running = running

    def on_kill(self) -> None:
        if self._running is not None:  # the runs page says: cancelled after partition i of n
            write_cancel_record(*self._running)
        super().on_kill()


class DataQualityOperator(ReplaySparkSubmitOperator):
    """The GX suites and the why-report on the run's outputs as one Spark job where the data is (spark-submit of
    `jobs/replay_job.py quality`, quality_job.py), with the links to both. The job writes its outcome as
    `<run folder>/data_quality.json`; the task reads only that (tasks.data_quality_result): it fails on a failed
    expectation unless dq_warn_only, and returns the status line and where both reports are. It runs once the
    replay succeeded, whatever the calibration and the comparison did (steps.py)."""

    operator_extra_links = RUN_LINKS

    def __init__(self, *, plan_task_id: str, project_dir: str, replay_task_id: str = "replay_partitions",
                 **kwargs: Any):
        kwargs.setdefault("name", "event-replay-dq")
        kwargs.setdefault("step", "data quality")
        kwargs.setdefault("trigger_rule", AFTER_STEPS)
        super().__init__(application=replay_job(project_dir), **kwargs)
        self.plan_task_id, self.replay_task_id = plan_task_id, replay_task_id

    def execute(self, context: Any) -> dict[str, Any]:
        after_replay(context["ti"], self.replay_task_id)
        if not context["params"]["run_data_quality"]:
            return {"status": DQ_OFF}
        p = context["ti"].xcom_pull(task_ids=self.plan_task_id)
        if not p["plan"]["runs"]:
            return {"status": "skipped (nothing replayed)"}
        args, result_file = quality_args(p, context["run_id"])
        result_file.unlink(missing_ok=True)  # a retry never reads the outcome of the attempt before
        self.submit(context, args, run_bytes(p))
        if not result_file.is_file():
            raise fail(f"the data-quality job left no result in {result_file}", context.get("ti"))
        result = json.loads(result_file.read_text())
        self.log.info("data-quality job result (%s):\n%s", result_file, json.dumps(result, indent=2, sort_keys=True))
        return data_quality_result(result, warn_only=p["dq_warn_only"], ti=context.get("ti"))
