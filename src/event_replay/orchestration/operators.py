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
from .committed import all_committed, chunk_committed, committed_lines
from .failures import DRY_RUN_KEY, cause_of, fail, tail_buffer, tee
from .links import RUN_LINKS
from .plan import Plan, PlanError, check_state
from .record import new_record, write_record
from .report import clear_chunk_record, partition_rows_read, write_chunk_record
from .tasks import data_quality_result, quality_args
from .turn import output_turn, wait_for_job_lock

DQ_OFF = "not run (run_data_quality off: no GX suites, no Data Docs, no why-report)"
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
    version, config, input fingerprint, Spark), after each job its time and rows. It holds the output's turn from its
    first job to its last (turn.py): a run that meets another at the output waits for it, saying which run it waits
    for in the log and the record, instead of being refused chunk by chunk. With the form's dry run it lists
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
        dag_id = getattr(context.get("dag_run"), "dag_id", None)
        record = new_record(p, dag_id, context.get("run_id"))
        write_record(run_dir, record)
        (run_dir / CANCEL_FILE).unlink(missing_ok=True)  # a retry after a cancel: not cancelled (yet)
        with output_turn(run_dir.parent, p["output_path"], context.get("run_id"), dag_id,
                         on_wait=lambda note: self._waiting(run_dir, record, note)) as waits:
            record["waiting"] = None
            if waits:
                record["waited"] = waits
                self.log.info("the output's turn is this run's after waiting %s", ", ".join(
                    f"{w['seconds']:.0f} s for run {w['for']}" for w in waits))
            write_record(run_dir, record)
            if self._already_committed(context, plan, run_dir, record):
                return
            self._replay_chunks(context, p, plan, run_dir, record)
        for asset, extra in outlet_extras(p).items():  # every planned partition is committed: say where, which
            context["outlet_events"][asset].extra = extra
        self.log.info("asset events: %s, partitions %s..%s (%d) of %s", ", ".join(a.name for a in OUTPUT_ASSETS),
                      plan.runs[0].partition, plan.runs[-1].partition, len(plan.runs), p["output_path"])

    def _waiting(self, run_dir: Path, record: dict, note: dict) -> None:
        """Another run holds the output's turn, or a live driver the job's lock (turn.py): say which, in the log and
        the run record (the runs page)."""
        if note["for"] is None:
            self.log.info("waiting for %s: it holds the job's lock %s (a Spark driver still running: an earlier try's "
                          "whose task was killed, or a replay run from the CLI); the job would be refused until it "
                          "ends", note["holder"], note["lock_file"])
        else:
            self.log.info("waiting for run %s (DAG %s): it holds the output %s (%s); this run goes on when that "
                          "run's replay task ends (if that run is dead on another host, delete %s)", note["for"],
                          note["dag_id"], note["output"], note["holder"], note["lock_file"])
        record["waiting"] = note
        write_record(run_dir, record)

    def _already_committed(self, context: Any, plan: Plan, run_dir: Path, record: dict) -> bool:
        """Every planned partition committed by an identical run (committed.py): said, recorded, nothing replayed
        and no asset event (the outputs did not change). The form's `force` replays anyway."""
        by_run = all_committed(run_dir.parent, record, plan)
        if not by_run:
            return False
        for line in committed_lines(by_run):
            self.log.info("%s", line)
        if (context.get("params") or {}).get("force"):
            self.log.info("force: replaying them again")
            return False
        record["skipped"] = {"committed_by": by_run}
        write_record(run_dir, record)
        self.log.info("nothing replayed: all %d partitions are already committed as this run would commit them "
                      "(the form's force replays them anyway)", len(plan.runs))
        return True

    def _replay_chunks(self, context: Any, p: dict, plan: Plan, run_dir: Path, record: dict) -> None:
        """One spark-submit per chunk, in order; the chunks a try before this one replayed are skipped."""
        done_dir = run_dir / DONE_FOLDER
        chunks = chunk_runs(plan.runs, p.get("partitions_per_job") or DEFAULT_PARTITIONS_PER_JOB)
        n, i, rows = len(plan.runs), 0, 0
        t_run = time.monotonic()
        # A chunk an identical run committed is skipped only while every chunk before it was too: a chunk after one
        # this run replays continues that one's carried state, which may differ from what the other run continued.
        prefix = True
        for k, chunk in enumerate(chunks, 1):
            i += len(chunk)
            span = f"{chunk[0].partition}..{chunk[-1].partition}"
            if all((done_dir / run.partition).exists() for run in chunk):
                self.log.info("job %d of %d (%s) already replayed by this run (retry): skipped", k, len(chunks), span)
                prefix = False
                continue
            try:
                check_state(p["output_path"], chunk[0])
            except PlanError as exc:
                raise fail(str(exc), context.get("ti")) from None
            self.log.info("job %d of %d: partitions %d..%d of %d, %s (%s%s)", k, len(chunks), i - len(chunk) + 1, i,
                          n, span, chunk[-1].end_of_input,
                          ", first" if chunk[0].first else f", after {chunk[0].previous}")
            partitions = [run.partition for run in chunk]
            if wait_for_job_lock(p["output_path"], lambda note: self._waiting(run_dir, record, note)):
                record["waiting"] = None
                write_record(run_dir, record)
            if prefix and self._chunk_committed(context, run_dir, record, partitions, f"job {k} of {len(chunks)}"):
                continue
            prefix = False
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

    def _chunk_committed(self, context: Any, run_dir: Path, record: dict, partitions: list[str], job: str) -> bool:
        """Every partition of the chunk committed by an identical run (committed.py; an identical run killed after
        it, whose turn this run took): said, recorded beside the runs that committed them, not replayed; the next
        chunk continues their carried state. The form's `force` replays it."""
        by_run = {} if (context.get("params") or {}).get("force") else \
            chunk_committed(run_dir.parent, record, partitions)
        if not by_run:
            return False
        committed = (record.get("skipped") or {}).get("committed_by") or {}
        for run_id, ps in by_run.items():
            committed[run_id] = sorted({*committed.get(run_id, []), *ps})
            self.log.info("%s: %s: skipped", job, committed_lines({run_id: ps})[0])
        record["skipped"] = {"committed_by": committed}
        write_record(run_dir, record)
        return True

    def _dry_run(self, context: Any, p: dict, plan: Plan) -> None:
        cfg = parse_config(p["config_raw"])
        first = plan.runs[0] if plan.runs else None
        d = dry_run(cfg, [r.partition for r in plan.runs], p.get("partitions_per_job") or DEFAULT_PARTITIONS_PER_JOB,
                    continues=None if first is None or first.first else first.previous,
                    resume_after=p.get("resume_after"))
        for line in lines(d):
            self.log.info("%s", line)
        committed = committed_lines(all_committed(Path(p["run_dir"]).parent, new_record(p, None, None), plan))
        for line in committed:
            self.log.info("%s", line + ("; force replays them" if (context.get("params") or {}).get("force")
                                        else ": the run would replay nothing (force replays them)"))
        if p.get("refusal"):
            self.log.warning("the run would be refused: %s", p["refusal"])
        summary = dry_run_line(d) + (f"; would be refused: {p['refusal']}" if p.get("refusal") else "") \
            + "".join(f"; {line}" for line in committed)
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

    def __init__(self, *, plan_task_id: str, project_dir: str, **kwargs: Any):
        kwargs.setdefault("name", "event-replay-dq")
        kwargs.setdefault("durable", False)  # a retry runs the check again (its result file is removed first)
        super().__init__(application=replay_job(project_dir), **kwargs)
        self.plan_task_id = plan_task_id

    def execute(self, context: Any) -> dict[str, Any]:
        if not context["params"]["run_data_quality"]:
            return {"status": DQ_OFF}
        p = context["ti"].xcom_pull(task_ids=self.plan_task_id)
        if not p["plan"]["runs"]:
            return {"status": "skipped (nothing replayed)"}
        args, result_file = quality_args(p, context["run_id"])
        result_file.unlink(missing_ok=True)  # a retry never reads the outcome of the attempt before
        self.submit(context, args)
        if not result_file.is_file():
            raise fail(f"the data-quality job left no result in {result_file}", context.get("ti"))
        result = json.loads(result_file.read_text())
        self.log.info("data-quality job result (%s):\n%s", result_file, json.dumps(result, indent=2, sort_keys=True))
        return data_quality_result(result, warn_only=p["dq_warn_only"], ti=context.get("ti"))
