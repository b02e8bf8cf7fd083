"""The backfill DAGs' optional calibrate task (orchestration/calibrate_task.py), without Airflow running: the job's
arguments from the form (`replay tune --against-live` over the run's range, its result where the command writes it),
what the task returns, and a refusal failing only this task in one line, before any Spark job."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from backfill_cases import RunTI
from event_replay.orchestration.calibrate_task import NOT_RUN, CalibrateOperator, calibrate_args, calibration_result
from event_replay.orchestration.failures import FAILURE_KEY, Failed
from event_replay.semantics.config import load_config, to_raw

ROOT = Path(__file__).resolve().parents[2]
FORM = {"live_path": "jobs/live/demo/firings", "live_format": "json", "live_columns": None, "live_late_path": "x/late",
        "live_keeps_updates": False, "calibrate_max_out_of_orderness": "500ms,1s", "calibrate_idle_timeout": None}


def _planned(project, *days: str) -> dict:
    _, config, _, _ = project
    return {"plan": {"runs": [{"partition": d} for d in days]}, "config_path": "/run/job.yaml",
            "config_raw": to_raw(load_config(config)), "run_dir": "/run"}


def test_calibrate_args_from_the_form(project):
    p = _planned(project, "2024-01-01", "2024-01-02")
    args, folder = calibrate_args(p, FORM, "/proj")
    assert args == ["tune", "--config", "/run/job.yaml", "--partitions", "2024-01-01..2024-01-02",
                    "--against-live", "/proj/jobs/live/demo/firings", "--live-format", "json",
                    "--live-late", "/proj/x/late", "--max-out-of-orderness", "500ms,1s"]
    # where `replay tune` writes this grid (the config's idle timeout and lateness as the other axes)
    out = p["config_raw"]["output"]["path"]
    assert folder == Path(out) / "_tuning" / "delay_500ms-1s__idle_5s__lateness_2s"
    assert calibrate_args(p, {**FORM, "calibrate_max_out_of_orderness": " "}, "/proj") is None  # no grid
    assert calibrate_args(p, {**FORM, "live_path": None}, "/proj") is None  # nothing to rank against


def test_what_the_task_returns(tmp_path):
    (tmp_path / "calibration.json").write_text(json.dumps(
        {"verdict": "calibration: the live output agrees best with delay 1s, idle 30s, lateness 0ms (score 1.000)",
         "ranking": [{}, {}, {}, {}], "live": {"path": "/live"}}))
    (tmp_path / "spark_jobs.json").write_text('{"calibration": 12}\n')
    assert calibration_result(tmp_path) == {
        "status": "the live output agrees best with delay 1s, idle 30s, lateness 0ms (score 1.000)",
        "folder": str(tmp_path), "variants": 4, "spark_jobs": {"calibration": 12}}


def test_a_refused_grid_fails_only_this_task_in_one_line(project):
    """An idle timeout of 0 passes the form's pattern but no config takes it: the task fails before any Spark job,
    its line kept for the runs page (the steps after it run: test_steps.py, test_wiring.py)."""
    op = CalibrateOperator(task_id="calibrate", plan_task_id="plan", project_dir=str(ROOT))
    assert op.step == "calibration" and op.pool == "replay_spark" and op.trigger_rule == "all_success"
    ti = RunTI({}, {("plan", "return_value"): _planned(project, "2024-01-01")})
    with pytest.raises(Failed) as e:
        op.execute({"ti": ti, "params": {**FORM, "calibrate_idle_timeout": "0s,5s"}, "run_id": ti.run_id})
    assert str(e.value).startswith("calibration: refused: option params.calibrate_idle_timeout: ") \
        and "idle_timeout" in str(e.value) and "\n" not in str(e.value)
    assert ti.pushed == {FAILURE_KEY: str(e.value)}
    assert op.execute({"ti": ti, "params": {**FORM, "calibrate_max_out_of_orderness": None}, "run_id": "r"}) == \
        {"status": NOT_RUN}
