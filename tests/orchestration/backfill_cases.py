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
