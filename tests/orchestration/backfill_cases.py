"""The orchestration tests' small project: a dt=YYYY-MM-DD source (three days, a gap, a folder that is no day) and a
config under jobs/configs/, and the backfill form's request."""
from __future__ import annotations

from pathlib import Path

from airflow_env import write_config


def project_tree(tmp_path: Path):
    src, out = tmp_path / "data", tmp_path / "out"
    for day in ("2024-01-01", "2024-01-02", "2024-01-04"):
        (src / f"dt={day}").mkdir(parents=True)
    (src / "dt=2024-02-30").mkdir()  # not a day: ignored
    (src / "_tmp").mkdir()
    (tmp_path / "jobs" / "configs").mkdir(parents=True)
    cfg = write_config(tmp_path / "jobs" / "configs" / "small.yaml", Path("data"), Path("out"))
    return tmp_path, cfg, src, out


def params(**kw):
    return {"config": "jobs/configs/small.yaml", "start_date": "2024-01-01", "end_date": "2024-01-02", **kw}


class RunTI:
    """A task instance as a step after the replay sees its run (orchestration/steps.py): the run's finished tasks as
    Airflow's task breadcrumbs give them (task, state, duration) and the XComs they kept; what it pushes is kept in
    `pushed`. (In a real run the execution API answers these; tests/test_airflow_e2e.py runs one.)"""

    def __init__(self, states: dict, xcoms: dict | None = None, dag_id: str = "event_time_backfill",
                 run_id: str = "manual__steps"):
        self.states, self.xcoms, self.dag_id, self.run_id = states, dict(xcoms or {}), dag_id, run_id
        self.pushed: dict = {}

    def get_task_breadcrumbs(self, dag_id: str, run_id: str) -> list[dict]:
        assert (dag_id, run_id) == (self.dag_id, self.run_id)
        return [{"task_id": t, "map_index": -1, "state": s, "operator": "Op", "duration": d}
                for t, (s, d) in sorted(self.states.items())]

    def xcom_pull(self, task_ids: str, key: str = "return_value"):
        return self.xcoms.get((task_ids, key))

    def xcom_push(self, key: str, value) -> None:
        self.pushed[key] = value
