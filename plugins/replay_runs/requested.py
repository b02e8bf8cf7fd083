"""Rows for the backfill DAGs' runs the walk of the runs root did not find, from where their validate task said they
write (dagruns.DagRunInfo.request: the config's output.path and the run folder):
- a run whose output is outside the root (or deeper than the walk goes): its run folder, read as any other
  (runs.airflow_row: partitions committed, progress, DQ, links), its keys outside the root (places.py);
- a dry run, which writes no run folder: its output and which of the partitions it looked at the output has
  committed now (every dataset has the partition's folder, as the dry run itself counts them);
- a run refused or failed before it wrote its folder: its output, if validate got that far.
Without a validate result (a request refused by validate itself) the DB's own row stands (dagruns.merge).
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Iterable

from event_replay.io.fs import is_local, local_path
from event_replay.io.partition_folders import folder_of
from event_replay.layout import DATASETS

from .dagruns import DagRunInfo, DRY_RUN_KEY
from .places import key_of
from .runs import RunRow, airflow_row, safe_run_id


def requested_rows(root: Path, dag_runs: Iterable[DagRunInfo], found: Iterable[RunRow]) -> list[RunRow]:
    """A row for each DB run with a validate result and no row in `found` (the rows of the root's folders)."""
    seen = {safe_run_id(r.run_id) for r in found if r.run_id}
    rows = []
    for d in dag_runs:
        if safe_run_id(d.run_id) in seen or not d.request.get("output_path"):
            continue
        row = _row(root, d)
        config = d.request.get("config_file")
        rows.append(replace(row, run_id=d.run_id, config_file=row.config_file or (str(config) if config else None)))
    return rows


def outside_folders(root: Path, dag_runs: Iterable[DagRunInfo]) -> list[Path]:
    """The local outputs and run folders the DB's runs name outside the root: the only places outside it the page
    reads and serves (places.py)."""
    folders = []
    for d in dag_runs:
        for key in ("output_path", "run_dir"):
            path = d.request.get(key)
            if path and is_local(str(path)):
                p = Path(local_path(str(path))).resolve()
                if not p.is_relative_to(root):
                    folders.append(p)
    return folders


def _row(root: Path, d: DagRunInfo) -> RunRow:
    output, run_dir = str(d.request["output_path"]), d.request.get("run_dir")
    if not is_local(output):  # a remote output: named, not looked at
        return _bare(d, output, [])
    out = Path(local_path(output)).resolve()
    if run_dir and Path(run_dir).is_dir() and not _is_dry(d):
        return airflow_row(root, out, Path(run_dir).resolve())
    return _bare(d, key_of(root, out), committed(out, _looked_at(d)))


def _is_dry(d: DagRunInfo) -> bool:
    return bool(d.request.get("dry_run")) or DRY_RUN_KEY in d.notes


def _looked_at(d: DagRunInfo) -> list[str]:
    """The partitions a dry run listed, else none (a run that never got to plan)."""
    dry = d.notes.get(DRY_RUN_KEY)
    parts = (dry.get("dry_run") or {}).get("partitions") if isinstance(dry, dict) else None
    return [str(p["partition"]) for p in parts or [] if isinstance(p, dict) and p.get("partition")]


def committed(out: Path, partitions: list[str]) -> list[str]:
    """Those of `partitions` the output holds: a non-empty folder in every dataset (dry_run.py's rule)."""
    def has(pid: str) -> bool:
        folders = [out / ds / folder_of(pid) for ds in DATASETS]
        return all(f.is_dir() and any(f.iterdir()) for f in folders)

    return [p for p in partitions if has(p)]


def _bare(d: DagRunInfo, output: str, done: list[str]) -> RunRow:
    """A run with no run folder: its output, the partitions it looked at and how many of them are committed."""
    parts = _looked_at(d)
    return RunRow(output=output, run_id=d.run_id, job=str(d.request.get("config_file") or "-"), partitions=parts,
                  rows_read=None, firings=None, late_rows=None, quarantined=None, dq="not run",
                  extra={"requested": [d.request.get("start"), d.request.get("end")], "committed": len(done)},
                  dry_run=_is_dry(d))
