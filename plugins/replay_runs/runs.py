"""Replay runs as the page lists them, read from what the runs left on disk (no Spark, no per-row reads).

An output folder (cfg.output.path) is any folder under the root holding a replay's `counts/` dataset or an Airflow
run record (`_airflow/<run_id>/report.json`, written by event_replay.orchestration.report). Per output folder:
- one row per Airflow run record (job = the record's config file, partitions from the report), else one row for the
  folder itself (a `replay run` from the CLI);
- counts (counts.py): rows read from the tiny `counts/` dataset; firings, late rows and quarantined rows from the
  Parquet footers (or the run report's totals, which count them the same way: event_replay.orchestration.report);
- DQ: dq.py (the run report, else `data_quality.json`, else the Data Docs);
- artifacts: `_data_docs/index.html` and `why_report/` (event_replay.why) when present; the tuning results and
  the comparison with the live output: artifacts.py;
- progress of an Airflow run (progress.py): partitions done / planned and the one replaying now; once its report
  is written, how long each step took and which one failed (the report's `steps`: event_replay.orchestration.steps);
- the run record (`run.json`, event_replay.orchestration.record): the project's version and commit, the config;
  a cancel (`cancelled.json`, event_replay.orchestration.cancel): "cancelled after partition i of n"; the run a
  run waits for at the output (its record's `waiting`: orchestration/turn.py) and the runs that had already
  committed its partitions (`skipped`: orchestration/committed.py), turn_notes.
A run folder outside the root (its output elsewhere) is read by the same airflow_row once the Airflow DB names it
(requested.py); its keys are places.py's.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from event_replay.layout import AIRFLOW_FOLDER, CANCEL_FILE, COUNTS, DOCS_FOLDER, PLAN_FILE, RECORD_FILE, \
    REPORT_HTML_FILE, WHY_FOLDER, WHY_SUMMARY_FILE

from .artifacts import LiveAgreement, has_tuning, live_agreement
from .counts import num_rows, summed_counts
from .dq import docs_outcome, run_dq
from .places import key_of
from .progress import progress, read_json

MAX_DEPTH = 4  # output folders are searched this deep under the root: enough for out/<job>/<variant>
ROOT_VARIABLE, ROOT_ENV = "replay_runs_root", "REPLAY_RUNS_ROOT"
DEFAULT_ROOT = Path(__file__).resolve().parents[2] / "out"  # <project>/plugins/replay_runs/runs.py -> <project>/out


def runs_root() -> Path:
    """The Airflow Variable `replay_runs_root` if set, else env REPLAY_RUNS_ROOT, else the project's out/."""
    try:
        from airflow.models import Variable

        value = Variable.get(ROOT_VARIABLE, default_var=None)
    except Exception:  # no metadata DB (unit tests, CLI use): the env and the default still apply
        value = None
    return Path(value or os.environ.get(ROOT_ENV) or DEFAULT_ROOT).resolve()


@dataclass
class RunRow:
    output: str | None  # the output folder, relative to the root (POSIX); None: an Airflow run that left no folder
    run_id: str | None  # Airflow run id, None for a CLI run
    job: str
    partitions: list[str]
    rows_read: int | None
    firings: int | None
    late_rows: int | None
    quarantined: int | None
    dq: str  # "pass" | "fail" | "not run"
    dq_detail: str = ""
    reports: str | None = None  # where the run's why_report/ and _data_docs/ are, relative to the root
    has_docs: bool = False
    has_why: bool = False
    has_tuning: bool = False
    has_report: bool = False  # the run report as a page (`_airflow/<run>/report.html`)
    dag_id: str | None = None
    state: str | None = None  # the Airflow run's state (dagruns.py); "done" for a CLI run
    start: datetime | None = None
    end: datetime | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    planned: list[str] = field(default_factory=list)  # the partitions the run replays, in order (its plan)
    done: int | None = None  # how many of them are replayed and committed (None: no progress record)
    current: str | None = None  # the partition its replay job is on (or stopped in), None when no job is on
    reason: str | None = None  # why it failed (or was skipped, cancelled), in one line; a dry run's findings
    dry_run: bool = False
    config_file: str | None = None  # the config the run was asked for (the form's field)
    version: str | None = None  # the project's version and commit that ran it (its run record)
    has_record: bool = False
    dq_off: bool = False  # the run does not check data quality (nor write a why-report)
    live: LiveAgreement | None = None  # the comparison with the live output (<reports>/compare/), None: not compared
    waiting: str | None = None  # what the run waits for before its replay goes on (turn_notes)
    committed_by: list[str] = field(default_factory=list)  # "X..Y (n partitions) already committed by run R"
    steps: list[dict[str, Any]] = field(default_factory=list)  # each task's outcome and seconds (the run report's)

    @property
    def progress(self) -> str | None:
        """"2/3" (partitions done / planned), None without a plan."""
        return f"{self.done or 0}/{len(self.planned)}" if self.planned else None

    @property
    def anchor(self) -> str:
        """The id of the run's row on the page (the target of the "Replay runs" extra link)."""
        return "run-" + safe_run_id(self.run_id or self.output or "")


def safe_run_id(run_id: str) -> str:
    """The run's folder name: orchestration.params.run_dir's rule (kept here: the plugin imports no project code)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", run_id).strip("_") or "run"


def output_folders(root: Path) -> list[Path]:
    found: list[Path] = []

    def walk(d: Path, depth: int) -> None:
        try:
            children = sorted(c for c in d.iterdir() if c.is_dir() and not c.is_symlink())
        except OSError:
            return
        names = {c.name for c in children}
        if COUNTS in names or AIRFLOW_FOLDER in names:
            found.append(d)
            return  # an output folder's own datasets are not searched further
        if depth < MAX_DEPTH:
            for c in children:
                if not c.name.startswith((".", "_")):
                    walk(c, depth + 1)

    if root.is_dir():
        walk(root, 0)
    return found


def _mtime(path: Path) -> datetime | None:
    try:
        return datetime.fromtimestamp(path.stat().st_mtime, timezone.utc)
    except OSError:
        return None


def airflow_row(root: Path, out: Path, run: Path) -> RunRow:
    """One Airflow run folder `run` of the output `out` (under the root or not: places.py keys): its report.json when
    the run got that far, else what its tasks left (the effective config of validate, the done markers of the
    replay, the data-quality job's result): a failed run is listed too."""
    report = read_json(run / "report.json")
    prog = progress(out, run, report)
    parts = [p["partition"] for p in report.get("partitions", [])] or prog.done
    counts = summed_counts(out / COUNTS, parts) if parts else {}
    totals = report.get("totals", {})
    docs, why = run / DOCS_FOLDER, run / WHY_FOLDER
    dq = run_dq(report, run)
    record = read_json(run / RECORD_FILE)
    rel = key_of(root, out)
    return RunRow(output=rel, run_id=report.get("run_id") or run.name, job=report.get("config_file") or out.name,
                  partitions=parts, rows_read=counts.get("rows_read"),
                  firings=totals.get("windows", num_rows(out / "windows", parts) if parts else None),
                  late_rows=totals.get("late_events", num_rows(out / "late_events", parts) if parts else None),
                  quarantined=totals.get("quarantine", num_rows(out / "quarantine", parts) if parts else None),
                  dq=dq[0], dq_detail=dq[1],
                  reports=key_of(root, run), has_docs=(docs / "index.html").is_file(),
                  has_why=(why / WHY_SUMMARY_FILE).is_file(), has_tuning=has_tuning(out),
                  has_report=(run / REPORT_HTML_FILE).is_file(), dag_id=report.get("dag_id"),
                  state="success" if report.get("complete") else None, start=_mtime(run / "job.yaml"),
                  end=_mtime(run / "report.json"), extra={"complete": report.get("complete")},
                  planned=prog.planned, done=len(prog.done) if prog.planned else None, current=prog.current,
                  reason=_cancelled(run, report, prog),
                  config_file=(record.get("config") or {}).get("file") or report.get("config_file"),
                  version=_version(record.get("project") or {}), has_record=bool(record),
                  dq_off=read_json(run / PLAN_FILE).get("run_data_quality") is False,
                  live=live_agreement(run), steps=[x for x in report.get("steps") or [] if isinstance(x, dict)],
                  **turn_notes(record))


def turn_notes(record: dict[str, Any]) -> dict[str, Any]:
    """From a run record: what the run waits for (`waiting`: another run's turn at the output, or a live Spark
    driver's lock; null once it goes on) and, when it replayed nothing, by which runs its partitions were already
    committed (`skipped.committed_by`: {run id: partitions})."""
    note = record.get("waiting") if isinstance(record.get("waiting"), dict) else None
    waiting = None
    if note and note.get("for"):
        waiting = f"waiting for run {note['for']}: it holds the output"
    elif note:
        waiting = f"waiting for {note.get('holder') or 'a Spark driver'}: it holds the job's lock"
    by_run = (record.get("skipped") or {}).get("committed_by") if isinstance(record.get("skipped"), dict) else None
    committed = [f"{ps[0]}..{ps[-1]} ({len(ps)} partition{'s' if len(ps) != 1 else ''}) already committed by run {run}"
                 for run, ps in (by_run or {}).items() if isinstance(ps, list) and ps]
    return {"waiting": waiting, "committed_by": committed}


def _cancelled(run: Path, report: dict[str, Any], prog) -> str | None:
    """"cancelled after partition i of n" when the replay task's on_kill left its record (and the run is not done)."""
    if not (run / CANCEL_FILE).is_file() or report.get("complete"):
        return None
    n = len(prog.planned)
    return (f"cancelled after partition {len(prog.done)} of {n}" if prog.done
            else f"cancelled before its first partition (0 of {n})")


def _version(project: dict[str, Any]) -> str | None:
    """`0.1.0 46a2f0e` (`+` when the checkout had changes), from a run record's project."""
    if not project.get("version") and not project.get("commit"):
        return None
    commit = (project.get("commit") or "")[:7]
    return " ".join(x for x in (project.get("version"), commit + ("+" if project.get("dirty") else "")) if x)


def _cli_row(out: Path, rel: str, docs_dq: tuple[str, str], has_tuning: bool) -> RunRow:
    counts = summed_counts(out / COUNTS)
    parts = sorted({p.name[3:] for p in (out / "windows").glob("dt=*")}) if (out / "windows").is_dir() else []
    return RunRow(output=rel, run_id=None, job=out.name, partitions=parts, rows_read=counts.get("rows_read"),
                  firings=num_rows(out / "windows"), late_rows=num_rows(out / "late_events"),
                  quarantined=num_rows(out / "quarantine"), dq=docs_dq[0],
                  dq_detail=docs_dq[1], reports=rel, has_docs=(out / DOCS_FOLDER / "index.html").is_file(),
                  has_why=(out / WHY_FOLDER / WHY_SUMMARY_FILE).is_file(), has_tuning=has_tuning, state="done",
                  end=_mtime(out / COUNTS), live=live_agreement(out))


def list_runs(root: Path) -> list[RunRow]:
    """Every run the folders under `root` record: one row per Airflow run folder (`_airflow/<run_id>/`), and one for
    an output folder written by `replay run` from the CLI (its reports next to the outputs)."""
    rows: list[RunRow] = []
    for out in output_folders(root):
        rel = out.relative_to(root).as_posix() if out != root else "."
        docs_dq = docs_outcome(out / DOCS_FOLDER)
        runs = sorted(d for d in (out / AIRFLOW_FOLDER).iterdir() if d.is_dir()) \
            if (out / AIRFLOW_FOLDER).is_dir() else []
        rows += [airflow_row(root, out, run) for run in runs]
        if (out / COUNTS).is_dir() and ((out / WHY_FOLDER).is_dir() or (out / DOCS_FOLDER).is_dir() or not runs):
            rows.append(_cli_row(out, rel, docs_dq, has_tuning(out)))
    return rows
