"""Replay runs as the page lists them, read from what the runs left on disk (no Spark, no per-row reads).

An output folder (cfg.output.path) is any folder under the root holding a replay's `counts/` dataset or an Airflow
run record (`_airflow/<run_id>/report.json`, written by event_replay.orchestration.report). Per output folder:
- one row per Airflow run record (job = the record's config file, partitions from the report), else one row for the
  folder itself (a `replay run` from the CLI);
- counts: rows read from the tiny `counts/` dataset; firings, late rows and quarantined rows from the Parquet footers
  of `windows/`, `late_events/` and `quarantine/` (or the run report's totals, which count them the same way:
  event_replay.orchestration.report), so every row of the page counts a figure as the report does;
- DQ: dq.py (the run report, else `data_quality.json`, else the Data Docs);
- artifacts: `_data_docs/index.html` and `why_report/` (event_replay.why) when present, and the
  what-if tuning results `_tuning/<grid>/tuning.json` (event_replay.tuning, `replay tune`);
- progress of an Airflow run (progress.py): partitions done / planned and the one replaying now;
- the run record (`run.json`, event_replay.orchestration.record): the project's version and commit, the config;
  a cancel (`cancelled.json`, event_replay.orchestration.cancel): "cancelled after partition i of n".
A run folder outside the root (its output elsewhere) is read by the same airflow_row once the Airflow DB names it
(requested.py); its keys are places.py's.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from event_replay.compare.summary import diagnosis
from event_replay.io.partition_folders import folder_of
from event_replay.layout import AIRFLOW_FOLDER, CANCEL_FILE, COMPARE_FOLDER, COMPARE_SUMMARY_FILE, COUNTS, \
    DOCS_FOLDER, PLAN_FILE, RECORD_FILE, REPORT_HTML_FILE, TUNING_FOLDER, TUNING_JSON_FILE, WHY_FOLDER, WHY_SUMMARY_FILE

from .dq import docs_outcome, run_dq
from .places import folder, key_of, safe_path
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


def _parquet_files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return [f for f in sorted(folder.rglob("*.parquet"))
            if not any(p.startswith(("_", ".")) for p in f.relative_to(folder).parts)]


def _in(relative: Path, partitions: list[str]) -> bool:
    """A dataset's file lies in one of the partitions: days (`dt=D/...`) and hours (`dt=D/hour=HH/...`) alike."""
    folders = {folder_of(p) for p in partitions}
    parts = relative.parts
    return "/".join(parts[:1]) in folders or "/".join(parts[:2]) in folders


def _num_rows(folder: Path, partitions: list[str] | None = None) -> int | None:
    import pyarrow.parquet as pq

    files = _parquet_files(folder)
    if partitions is not None:
        files = [f for f in files if _in(f.relative_to(folder), partitions)]
    if not folder.is_dir():
        return None
    return sum(pq.ParquetFile(f).metadata.num_rows for f in files)


def _counts(folder: Path, partitions: list[str] | None = None) -> dict[str, int]:
    """Sums of the one-row-per-write `counts/` dataset (rows_read, quarantined_rows, ...)."""
    import pyarrow.parquet as pq

    total: dict[str, int] = {}
    for f in _parquet_files(folder):
        if partitions is not None and not _in(f.relative_to(folder), partitions):
            continue
        for row in pq.read_table(f).to_pylist():
            for k, v in row.items():
                if isinstance(v, int):
                    total[k] = total.get(k, 0) + v
    return total


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


@dataclass(frozen=True)
class LiveAgreement:
    """What the runs page shows of `replay compare`'s result: the agreement % against its threshold."""
    pct: float
    min_pct: float
    windows: int
    differing: int
    diagnosis: str | None = None  # its headline (compare.summary.diagnosis: what every view of it leads with)

    @property
    def ok(self) -> bool:
        return self.pct >= self.min_pct


def live_agreement(folder: Path) -> LiveAgreement | None:
    """`replay compare`'s result in `<folder>/compare/summary.json` (the run's compare_live task or a CLI
    comparison), None when there is none."""
    s = read_json(folder / COMPARE_FOLDER / COMPARE_SUMMARY_FILE)
    t = s.get("totals") or {}
    value = t.get("agreement_pct")
    if not isinstance(value, (int, float)):
        return None
    threshold = s.get("min_agreement_pct")
    found = diagnosis(s)
    return LiveAgreement(float(value), float(threshold) if isinstance(threshold, (int, float)) else 100.0,
                         int(t.get("windows") or 0), int(t.get("differing") or 0),
                         found["headline"] if found else None)


def airflow_row(root: Path, out: Path, run: Path) -> RunRow:
    """One Airflow run folder `run` of the output `out` (under the root or not: places.py keys): its report.json when
    the run got that far, else what its tasks left (the effective config of validate, the done markers of the
    replay, the data-quality job's result): a failed run is listed too."""
    report = read_json(run / "report.json")
    prog = progress(out, run, report)
    parts = [p["partition"] for p in report.get("partitions", [])] or prog.done
    counts = _counts(out / COUNTS, parts) if parts else {}
    totals = report.get("totals", {})
    docs, why = run / DOCS_FOLDER, run / WHY_FOLDER
    dq = run_dq(report, run)
    record = read_json(run / RECORD_FILE)
    rel = key_of(root, out)
    return RunRow(output=rel, run_id=report.get("run_id") or run.name, job=report.get("config_file") or out.name,
                  partitions=parts, rows_read=counts.get("rows_read"),
                  firings=totals.get("windows", _num_rows(out / "windows", parts) if parts else None),
                  late_rows=totals.get("late_events", _num_rows(out / "late_events", parts) if parts else None),
                  quarantined=totals.get("quarantine", _num_rows(out / "quarantine", parts) if parts else None),
                  dq=dq[0], dq_detail=dq[1],
                  reports=key_of(root, run), has_docs=(docs / "index.html").is_file(),
                  has_why=(why / WHY_SUMMARY_FILE).is_file(), has_tuning=_has_tuning(out),
                  has_report=(run / REPORT_HTML_FILE).is_file(), dag_id=report.get("dag_id"),
                  state="success" if report.get("complete") else None, start=_mtime(run / "job.yaml"),
                  end=_mtime(run / "report.json"), extra={"complete": report.get("complete")},
                  planned=prog.planned, done=len(prog.done) if prog.planned else None, current=prog.current,
                  reason=_cancelled(run, report, prog),
                  config_file=(record.get("config") or {}).get("file") or report.get("config_file"),
                  version=_version(record.get("project") or {}), has_record=bool(record),
                  dq_off=read_json(run / PLAN_FILE).get("run_data_quality") is False,
                  live=live_agreement(run))


def _cancelled(run: Path, report: dict[str, Any], prog) -> str | None:
    """"cancelled after partition i of n" when the replay task's on_kill left its record (and the run is not done)."""
    if not (run / CANCEL_FILE).is_file() or report.get("complete"):
        return None
    n = len(prog.planned)
    return (f"cancelled after partition {len(prog.done)} of {n}" if prog.done
            else f"cancelled before its first partition (0 of {n})")


def _has_tuning(out: Path) -> bool:
    return (out / TUNING_FOLDER).is_dir() and any((out / TUNING_FOLDER).glob(f"[!.]*/{TUNING_JSON_FILE}"))


def _version(project: dict[str, Any]) -> str | None:
    """`0.1.0 46a2f0e` (`+` when the checkout had changes), from a run record's project."""
    if not project.get("version") and not project.get("commit"):
        return None
    commit = (project.get("commit") or "")[:7]
    return " ".join(x for x in (project.get("version"), commit + ("+" if project.get("dirty") else "")) if x)


def _cli_row(out: Path, rel: str, docs_dq: tuple[str, str], has_tuning: bool) -> RunRow:
    counts = _counts(out / COUNTS)
    parts = sorted({p.name[3:] for p in (out / "windows").glob("dt=*")}) if (out / "windows").is_dir() else []
    return RunRow(output=rel, run_id=None, job=out.name, partitions=parts, rows_read=counts.get("rows_read"),
                  firings=_num_rows(out / "windows"), late_rows=_num_rows(out / "late_events"),
                  quarantined=_num_rows(out / "quarantine"), dq=docs_dq[0],
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
            rows.append(_cli_row(out, rel, docs_dq, _has_tuning(out)))
    return rows


def run_record(root: Path, reports: str, outside: Iterable[Path] = ()) -> dict[str, Any] | None:
    """The run record (`run.json`) of an Airflow run folder `<output>/_airflow/<run>` (a key: places.py)."""
    parts = reports.split("/")
    if len(parts) < 2 or parts[-2] != AIRFLOW_FOLDER or any(p in ("", "..", ".") for p in parts):
        return None
    run = folder(root, reports, outside)
    if run is None or not (run / RECORD_FILE).is_file():
        return None
    return read_json(run / RECORD_FILE) or None


def why_summary(root: Path, reports: str, outside: Iterable[Path] = ()) -> dict[str, Any] | None:
    """The summary.json of `<reports>/why_report/` (reports: an output folder, or one of its Airflow run folders)."""
    f = safe_path(root, f"{reports}/{WHY_FOLDER}/{WHY_SUMMARY_FILE}", outside)
    if f is None or not f.is_file():
        return None
    return json.loads(f.read_text())


def tuning_results(root: Path, output: str, outside: Iterable[Path] = ()) -> list[dict[str, Any]]:
    """The what-if tuning results of an output folder (`_tuning/<grid>/tuning.json`), by grid name."""
    grids = safe_path(root, f"{output}/{TUNING_FOLDER}/x", outside)
    if grids is None or not grids.parent.is_dir():
        return []
    results = []
    for f in sorted(grids.parent.glob(f"[!.]*/{TUNING_JSON_FILE}")):
        try:
            results.append({**json.loads(f.read_text()), "folder": f.parent.name})
        except (OSError, ValueError):
            continue
    return results
