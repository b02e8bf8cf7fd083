"""The steps after the replay (calibrate, compare_live, data_quality) and the run report, as Airflow runs them.

Each step runs once the replay succeeded, whatever the steps before it did: their trigger rule is `all_done`
(AFTER_STEPS) and each first checks the replay task's own state (`after_replay`: skipped when the replay did not
succeed, as Airflow skips them after a skipped replay). So a failed step fails only its own task, with its one line
(failures.py), and the steps after it still run and write what they find. The report (also `all_done`) lists every
step's outcome and duration from Airflow's own record of the run (its task breadcrumbs) and fails in one line, the
failed steps named with their causes, when one failed: the run is red, the outputs and the other reports stay.
"""
from __future__ import annotations

from typing import Any, Sequence

from airflow.sdk.exceptions import AirflowSkipException

from .failures import FAILURE_KEY

AFTER_STEPS = "all_done"  # every step after the replay: see the module doc
SUCCESS = "success"
# The backfill DAGs' tasks in the order a run takes them (the report lists its steps so); others after them
ORDER = ("validate", "wait_for_partition", "plan", "replay_partitions", "replay_partition", "calibrate",
         "compare_live", "data_quality")


def _state(value: Any) -> str:
    return str(getattr(value, "value", value))


def run_steps(ti: Any, dag_id: str, run_id: str) -> list[dict[str, Any]]:
    """Every finished task of the run, in the order the run takes them (ORDER): task, state, seconds and, for a
    failed one, its line."""
    steps = []
    for crumb in ti.get_task_breadcrumbs(dag_id=dag_id, run_id=run_id):
        state = _state(crumb.get("state"))
        seconds = crumb.get("duration")
        line = ti.xcom_pull(task_ids=crumb["task_id"], key=FAILURE_KEY) if state == "failed" else None
        steps.append({"task": crumb["task_id"], "state": state,
                      "seconds": round(float(seconds), 1) if seconds is not None else None,
                      **({"line": str(line)} if line else {})})
    return sorted(steps, key=lambda s: (ORDER.index(s["task"]) if s["task"] in ORDER else len(ORDER), s["task"]))


def state_of(steps: Sequence[dict[str, Any]], task_id: str) -> str | None:
    return next((s["state"] for s in steps if s["task"] == task_id), None)


def after_replay(ti: Any, replay_task_id: str) -> list[dict[str, Any]]:
    """The run's finished steps (run_steps); skips the calling step unless the replay task succeeded."""
    steps = run_steps(ti, ti.dag_id, ti.run_id)
    state = state_of(steps, replay_task_id)
    if state != SUCCESS:
        raise AirflowSkipException(f"not run: the replay task {replay_task_id} ended {state or 'without a state'}")
    return steps


def failed_line(steps: Sequence[dict[str, Any]]) -> str | None:
    """`calibrate failed: <its line>; compare_live failed: ...`; None when no step failed."""
    failed = [s for s in steps if s["state"] in ("failed", "upstream_failed")]
    if not failed:
        return None
    return "; ".join(f"{s['task']} {s['state'].replace('_', ' ')}" + (f": {s['line']}" if s.get("line") else "")
                     for s in failed)


def steps_text(steps: Sequence[dict[str, Any]]) -> str:
    """`replay_partitions success 25.1 s, calibrate failed 4.0 s, ...` (the report's one line of steps)."""
    return ", ".join(f"{s['task']} {s['state'].replace('_', ' ')}"
                     + (f" {s['seconds']:.1f} s" if s.get("seconds") is not None else "") for s in steps)
