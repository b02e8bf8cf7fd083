"""The backfill DAGs' optional `calibrate` task: with a live path and a calibration grid in the form, the grid's
variants of the run's range are replayed and ranked by agreement with the live output (`replay tune
--against-live`, the one calibration command: one spark-submit of jobs/replay_job.py through the `replay_spark`
connection and pool), on the run's effective config. It reads the source, never the replay's outputs, and writes
the ranking where `replay tune` writes it (`<output>/_tuning/<grid>/calibration.json`, what the why-report and the
runs page read); the task returns its verdict and that folder, which the compare_live task after it hands to the
settings search (`--calibration`: those variants are never replayed twice in a run).

It runs after the replay succeeded; a failure (a refused grid, a failed job) fails only this task, in one line led
by "calibration:" (steps.py: the comparison and data quality still run). Without a live path or a grid it does
nothing and says so.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from ..compare.live_spec import CompareInputError
from ..layout import COMPARE_JOBS_FILE, TUNING_FOLDER
from ..semantics.config import parse_config
from ..tuning.calibrate import FILE_JSON
from ..tuning.grid import GridError
from .chunks import run_bytes
from .calibration_grid import GRID_OPTIONS, calibration_grid, grid_fields, text_param
from .compare_task import live_args, planned_range
from .failures import fail
from .operators import ReplaySparkSubmitOperator, replay_job
from .params import resolve_path

NOT_RUN = "not run (no calibration grid and live path in the form)"


def calibrate_args(p: Mapping[str, Any], params: Mapping[str, Any],
                   project_dir: str | Path) -> tuple[list[str], Path] | None:
    """The calibration job's arguments (`jobs/replay_job.py tune ... --against-live`) and the folder of its
    result; None without a live path or a grid. A grid the command would refuse raises GridError now."""
    span = planned_range(p)
    found = calibration_grid(parse_config(p["config_raw"]), params, *span.split(".."))
    if found is None:
        return None
    grid, cfg = found
    args = ["tune", "--config", p["config_path"], "--partitions", span,
            "--against-live", resolve_path(text_param(params, "live_path"), project_dir),
            *live_args(params, project_dir)]
    for field, value in grid_fields(params).items():
        if value:
            args += [GRID_OPTIONS[field], value]
    return args, Path(cfg.output.path) / TUNING_FOLDER / grid.name


def calibration_result(folder: Path) -> dict[str, Any]:
    """What the task returns: the verdict, the folder (for compare_live), the calibration's Spark jobs."""
    doc = json.loads((folder / FILE_JSON).read_text())
    jobs_file = folder / COMPARE_JOBS_FILE
    jobs = json.loads(jobs_file.read_text()) if jobs_file.is_file() else {}
    return {"status": doc["verdict"].removeprefix("calibration: "), "folder": str(folder),
            "variants": len(doc["ranking"]), "spark_jobs": jobs}


class CalibrateOperator(ReplaySparkSubmitOperator):
    """spark-submit of `replay tune --against-live` for the run's range (see the module doc)."""

    def __init__(self, *, plan_task_id: str, project_dir: str, **kwargs: Any):
        kwargs.setdefault("name", "event-replay-calibrate")
        kwargs.setdefault("step", "calibration")
        super().__init__(application=replay_job(project_dir), **kwargs)
        self.plan_task_id, self.project_dir = plan_task_id, project_dir

    def execute(self, context: Any) -> dict[str, Any]:
        ti = context["ti"]
        p = ti.xcom_pull(task_ids=self.plan_task_id)
        if not p["plan"]["runs"]:
            return {"status": "skipped (nothing replayed)"}
        try:
            found = calibrate_args(p, context["params"], self.project_dir)
        except (GridError, CompareInputError) as exc:
            raise fail(f"calibration: refused: {exc}", ti) from None
        if found is None:
            return {"status": NOT_RUN}
        args, folder = found
        (folder / FILE_JSON).unlink(missing_ok=True)  # an earlier run's ranking is never read as this one's
        self.submit(context, args, run_bytes(p))
        if not (folder / FILE_JSON).is_file():
            raise fail(f"calibration: the job left no ranking in {folder}", ti)
        result = calibration_result(folder)
        self.log.info("calibration: %s (%s)", result["status"], folder)
        return result
