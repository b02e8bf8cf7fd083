"""The Airflow operators that submit the run's Spark jobs: ReplaySparkSubmitOperator is the one way to spark-submit
(the `replay_spark` connection and pool, the worker's Python, Spark conf from the environment); on it,
ReplayPartitionsOperator replays the planned partitions and DataQualityOperator checks the outputs.

The replay: one spark-submit of jobs/replay_job.py per chunk of `partitions_per_job` partitions
(`replay run --partitions A..B`, one Spark application for the chunk; chunks.py).

The partitions of a run carry state from one to the next, so they must run strictly in order and stop at the
first failure. Mapped task instances give neither guarantee (they run in any order, and one failing does not stop
the next), so one task walks the plan and submits one Spark job per chunk through SparkSubmitOperator,
with the `replay_spark` connection (master: local[*], spark://, yarn, k8s://...) and the `replay_spark` pool.
A retry skips the chunks this run already replayed (done markers in the run folder) and resubmits the one that
failed, which continues after its last committed partition (range_replay.py).
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
from airflow.sdk.exceptions import AirflowSkipException

from ..dry_run import dry_run, dry_run_line, lines
from ..extension import with_extension_jar
from ..fatal import with_exit_on_oom
from ..layout import CANCEL_FILE, DONE_FOLDER
from ..semantics.config import parse_config
from .assets import OUTPUT_ASSETS, outlet_extras
from .cancel import GRACE_SECONDS, stop_spark_submit, write_cancel_record
from .chunks import DEFAULT_PARTITIONS_PER_JOB, chunk_runs, range_args
from .failures import DRY_RUN_KEY, cause_of, fail, tail_buffer, tee
from .links import RUN_LINKS
from .plan import Plan, PlanError, check_state
from .record import new_record, write_record
from .report import clear_chunk_record, partition_rows_read, write_chunk_record
from .tasks import data_quality_result, quality_args

DQ_OFF = "not run (run_data_quality off: no GX suites, no Data Docs, no why-report)"
QUALITY_KEY = "data_quality_result"  # in compare_live's result: the data-quality result its Spark job wrote
CONN_ID = "replay_spark"
POOL = "replay_spark"


def spark_conf() -> dict[str, str]:
    """The Python the Spark driver and workers run: this worker's (it has the project), unless configured;
    REPLAY_SPARK_CONF (a JSON object) adds or overrides any Spark conf for the cluster at hand; the driver's JVM
    options always get -XX:+ExitOnOutOfMemoryError.
    Spark logs at WARN: its INFO lines would bury the per-partition progress in the task log
    (REPLAY_SPARK_LOG_LEVEL=INFO or DEBUG brings the full log back)."""
    conf = {"spark.pyspark.python": os.environ.get("REPLAY_PYSPARK_PYTHON", sys.executable),
            "spark.pyspark.driver.python": os.environ.get("REPLAY_PYSPARK_PYTHON", sys.executable),
            "spark.log.level": os.environ.get("REPLAY_SPARK_LOG_LEVEL", "WARN")}
    conf.update(json.loads(os.environ.get("REPLAY_SPARK_CONF") or "{}"))
    # The driver JVM exits on OutOfMemoryError instead of hanging the task until its timeout (fatal.py).
    conf["spark.driver.extraJavaOptions"] = with_exit_on_oom(conf.get("spark.driver.extraJavaOptions"))
    return conf


def replay_job(project_dir: str | Path) -> str:
    """The spark-submit application of every replay and data-quality job: jobs/replay_job.py."""
    return str(Path(project_dir) / "jobs" / "replay_job.py")


class ReplaySparkSubmitOperator(SparkSubmitOperator):
    """spark-submit through the `replay_spark` connection and pool; `submit` runs one job with the given arguments
    (a task may submit several), on the worker's Python and the conf of spark_conf(). A job that fails ends the
    task with its cause in one line (failures.py: read off the job's last output lines); on_kill (a person marked
    the run failed, a timeout) stops the job's driver with SIGTERM first, so that it cleans up (cancel.py)."""

    def __init__(self, *, application: str, **kwargs: Any):
        kwargs.setdefault("conn_id", CONN_ID)
        kwargs.setdefault("pool", POOL)
        super().__init__(application=application, **kwargs)
        self._tail = tail_buffer()
        self.master: str | None = None  # the master of the last job (the connection's), for the run record

    def _get_hook(self):
        hook = super()._get_hook()
        process = hook._process_spark_submit_log
        hook._process_spark_submit_log = lambda itr: process(tee(itr, self._tail))  # the job's last lines
        return hook

    def submit(self, context: Any, args: list[str]) -> None:
        if shutil.which("spark-submit") is None:
            # pyspark installs spark-submit next to the worker's python; the worker's PATH may not have it.
            os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
        self.conf = {**spark_conf(), **(self.conf or {})}  # the worker's python, not the DAG parser's
        self.jars = with_extension_jar(self.jars)  # extension.py
        self.application_args = list(args)
        self._hook = None  # a fresh hook (and spark-submit) per job
        self._tail.clear()
        try:
            super().execute(context)
        except Exception as exc:  # noqa: BLE001 - the job's own words say why, not the hook's command line
            why = cause_of(self._tail, f"spark-submit failed: {str(exc).splitlines()[0] if str(exc) else exc}")
            raise fail(f"the Spark job failed: {why}", context.get("ti")) from None
        finally:
            connection = getattr(self._hook, "_connection", None) or {}
            self.master = connection.get("master") or self.master

    def on_kill(self) -> None:
        process = getattr(self._hook, "_submit_sp", None)
        if process is not None and not stop_spark_submit(process, self.application):
            self.log.warning("the Spark job did not stop within %.0f s of SIGTERM: killing it", GRACE_SECONDS)
        if self._hook is not None:
            super().on_kill()


class ReplayPartitionsOperator(ReplaySparkSubmitOperator):
    """Outlets: the output datasets' Assets (assets.py); on success each gets an event whose extra has the output
    path and the replayed partition range. Before its first job it writes the run record (record.py, run.json:
    version, config, input fingerprint, Spark), after each job its time and rows. With the form's dry run it lists
    what the run would read and write instead (event_replay/dry_run.py), writes nothing and is skipped (so are the
    tasks after it)."""

    operator_extra_links = RUN_LINKS

    def __init__(self, *, plan_task_id: str, project_dir: str, **kwargs: Any):
        kwargs.setdefault("name", "event-replay")
        kwargs.setdefault("durable", False)  # one task submits several jobs: never reattach to a stale one
        kwargs.setdefault("outlets", list(OUTPUT_ASSETS))
        super().__init__(application=replay_job(project_dir), **kwargs)
        self.plan_task_id = plan_task_id
        self._running: tuple[str, int, int, list[str]] | None = None  # (run folder, job, jobs, partitions): on_kill

    def execute(self, context: Any) -> None:
        p = context["ti"].xcom_pull(task_ids=self.plan_task_id)
        plan = Plan.from_dict(p["plan"])
        if p.get("dry_run"):
            return self._dry_run(context, p, plan)
        if not plan.runs:
            raise AirflowSkipException("no partition to replay")
        run_dir = Path(p["run_dir"])
        done_dir = run_dir / DONE_FOLDER
        chunks = chunk_runs(plan.runs, p.get("partitions_per_job") or DEFAULT_PARTITIONS_PER_JOB)
        record = new_record(p, getattr(context.get("dag_run"), "dag_id", None), context.get("run_id"))
        write_record(run_dir, record)
        (run_dir / CANCEL_FILE).unlink(missing_ok=True)  # a retry after a cancel: not cancelled (yet)
        n, i, rows = len(plan.runs), 0, 0
        t_run = time.monotonic()
        for k, chunk in enumerate(chunks, 1):
            i += len(chunk)
            span = f"{chunk[0].partition}..{chunk[-1].partition}"
            if all((done_dir / run.partition).exists() for run in chunk):
                self.log.info("job %d of %d (%s) already replayed by this run (retry): skipped", k, len(chunks), span)
                continue
            try:
                check_state(p["output_path"], chunk[0])
            except PlanError as exc:
                raise fail(str(exc), context.get("ti")) from None
            self.log.info("job %d of %d: partitions %d..%d of %d, %s (%s%s)", k, len(chunks), i - len(chunk) + 1, i,
                          n, span, chunk[-1].end_of_input,
                          ", first" if chunk[0].first else f", after {chunk[0].previous}")
            partitions = [run.partition for run in chunk]
            write_chunk_record(run_dir, k, len(chunks), partitions)  # the runs page
            self._running = (str(run_dir), k, len(chunks), partitions)
            t0 = time.monotonic()
            self.submit(context, range_args(chunk, p["config_path"]))  # the job logs each partition: i of n, ...
            seconds = time.monotonic() - t0
            self._running = None
            done_dir.mkdir(parents=True, exist_ok=True)
            for run in chunk:
                (done_dir / run.partition).touch()
            job_rows = sum(partition_rows_read(p["output_path"], run.partition) for run in chunk)
            rows += job_rows
            record["spark"].update(master=self.master, deploy_mode=(self._hook._connection or {}).get("deploy_mode")
                                   if self._hook is not None else None)
            record["jobs"].append({"job": k, "partitions": partitions, "seconds": round(seconds, 1),
                                   "rows_read": job_rows})
            write_record(run_dir, record)
            # The job logged each partition once (rows, firings, late rows, its commit's seconds) and its span once.
            self.log.info("job %d of %d: %s, %d partitions, rows read %d, %.1f s for the whole spark-submit", k,
                          len(chunks), span, len(chunk), job_rows, seconds)
        clear_chunk_record(run_dir)
        self.log.info("replayed %d partitions %s..%s in %d job%s, rows read %d, %.1f s", n, plan.runs[0].partition,
                      plan.runs[-1].partition, len(chunks), "s" if len(chunks) != 1 else "", rows,
                      time.monotonic() - t_run)
        for asset, extra in outlet_extras(p).items():  # every planned partition is committed: say where, which
            context["outlet_events"][asset].extra = extra
        self.log.info("asset events: %s, partitions %s..%s (%d) of %s", ", ".join(a.name for a in OUTPUT_ASSETS),
                      plan.runs[0].partition, plan.runs[-1].partition, n, p["output_path"])

    def _dry_run(self, context: Any, p: dict, plan: Plan) -> None:
        cfg = parse_config(p["config_raw"])
        first = plan.runs[0] if plan.runs else None
        d = dry_run(cfg, [r.partition for r in plan.runs], p.get("partitions_per_job") or DEFAULT_PARTITIONS_PER_JOB,
                    continues=None if first is None or first.first else first.previous,
                    resume_after=p.get("resume_after"))
        for line in lines(d):
            self.log.info("%s", line)
        if p.get("refusal"):
            self.log.warning("the run would be refused: %s", p["refusal"])
        summary = dry_run_line(d) + (f"; would be refused: {p['refusal']}" if p.get("refusal") else "")
        context["ti"].xcom_push(key=DRY_RUN_KEY, value={"summary": summary, "dry_run": d.to_dict()})
        raise AirflowSkipException(f"{summary}; nothing was replayed or written")

    def on_kill(self) -> None:
        if self._running is not None:  # the runs page says: cancelled after partition i of n
            write_cancel_record(*self._running)
        super().on_kill()


class DataQualityOperator(ReplaySparkSubmitOperator):
    """The GX suites and the why-report on the run's outputs as one Spark job where the data is (spark-submit of
    `jobs/replay_job.py quality`, quality_job.py), with the links to both. The job writes its outcome as
    `<run folder>/data_quality.json`; the task reads only that (tasks.data_quality_result): it fails on a failed
    expectation unless dq_warn_only, and returns the status line and where both reports are."""

    operator_extra_links = RUN_LINKS

    def __init__(self, *, plan_task_id: str, project_dir: str, compare_task_id: str | None = None, **kwargs: Any):
        kwargs.setdefault("name", "event-replay-dq")
        kwargs.setdefault("durable", False)  # a retry runs the check again (its result file is removed first)
        super().__init__(application=replay_job(project_dir), **kwargs)
        self.plan_task_id, self.compare_task_id = plan_task_id, compare_task_id

    def execute(self, context: Any) -> dict[str, Any]:
        if not context["params"]["run_data_quality"]:
            return {"status": DQ_OFF}
        p = context["ti"].xcom_pull(task_ids=self.plan_task_id)
        if not p["plan"]["runs"]:
            return {"status": "skipped (nothing replayed)"}
        args, result_file = quality_args(p, context["run_id"])
        if self._checked_by_compare(context, result_file):
            self.log.info("the check ran in the compare_live task's Spark job (one JVM for both): its result")
        else:
            result_file.unlink(missing_ok=True)  # a retry never reads the outcome of the attempt before
            self.submit(context, args)
        if not result_file.is_file():
            raise fail(f"the data-quality job left no result in {result_file}", context.get("ti"))
        result = json.loads(result_file.read_text())
        self.log.info("data-quality job result (%s):\n%s", result_file, json.dumps(result, indent=2, sort_keys=True))
        return data_quality_result(result, warn_only=p["dq_warn_only"], ti=context.get("ti"))

    def _checked_by_compare(self, context: Any, result_file: Path) -> bool:
        """The compare_live task's Spark job ran this check into `result_file` (compare_task.py): taken on the first
        try only, so that a retry (or a cleared task) runs the check again."""
        if self.compare_task_id is None or getattr(context["ti"], "try_number", 1) != 1:
            return False
        compared = context["ti"].xcom_pull(task_ids=self.compare_task_id)
        return (isinstance(compared, dict) and compared.get(QUALITY_KEY) == str(result_file)
                and result_file.is_file())
