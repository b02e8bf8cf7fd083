"""The Airflow side of the runs list: state, start and end of the backfill DAGs' runs, from Airflow's metadata DB
(the plugin runs inside the API server), merged into the rows the run folders give (runs.py).

A run that failed before it wrote a folder (a refused request) still has a row: the DB knows it. Its start is when
its first task started (a run recorded ahead of time, `airflow dags test` with a logical date, starts later than
the DAG run's own start), and what its tasks kept as XComs says why it failed or was skipped, or what a dry run found
(event_replay.orchestration.failures: `replay_failure`, `replay_skipped`, `replay_dry_run`; of two failed steps,
the first's line: a failed calibration's, not a later step's); a failed run without that line names the task that
failed."""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Iterable

from .runs import RunRow, safe_run_id

DAG_IDS = ("event_time_backfill", "nightly_event_time_backfill")  # the DAGs that write run folders
MAX_RUNS = 500
# XCom keys the DAGs' tasks keep (event_replay.orchestration.failures, tasks): the plugin imports no project code.
FAILURE_KEY, SKIP_KEY, DRY_RUN_KEY = "replay_failure", "replay_skipped", "replay_dry_run"
# What the validate task returned (orchestration/tasks.validate_backfill): where the run writes, wherever that is.
REQUEST_TASK, REQUEST_KEY = "validate", "return_value"
REQUEST_FIELDS = ("output_path", "run_dir", "dry_run", "config_file", "start", "end")


@dataclass(frozen=True)
class DagRunInfo:
    dag_id: str
    run_id: str
    state: str
    start: datetime | None
    end: datetime | None
    conf: dict | None = None
    notes: dict[str, Any] = field(default_factory=dict)  # XCom key -> value (failures, skips, dry runs)
    failed_tasks: tuple[str, ...] = ()
    request: dict[str, Any] = field(default_factory=dict)  # REQUEST_FIELDS of the validate task's result


def _value(v: Any) -> Any:
    """An XCom value as the task pushed it (the DB may hold it JSON-encoded once more)."""
    if isinstance(v, (bytes, bytearray)):
        v = v.decode("utf-8", "replace")
    if isinstance(v, str):
        try:
            return json.loads(v)
        except ValueError:
            return v
    return v


def fetch_dag_runs(dag_ids: Iterable[str] = DAG_IDS, limit: int = MAX_RUNS) -> list[DagRunInfo]:
    """The latest runs of the DAGs, newest first; none without a metadata DB (the page still lists the folders)."""
    try:
        from sqlalchemy import and_, func, or_, select

        from airflow.models.dagrun import DagRun
        from airflow.models.taskinstance import TaskInstance
        from airflow.models.xcom import XComModel
        from airflow.utils.session import create_session

        ids = list(dag_ids)
        with create_session() as session:
            rows = session.execute(
                select(DagRun.dag_id, DagRun.run_id, DagRun.state, DagRun.start_date, DagRun.end_date, DagRun.conf)
                .where(DagRun.dag_id.in_(ids))
                .order_by(DagRun.run_after.desc()).limit(limit)).all()
            # typed as the column: an aggregate over it is a bare string on SQLite otherwise
            earliest = func.min(TaskInstance.start_date, type_=TaskInstance.__table__.c.start_date.type)
            first = {(t.dag_id, t.run_id): t.first_start for t in session.execute(
                select(TaskInstance.dag_id, TaskInstance.run_id, earliest.label("first_start"))
                .where(TaskInstance.dag_id.in_(ids)).group_by(TaskInstance.dag_id, TaskInstance.run_id)).all()}
            failed: dict[tuple[str, str], list[str]] = {}
            for r in session.execute(select(TaskInstance.dag_id, TaskInstance.run_id, TaskInstance.task_id)
                                     .where(TaskInstance.dag_id.in_(ids), TaskInstance.state == "failed")).all():
                failed.setdefault((r.dag_id, r.run_id), []).append(r.task_id)
            notes: dict[tuple[str, str], dict[str, Any]] = {}
            requests: dict[tuple[str, str], dict[str, Any]] = {}
            for r in session.execute(select(XComModel.dag_id, XComModel.run_id, XComModel.key, XComModel.value)
                                     .where(XComModel.dag_id.in_(ids),
                                            or_(XComModel.key.in_([FAILURE_KEY, SKIP_KEY, DRY_RUN_KEY]),
                                                and_(XComModel.task_id == REQUEST_TASK,
                                                     XComModel.key == REQUEST_KEY)))
                                     .order_by(XComModel.timestamp)).all():
                if r.key == REQUEST_KEY:
                    requests[(r.dag_id, r.run_id)] = _request(_value(r.value))
                else:  # the first of each: of two failed steps, the first one's line
                    notes.setdefault((r.dag_id, r.run_id), {}).setdefault(r.key, _value(r.value))
    except Exception:  # noqa: BLE001 - no DB (CLI, unit tests) or not migrated: nothing to merge
        return []
    out = []
    for r in rows:
        key = (r.dag_id, r.run_id)
        start = first.get(key) if isinstance(first.get(key), datetime) else r.start_date
        if start is not None and r.start_date is not None and _aware(start) < _aware(r.start_date):
            start = r.start_date  # a task of an earlier try of a cleared run: the run started later
        out.append(DagRunInfo(r.dag_id, r.run_id, str(getattr(r.state, "value", r.state)), start, r.end_date,
                              r.conf if isinstance(r.conf, dict) else None, notes.get(key, {}),
                              tuple(sorted(failed.get(key, []))), requests.get(key, {})))
    return out


def _request(value: Any) -> dict[str, Any]:
    """The few fields of the validate task's result the page uses (it also holds the whole config)."""
    return {k: value[k] for k in REQUEST_FIELDS if k in value} if isinstance(value, dict) else {}


def reason(d: DagRunInfo) -> str | None:
    """Why the run failed or was skipped, in one line; what a dry run found."""
    if d.notes.get(FAILURE_KEY):
        return str(d.notes[FAILURE_KEY])
    if d.notes.get(SKIP_KEY):
        return str(d.notes[SKIP_KEY])
    dry = d.notes.get(DRY_RUN_KEY)
    if isinstance(dry, dict) and dry.get("summary"):
        return str(dry["summary"])
    if d.state == "failed" and d.failed_tasks:
        return f"task {', '.join(d.failed_tasks)} failed (no cause recorded: see its log)"
    return None


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
                        end=d.end if d.state not in ("running", "queued") else None,
                        reason=r.reason or reason(d), dry_run=DRY_RUN_KEY in d.notes)
        merged.append(r)
    for d in dag_runs:
        if d.run_id not in seen:
            conf = d.conf or {}
            merged.append(RunRow(output=None, run_id=d.run_id, job=str(conf.get("config") or "-"),
                                 partitions=[], rows_read=None, firings=None, late_rows=None, quarantined=None, dq="not run",
                                 dag_id=d.dag_id, state=d.state, start=d.start, end=d.end,
                                 extra={"requested": [conf.get("start_date"), conf.get("end_date")]},
                                 reason=reason(d), dry_run=DRY_RUN_KEY in d.notes,
                                 config_file=str(conf["config"]) if conf.get("config") else None))
    oldest = datetime.min.replace(tzinfo=timezone.utc)
    return sorted(merged, key=lambda r: _aware(r.start or r.end) or oldest, reverse=True)


def _aware(t: datetime | None) -> datetime | None:
    return t.replace(tzinfo=timezone.utc) if t is not None and t.tzinfo is None else t
