"""The Airflow side of the runs list: state, start and end of the backfill DAGs' runs, from Airflow's metadata DB
(the plugin runs inside the API server), merged into the rows the run folders give (runs.py).

A run that failed before it wrote a folder (a refused request) still has a row: the DB knows it."""
from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Iterable

from .runs import RunRow, safe_run_id

DAG_IDS = ("event_time_backfill", "nightly_event_time_backfill")  # the DAGs that write run folders
MAX_RUNS = 500


@dataclass(frozen=True)
class DagRunInfo:
    dag_id: str
    run_id: str
    state: str
    start: datetime | None
    end: datetime | None
    conf: dict | None = None


def fetch_dag_runs(dag_ids: Iterable[str] = DAG_IDS, limit: int = MAX_RUNS) -> list[DagRunInfo]:
    """The latest runs of the DAGs, newest first; none without a metadata DB (the page still lists the folders)."""
    try:
        from sqlalchemy import select

        from airflow.models.dagrun import DagRun
        from airflow.utils.session import create_session

        with create_session() as session:
            rows = session.execute(
                select(DagRun.dag_id, DagRun.run_id, DagRun.state, DagRun.start_date, DagRun.end_date, DagRun.conf)
                .where(DagRun.dag_id.in_(list(dag_ids)))
                .order_by(DagRun.run_after.desc()).limit(limit)).all()
    except Exception:  # noqa: BLE001 - no DB (CLI, unit tests) or not migrated: nothing to merge
        return []
    return [DagRunInfo(r.dag_id, r.run_id, str(getattr(r.state, "value", r.state)), r.start_date, r.end_date,
                       r.conf if isinstance(r.conf, dict) else None) for r in rows]


def merge(rows: list[RunRow], dag_runs: list[DagRunInfo]) -> list[RunRow]:
    """Rows with the Airflow state and times of their run, plus a row for each DB run without a folder;
    newest first (by start, else end), CLI runs by the time their outputs were written."""
    by_folder = {safe_run_id(d.run_id): d for d in dag_runs}
    seen: set[str] = set()
    merged = []
    for r in rows:
        d = by_folder.get(safe_run_id(r.run_id)) if r.run_id else None
        if d is not None:
            seen.add(d.run_id)
            r = replace(r, dag_id=d.dag_id, run_id=d.run_id, state=d.state, start=d.start or r.start,
                        end=d.end if d.state not in ("running", "queued") else None)
        merged.append(r)
    for d in dag_runs:
        if d.run_id not in seen:
            conf = d.conf or {}
            merged.append(RunRow(output=None, run_id=d.run_id, job=str(conf.get("config") or "-"),
                                 partitions=[], rows_read=None, firings=None, late_rows=None, quarantined=None, dq="not run",
                                 dag_id=d.dag_id, state=d.state, start=d.start, end=d.end,
                                 extra={"requested": [conf.get("start_date"), conf.get("end_date")]}))
    oldest = datetime.min.replace(tzinfo=timezone.utc)
    return sorted(merged, key=lambda r: _aware(r.start or r.end) or oldest, reverse=True)


def _aware(t: datetime | None) -> datetime | None:
    return t.replace(tzinfo=timezone.utc) if t is not None and t.tzinfo is None else t
