"""The bodies of the DAGs' Python tasks: plain functions of plain (XCom-able) values, testable without Airflow.

A request that cannot run fails its task with one line that names the cause in the form's words, kept for the
Replay runs page, and no traceback (failures.py). A dry run (the form's checkbox) writes nothing: validate and plan
only compute, the replay task lists what would be read (event_replay/dry_run.py).
"""
from __future__ import annotations

import datetime as dt
import logging
import shutil
from pathlib import Path
from typing import Any, Mapping

from airflow.sdk.exceptions import AirflowSkipException

from ..history.partitions import predecessor, source_partitions
from ..history.progress import resume_point
from ..io.fs import fs_for, is_local
from ..layout import CHUNK_FILE, DATA_QUALITY_FILE, DONE_FOLDER
from ..semantics.config import JobConfig, parse_config, to_raw
from ..semantics.config_keys import ConfigError
from ..tuning.grid import GridError
from .calibration_grid import calibration_grid
from .chunks import DEFAULT_PARTITIONS_PER_JOB, chunk_plan, chunk_runs, job_bytes, job_plans, partitions_per_job
from .failures import Failed, current_ti, fail
from .form import user_message
from .params import run_dir, validate_request, write_effective_config
from .plan import PlanError, PlannedRuns, check_state, plan_range
from .report import build_report, failure_line, write_plan_record, write_report
from .steps import SUCCESS, failed_line, run_steps, state_of

log = logging.getLogger(__name__)


def validate_backfill(params: Mapping[str, Any], project_dir: str, run_id: str) -> dict[str, Any]:
    """Load the config with the overrides, check the range; write the effective config every job will read (and,
    for a Flink SQL job, the YAML it was converted to: flink_job.yaml). A refusal fails the task at once with one
    line in the form's words (failures.py), not a config traceback. A dry run writes nothing."""
    try:
        cfg, req = validate_request(params, project_dir)
        calibration_grid(cfg, params, req.start.isoformat(), req.end.isoformat())  # refused now, not after the replay
    except ConfigError as exc:
        raise fail(f"Refused: {user_message(exc)}", code=2) from None
    except GridError as exc:  # in the form's words, as a config refusal
        raise fail(f"Refused: {user_message(ConfigError(exc.option, exc.why))}", code=2) from None
    dry = bool(params.get("dry_run", False))
    folder = run_dir(cfg, run_id, project_dir)
    raw = to_raw(cfg)  # once: the effective config's file and the plan task's copy
    config_path = generated = None
    if not dry:
        config_path = write_effective_config(cfg, folder / "job.yaml", raw)
        if req.generated_config is not None:  # a Flink SQL job: keep what it was converted to, with its comments
            generated = str(folder / "flink_job.yaml")
            Path(generated).write_text(req.generated_config)
        shutil.rmtree(folder / DONE_FOLDER, ignore_errors=True)  # a new pass of the run replays everything again
        (folder / CHUNK_FILE).unlink(missing_ok=True)  # nor is a chunk of an earlier pass replaying any more
    log.info("request valid: %s, %s..%s, %s", req.config_file, req.start, req.end,
             "dry run: nothing is written" if dry else f"effective config {config_path}")
    return {"config_path": config_path, "config_file": req.config_file, "source_path": cfg.source.path,
            "output_path": cfg.output.path, "start": req.start.isoformat(), "end": req.end.isoformat(),
            "end_of_input": req.end_of_input, "allow_missing_partitions": req.allow_missing_partitions,
            "dq_warn_only": req.dq_warn_only, "continue_from_state": req.continue_from_state, "run_dir": str(folder),
            "generated_config": generated, "partitions_per_job": partitions_per_job(params), "dry_run": dry,
            "config_raw": raw, "run_data_quality": bool(params.get("run_data_quality", True))}


def validate_nightly(params: Mapping[str, Any], day: dt.date, project_dir: str, run_id: str) -> dict[str, Any]:
    """The nightly run replays the logical date's day, continuing whatever history precedes it."""
    request = {**params, "start_date": day.isoformat(), "end_date": day.isoformat(), "continue_from_state": True}
    return validate_backfill(request, project_dir, run_id)


def plan_partitions(v: Mapping[str, Any]) -> dict[str, Any]:
    """The ordered partition runs of `v["start"]..v["end"]` (partition ids), and each Spark job's range plan
    serialised once (`jobs`: chunks.job_plans, what the replay task submits). With continue_from_state the first
    continues its predecessor's state (history/partitions.predecessor: the latest partition before the range with a
    source folder or a state, as `replay run` picks it; none = the range starts the history). `resume_after`: where
    an interrupted job of this plan continues (history/progress.py), as its rerun will. A dry run is planned
    whatever the plan would refuse (missing days, a missing state): the refusal is listed with it."""
    dry = bool(v.get("dry_run"))
    cfg = parse_config(v["config_raw"])
    start, end = v["start"], v["end"]
    try:
        available = source_partitions(None, cfg, "T" in start)
        continue_from = predecessor(None, cfg, start, available) if v.get("continue_from_state") else None
    except ValueError as exc:  # a source the planner cannot list without Spark
        raise fail(f"Refused: {exc}", code=2) from None
    refusal = None
    try:
        plan = plan_range(available, start, end, end_of_input=v["end_of_input"],
                          allow_missing=v["allow_missing_partitions"], continue_from=continue_from)
        check_state(v["output_path"], plan.runs[0])  # fail now, not after a Spark start-up
    except PlanError as exc:
        if not dry:
            raise fail(f"Refused: {exc}", code=2) from None
        refusal = str(exc)
        plan = plan_range(available, start, end, end_of_input=v["end_of_input"], allow_missing=True,
                          continue_from=continue_from)
    log.info("plan: %s", ", ".join(f"{r.partition.id}{' (first)' if r.first else ''} {r.end_of_input}"
                                   for r in plan.runs))
    if plan.missing:
        log.warning("days without a partition, replayed as empty: %s", ", ".join(plan.missing))
    size = v.get("partitions_per_job") or DEFAULT_PARTITIONS_PER_JOB
    resume = resume_after(cfg, plan, size)
    if resume:
        log.info("an interrupted job of this plan committed up to %s: it continues after it", resume)
    if v.get("run_dir") and not dry:  # for the Replay runs page: partitions done / planned while the run goes on
        write_plan_record(v["run_dir"], plan.partitions, plan.missing, v.get("partitions_per_job"),
                          run_data_quality=v.get("run_data_quality", True))
    return {**v, "plan": plan.to_dict(), "jobs": job_plans(plan.runs, size),
            "job_bytes": job_bytes(cfg.source.path, plan.runs, size), "refusal": refusal,
            "resume_after": resume}


def resume_after(cfg: JobConfig, plan: PlannedRuns, partitions_per_job: int) -> str | None:
    """The partition after which an interrupted job of `plan` continues (None: every job starts at its first).
    The output keeps one progress file, of one request: at most one job's matches it. A remote output is not read
    without Spark: its job says so when it resumes."""
    output = cfg.output.path.rstrip("/")
    if not is_local(output):
        return None
    fs = fs_for(output)
    for chunk in chunk_runs(plan.runs, partitions_per_job):
        found = resume_point(fs, output, cfg, chunk_plan(chunk).to_dict(), [r.partition.id for r in chunk],
                             warn=False)
        if found:
            return found
    return None


def quality_args(p: Mapping[str, Any], run_id: str) -> tuple[list[str], Path]:
    """The arguments of the data-quality job (`jobs/replay_job.py quality`: quality_job.py) and the result file it
    writes. Both reports go to the run's folder (`_data_docs/` and `why_report/` in `<output>/_airflow/<run_id>/`),
    so a later run never overwrites them."""
    folder = Path(p["run_dir"]).resolve()
    args = ["quality", "--config", p["config_path"], "--out", str(folder), "--run-name", run_id]
    return args, folder / DATA_QUALITY_FILE


def data_quality_result(result: Mapping[str, Any], warn_only: bool, ti: Any = None) -> dict[str, Any]:
    """What the data_quality task returns (for `report` and the links) from the job's data_quality.json: the status
    line and where both reports are. A failed expectation fails the task unless warn_only."""
    found = {"data_docs": result["data_docs"], "why_report": result["why_report"],
             **({"spark_jobs": result["spark_jobs"]} if result.get("spark_jobs") else {})}
    if result["success"]:
        return {**found, "status": f"passed ({result['expectations']} expectations)"}
    message = (f"FAILED {result['failed']}/{result['expectations']}: "
               f"{', '.join(result['failed_names'])}")
    if not warn_only:
        log.info("Data Docs: %s (set dq_warn_only to only warn)", result["data_docs"])
        raise fail(f"data quality {message}", ti)
    log.warning("data quality %s (warn only)", message)
    return {**found, "status": f"{message} (warn only)"}


def run_report(ti: Any, plan_task_id: str, replay_task_id: str) -> dict[str, str]:
    """The report task (trigger rule all_done, steps.py): skipped with a skipped replay (a dry run, nothing to
    replay); a failed replay fails it in one line (the replay's own line is the run's cause); else the report, with
    every step's outcome and duration, failing in one line when a step after the replay failed."""
    steps = run_steps(ti, ti.dag_id, ti.run_id)
    replay = state_of(steps, replay_task_id)
    if replay in (None, "skipped"):
        raise AirflowSkipException(f"not run: the replay task {replay_task_id} ended {replay or 'without a state'}")
    if replay != SUCCESS:
        raise _failed(f"no report: {failed_line(steps)}")
    calibration = ti.xcom_pull(task_ids="calibrate")
    return make_report(ti.xcom_pull(task_ids=plan_task_id), ti.xcom_pull(task_ids="data_quality"), ti.dag_id,
                       ti.run_id, steps=steps, calibration=calibration)


def _failed(reason: str) -> Failed:
    """The report's own failure: logged as one line, not kept as the run's cause (the failed step keeps its own)."""
    log.error("%s", reason)
    return Failed(reason)


def make_report(p: Mapping[str, Any], dq: Mapping[str, Any] | str | None, dag_id: str,
                run_id: str, steps: list[dict[str, Any]] | None = None,
                calibration: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Per-partition output counts as JSON and Markdown in the run folder, with every step's outcome and duration
    (`steps`, steps.run_steps); fails if a planned output is missing or a step failed. `dq` is what data_quality
    returned (or a status line when it did not run), `calibration` what calibrate returned."""
    plan = PlannedRuns.from_dict(p["plan"])
    dq = dq if isinstance(dq, Mapping) else {"status": dq}
    calibration = calibration or {}
    jobs = {**(dq.get("spark_jobs") or {}), **(calibration.get("spark_jobs") or {})}
    report = build_report(p["output_path"], plan.partitions, dag_id=dag_id, run_id=run_id,
                          config_file=p["config_file"], config_path=p["config_path"],
                          missing_days=list(plan.missing), dq=dq.get("status"),
                          data_docs=dq.get("data_docs"), why_report=dq.get("why_report"),
                          spark_jobs=jobs or None, steps=steps, calibration=calibration.get("status"))
    json_path, md_path = write_report(report, Path(p["run_dir"]))
    log.info("report: %s\n%s", md_path, Path(md_path).read_text())
    why = failure_line(report, md_path)  # with the steps before it that passed
    if why is not None:
        raise fail(why)
    failed = failed_line(steps or [])
    if failed is not None:  # the report is written: the outputs and the other steps' reports stay
        raise _failed(f"a step after the replay failed: {failed} (report: {md_path})")
    return {"report_json": json_path, "report_md": md_path, "output_path": p["output_path"]}


SKIP_KEY = "replay_skipped"


def partition_arrived(v: Mapping[str, Any], wait_hours: float, day_end: dt.datetime,
                      now: dt.datetime | None = None, ti: Any = None) -> bool:
    """The nightly run's wait for its day: True once the day's `dt=` folder is in the source (or the run replays a
    missing day as empty, or the source is not local: plan lists it); while it is not there, False until
    `wait_hours` after the day ended, then the run is skipped with that said (the day can be replayed later by a
    backfill). A first run after unpausing the DAG catches up the day before: without its folder by then, it is
    skipped at once, not failed."""
    folder = Path(v["source_path"]) / f"dt={v['start']}"
    if v.get("allow_missing_partitions") or "://" in str(v["source_path"]) or folder.is_dir():
        return True
    now = now or dt.datetime.now(dt.timezone.utc)
    deadline = day_end + dt.timedelta(hours=float(wait_hours))
    if now < deadline:
        log.info("waiting for %s until %s UTC", folder, deadline.strftime("%Y-%m-%d %H:%M"))
        return False
    why = (f"skipped: dt={v['start']} is not in {v['source_path']} {float(wait_hours):g} h after the day ended "
           "(replay it later with a backfill of the day)")
    log.warning("%s", why)
    ti = ti if ti is not None else current_ti()
    if ti is not None:
        try:
            ti.xcom_push(key=SKIP_KEY, value=why)
        except Exception:  # noqa: BLE001 - the skip stands without its note
            pass
    raise AirflowSkipException(why)
