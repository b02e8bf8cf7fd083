"""The bodies of the DAGs' Python tasks: plain functions of plain (XCom-able) values, testable without Airflow."""
from __future__ import annotations

import datetime as dt
import logging
import shutil
from pathlib import Path
from typing import Any, Mapping

from ..semantics.config import ConfigError, load_config
from .chunks import partitions_per_job
from .params import run_dir, user_message, validate_request, write_effective_config
from .plan import Plan, check_state, list_partitions, plan_range, predecessor
from .report import build_report, write_report

log = logging.getLogger(__name__)


def validate_backfill(params: Mapping[str, Any], project_dir: str, run_id: str) -> dict[str, Any]:
    """Load the config with the overrides, check the range; write the effective config every job will read (and,
    for a Flink SQL job, the YAML it was converted to: flink_job.yaml). A refusal fails the task at once (no
    retry) with one line in the form's words, not a config traceback."""
    try:
        cfg, req = validate_request(params, project_dir)
    except ConfigError as exc:
        from airflow.sdk.exceptions import AirflowFailException

        log.error("the request cannot run: %s", user_message(exc))
        raise AirflowFailException(user_message(exc)) from None
    folder = run_dir(cfg, run_id, project_dir)
    config_path = write_effective_config(cfg, folder / "job.yaml")
    generated = None
    if req.generated_config is not None:  # a Flink SQL job: keep what it was converted to, with its comments
        generated = str(folder / "flink_job.yaml")
        Path(generated).write_text(req.generated_config)
    shutil.rmtree(folder / "done", ignore_errors=True)  # a new pass of the run replays everything again
    log.info("request valid: %s, %s..%s, effective config %s", req.config_file, req.start, req.end, config_path)
    return {"config_path": config_path, "config_file": req.config_file, "source_path": cfg.source.path,
            "output_path": cfg.output.path, "start": req.start.isoformat(), "end": req.end.isoformat(),
            "end_of_input": req.end_of_input, "allow_missing_partitions": req.allow_missing_partitions,
            "dq_warn_only": req.dq_warn_only, "continue_from_state": req.continue_from_state, "run_dir": str(folder),
            "generated_config": generated, "partitions_per_job": partitions_per_job(params)}


def validate_nightly(params: Mapping[str, Any], day: dt.date, project_dir: str, run_id: str) -> dict[str, Any]:
    """The nightly run replays the logical date's day, continuing whatever history precedes it."""
    request = {**params, "start_date": day.isoformat(), "end_date": day.isoformat(), "continue_from_state": True}
    return validate_backfill(request, project_dir, run_id)


def plan_partitions(v: Mapping[str, Any]) -> dict[str, Any]:
    """The ordered partition runs. With continue_from_state the first continues its predecessor's state
    (the latest partition before the range; none = the range starts the history)."""
    available = list_partitions(v["source_path"])
    start, end = dt.date.fromisoformat(v["start"]), dt.date.fromisoformat(v["end"])
    continue_from = predecessor(available, start) if v.get("continue_from_state") else None
    plan = plan_range(available, start, end, end_of_input=v["end_of_input"],
                      allow_missing=v["allow_missing_partitions"], continue_from=continue_from)
    check_state(v["output_path"], plan.runs[0])  # fail now, not after a Spark start-up
    log.info("plan: %s", ", ".join(f"{r.partition}{' (first)' if r.first else ''} {r.end_of_input}"
                                   for r in plan.runs))
    if plan.missing:
        log.warning("days without a partition, replayed as empty: %s", ", ".join(plan.missing))
    return {**v, "plan": plan.to_dict()}


def data_quality(p: Mapping[str, Any], warn_only: bool, spark_master: str | None = None,
                 run_id: str | None = None) -> dict[str, Any]:
    """The GX suites on the outputs, then the why-report, in one Spark session; both reports go to the run's
    folder (`<output>/_airflow/<run_id>/_data_docs/` and `why_report/`), so a later run never overwrites them.
    Returns the status line and where both reports are; a failed expectation fails the task unless warn_only."""
    if not p["plan"]["runs"]:
        return {"status": "skipped (nothing replayed)"}
    from ..quality import validate
    from ..quality.validation import DOCS_FOLDER
    from ..quality.why import REPORT_FOLDER, why_report
    from ..spark import build_session

    cfg = load_config(p["config_path"])
    folder = Path(p["run_dir"]).resolve()
    spark = build_session(master=spark_master or "local[2]", app_name="event-replay-dq")
    try:
        report = validate(cfg.output.path, cfg, docs_dir=str(folder / DOCS_FOLDER), spark=spark, run_name=run_id)
        # also when an expectation failed: it explains
        why = why_report(cfg.output.path, cfg, spark=spark, report_dir=folder / REPORT_FOLDER)
        why = why if "://" in why else str(Path(why).resolve())
    finally:
        spark.stop()
    log.info("%s\nwhy-report: %s", report.summary(), why)
    result = {"data_docs": report.docs_index, "why_report": why}
    if report.success:
        return {**result, "status": f"passed ({len(report.results)} expectations)"}
    message = f"FAILED {len(report.failed)}/{len(report.results)}: {', '.join(sorted(report.failed_names()))}"
    if not warn_only:
        raise RuntimeError(f"data quality {message} (Data Docs: {report.docs_index}; set dq_warn_only to only warn)")
    log.warning("data quality %s (warn only)", message)
    return {**result, "status": f"{message} (warn only)"}


def make_report(p: Mapping[str, Any], dq: Mapping[str, Any] | str | None, dag_id: str,
                run_id: str) -> dict[str, str]:
    """Per-partition output counts as JSON and Markdown in the run folder; fails if a planned output is missing.
    `dq` is what data_quality returned (or a status line when it did not run)."""
    plan = Plan.from_dict(p["plan"])
    dq = dq if isinstance(dq, Mapping) else {"status": dq}
    report = build_report(p["output_path"], plan.partitions, dag_id=dag_id, run_id=run_id,
                          config_file=p["config_file"], config_path=p["config_path"],
                          missing_days=list(plan.missing), dq=dq.get("status"),
                          data_docs=dq.get("data_docs"), why_report=dq.get("why_report"))
    json_path, md_path = write_report(report, Path(p["run_dir"]))
    log.info("report: %s\n%s", md_path, Path(md_path).read_text())
    incomplete = [x["partition"] for x in report["partitions"] if x["missing_outputs"]]
    if incomplete:
        raise RuntimeError(f"partitions without complete outputs: {', '.join(incomplete)} (see {md_path})")
    return {"report_json": json_path, "report_md": md_path, "output_path": p["output_path"]}
