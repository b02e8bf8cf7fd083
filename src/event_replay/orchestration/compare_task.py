"""The backfill DAGs' optional `compare_live` task: when the form gets a live path, the replayed range is compared
with the live job's output (`replay compare`, one spark-submit of jobs/replay_job.py through the `replay_spark`
connection and pool) into the run folder (`<output>/_airflow/<run_id>/compare/`), where the data-quality task then
finds it: the GX live parity suite and the why-report's "versus live" section. When the comparison differs, the
settings search confirms its diagnosis (`--search-settings`: the suspect settings replayed one at a time, then two,
the source read once). It only compares: the calibration grid is the calibrate task's before it
(calibrate_task.py); when that task ranked a grid, the search reads its ranking (`--calibration`) and never replays
those variants again. The task's result carries the diagnosis (compare.summary.diagnosis, what every view shows).

It runs once the replay succeeded, whatever the calibration did (steps.py); the data_quality task after it runs its
checks in a Spark job of its own, whatever this one did.

Without a live path the task does nothing (it returns a status: the tasks after it run as usual). Differences do
not fail it (`--report-only`): the live parity suite is the gate, like the other suites (dq_warn_only).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from ..compare.summary import diagnosis, pct
from ..layout import COMPARE_FOLDER, COMPARE_SUMMARY_FILE
from .calibration_grid import text_param
from .chunks import run_bytes
from .failures import fail
from .operators import ReplaySparkSubmitOperator, replay_job
from .params import resolve_path
from .steps import AFTER_STEPS, after_replay


def planned_range(p: Mapping[str, Any]) -> str:
    """`FIRST..LAST`: the run's planned partitions, as the jobs after the replay take them (--partitions)."""
    runs = p["plan"]["runs"]
    return f"{runs[0]['partition']}..{runs[-1]['partition']}"


def live_args(params: Mapping[str, Any], project_dir: str | Path) -> list[str]:
    """How to read the live output, from the form's "Versus live" fields: the options after its path, the same for
    `replay compare --live` and `replay tune --against-live` (commands/live_options.py). Relative paths are
    relative to the project directory."""
    args = ["--live-format", params.get("live_format") or "parquet"]
    if text_param(params, "live_columns"):
        args += ["--live-columns", text_param(params, "live_columns")]
    if text_param(params, "live_late_path"):
        args += ["--live-late", resolve_path(text_param(params, "live_late_path"), project_dir)]
    if params.get("live_keeps_updates"):
        args.append("--live-keeps-updates")
    return args


def compare_args(p: Mapping[str, Any], params: Mapping[str, Any], project_dir: str | Path,
                 calibration: str | None = None) -> tuple[list[str], Path]:
    """The arguments of the compare job (`jobs/replay_job.py compare ...`) for the planned range, and its
    summary file; `calibration`: the calibrate task's folder, when it ranked a grid."""
    folder = Path(p["run_dir"]).resolve() / COMPARE_FOLDER
    args = ["compare", "--config", p["config_path"],
            "--live", resolve_path(text_param(params, "live_path"), project_dir), *live_args(params, project_dir),
            "--partitions", planned_range(p), "--out", str(folder),
            "--min-agreement", str(float(params.get("live_min_agreement", 100.0))), "--report-only",
            "--search-settings"]
    if calibration:
        args += ["--calibration", calibration]
    return args, folder / COMPARE_SUMMARY_FILE


def compare_result(summary: Mapping[str, Any]) -> dict[str, Any]:
    """What the task returns: a status line, the agreement, where the page is, the diagnosis's headline."""
    t = summary["totals"]
    status = (f"agreement {pct(t['agreement_pct'])} of {t['windows']} windows ({t['differing']} differing"
              + (f", {t['duplicate']} duplicated" if t.get("duplicate") else "")
              + (f"; late rows {t['late_replay_only']} replay only, {t['late_live_only']} live only"
                 if "late_matched" in t else "") + ")")
    found = diagnosis(dict(summary))
    return {"status": status, "agreement_pct": t["agreement_pct"], "compare_page": summary.get("page"),
            "diagnosis": found["headline"] if found else None}


class CompareLiveOperator(ReplaySparkSubmitOperator):
    """spark-submit of `replay compare` for the run's range when the form has a live path (see the module doc)."""

    def __init__(self, *, plan_task_id: str, project_dir: str, replay_task_id: str = "replay_partitions",
                 calibrate_task_id: str = "calibrate", **kwargs: Any):
        kwargs.setdefault("name", "event-replay-compare")
        kwargs.setdefault("step", "comparison with live")
        kwargs.setdefault("trigger_rule", AFTER_STEPS)
        super().__init__(application=replay_job(project_dir), **kwargs)
        self.plan_task_id, self.project_dir = plan_task_id, project_dir
        self.replay_task_id, self.calibrate_task_id = replay_task_id, calibrate_task_id

    def execute(self, context: Any) -> dict[str, Any]:
        ti, params = context["ti"], context["params"]
        after_replay(ti, self.replay_task_id)
        if not text_param(params, "live_path"):
            return {"status": "not run (no live path in the form)"}
        p = ti.xcom_pull(task_ids=self.plan_task_id)
        if not p["plan"]["runs"]:
            return {"status": "skipped (nothing replayed)"}
        # Only a calibration of this run that succeeded: a failed task returns nothing, its folder may be stale
        calibrated = ti.xcom_pull(task_ids=self.calibrate_task_id) or {}
        args, summary_file = compare_args(p, params, self.project_dir, calibrated.get("folder"))
        summary_file.unlink(missing_ok=True)  # a retry never reads the attempt before's
        self.submit(context, args, run_bytes(p))
        if not summary_file.is_file():
            raise fail(f"comparison with live: the job left no summary in {summary_file}", ti)
        result = compare_result(json.loads(summary_file.read_text()))
        self.log.info("versus live: %s (%s)%s", result["status"], result["compare_page"],
                      f"; diagnosis: {result['diagnosis']}" if result["diagnosis"] else "")
        return result
